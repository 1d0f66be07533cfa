// POST /api/v1/screens/{id}/recovery/confirm (Model P): the owner moves the screen to the device
// that offered to take it over (screens/recovery.ts holds the rules).
import { projectBearer } from '../http/auth';
import { mutation, reply } from '../http/route';
import { confirmRecovery } from './recovery';
import { findScreen, viewOf } from './screens';

export const confirmScreenRecovery = mutation(
  { auth: projectBearer, area: 'screens', ifMatch: 'optional', idempotency: 'optional' },
  async (ctx, work) => {
    const before = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(before.revision);
    const after = await confirmRecovery(ctx.services, work, before, ctx.now, ctx.requestId);
    return reply.ok(await viewOf(ctx.services, work.db, after), { revision: after.revision });
  },
);
