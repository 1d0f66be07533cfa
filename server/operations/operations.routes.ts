// GET /api/v1/operations/{id} and POST /api/v1/operations/{id}/cancel.
import { anyBearer } from '../http/auth';
import { mutation, query, reply } from '../http/route';
import { operationView } from './worker';

export const getOperation = query({ auth: anyBearer, area: 'content' }, async (ctx) => {
  const op = await ctx.services.operations.get(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(operationView(op));
});

export const cancelOperation = mutation(
  { auth: anyBearer, area: 'content', idempotency: 'required' },
  async (ctx, work) => {
    const op = await ctx.services.operations.cancel(
      work,
      ctx.principal.tenantId,
      ctx.params.id!,
      ctx.now,
      ctx.requestId,
    );
    return reply.ok(operationView(op));
  },
);
