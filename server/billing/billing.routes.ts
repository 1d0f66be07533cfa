// GET /api/v1/billing/balance and /statement (Model P), and the dashboard's balance.
import { BillingStatementQuery, STATEMENT_DEFAULT_LIMIT } from '../../sdk/contract/billing';
import type { DashboardBalance } from '../../sdk/contract/people';
import { projectBearer } from '../http/auth';
import { query, reply } from '../http/route';
import { projectMemberSession } from '../sign-in/dashboard.auth';
import { billingBalance, billingStatement, wholeCreditBalance } from './billing';

export const getBalance = query({ auth: projectBearer, area: 'project' }, async (ctx) =>
  reply.ok(await billingBalance(ctx.services.store.db, ctx.principal.tenantId, ctx.now), {
    headers: { 'Cache-Control': 'private, no-store' },
  }),
);

export const getStatement = query({ auth: projectBearer, area: 'project', query: BillingStatementQuery }, async (ctx) =>
  reply.ok(
    await billingStatement(ctx.services.store.db, ctx.principal.tenantId, {
      cursor: ctx.query.cursor,
      limit: ctx.query.limit ?? STATEMENT_DEFAULT_LIMIT,
    }),
    { headers: { 'Cache-Control': 'private, no-store' } },
  ),
);

export const getDashboardBalance = query({ auth: projectMemberSession }, async (ctx) => {
  const body: DashboardBalance = await wholeCreditBalance(ctx.services.store, ctx.principal.project!.id, ctx.now);
  return reply.ok(body, { headers: { 'Cache-Control': 'private, no-store' } });
});
