// Billing: the credit balance and the statement of the ledger. Amounts are millicredits as the
// server writes them (canonical decimal strings); the human form shows credits as well.
import type { BillingBalance, BillingStatement } from '../../contract/billing';
import { throughLastPage } from '../all-pages';
import { command } from '../command';
import { fields, formatCredits, lines, table } from '../output';

export const billingCommands = [
  command({
    name: 'billing balance',
    summary: 'show the credit balance, the monthly grant and the floor',
    async run(ctx): Promise<BillingBalance> {
      return (await (await ctx.client()).billing.balance()).data;
    },
    human: (b) => [
      fields(
        ['balance', `${formatCredits(b.balance_millicredits)} credits`],
        ['included each month', `${formatCredits(b.included_millicredits)} credits`],
        ['floor', `${formatCredits(b.floor_millicredits)} credits`],
        ['next grant', b.next_grant_at],
        ['payment rails', b.rails_available ? 'available' : 'not available yet'],
      ),
    ],
  }),
  command({
    name: 'billing statement',
    summary: 'the ledger by UTC day and kind, newest first',
    options: [
      { flags: '--limit <n>', description: 'at most this many rows per page (1 to 200)', parse: 'positive-int' },
      { flags: '--cursor <cursor>', description: 'the next_cursor of the previous page' },
      { flags: '--all', description: 'follow next_cursor to the last page' },
    ],
    async run(ctx): Promise<BillingStatement> {
      const client = await ctx.client();
      const limit = ctx.options.limit as number | undefined;
      const page = async (cursor: string | undefined) => (await client.billing.statement({ limit, cursor })).data;
      const cursor = ctx.options.cursor as string | undefined;
      return ctx.options.all ? throughLastPage(page, cursor) : page(cursor);
    },
    human: (s) => [
      table(
        ['day', 'kind', 'credits', 'entries'],
        s.items.map((e) => [e.day, e.kind, formatCredits(e.amount_millicredits), e.count]),
        'no entries',
      ),
      ...(s.next_cursor ? [lines(`more: --cursor ${s.next_cursor}`)] : []),
    ],
  }),
];
