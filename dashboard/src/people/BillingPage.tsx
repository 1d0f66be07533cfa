// Billing: the project's credit balance (GET /dashboard/v1/balance, which never debits).
import { useDashboard } from '../app/dashboard-context';
import { Notice, PageHeading } from '../app/PageHeading';
import { useLoaded } from '../app/use-loaded';

export function BillingPage() {
  const { client } = useDashboard();
  const balance = useLoaded(() => client.session.balance(), [client], 'The balance');
  const b = balance.value;
  return (
    <section className="page">
      <PageHeading>Billing</PageHeading>
      <Notice text={balance.error} error />
      {b && (
        <dl className="facts big">
          <dt>Credits left</dt>
          <dd data-testid="credit-remaining">{b.credit_remaining.toLocaleString('en')}</dd>
          <dt>Included each month</dt>
          <dd>{b.credit_included.toLocaleString('en')}</dd>
          <dt>Next grant</dt>
          <dd>{b.credit_reset.slice(0, 10)}</dd>
        </dl>
      )}
      <p className="hint">
        Each request an agent makes to the API costs one credit; the dashboard costs none. The CLI shows the statement (
        <code>marquee billing statement</code>).
      </p>
    </section>
  );
}
