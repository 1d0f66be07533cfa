// Billing (Model P): the credit ledger's balance and its statement, amounts in millicredits as
// canonical decimal strings.
import type { BillingBalance, BillingStatement } from '../contract/billing';
import type { ClientTransport } from './transport';

export function billingRoutes(t: ClientTransport) {
  return {
    balance: () => t.request<BillingBalance>({ method: 'GET', path: '/api/v1/billing/balance' }),
    /** Newest day first, by kind within a day; `limit` 1–200 (default 50). */
    statement: (query: { cursor?: string; limit?: number } = {}) =>
      t.request<BillingStatement>({ method: 'GET', path: '/api/v1/billing/statement', query: { ...query } }),
  };
}
