// Screens on the control plane: list, read, patch, and the lifecycle of the spec's Screen table
// (archive, unarchive, delete, public-id rotate, credential revoke) plus reload.
import { ScreenListQuery, ScreenPatch } from '../../sdk/contract/screens';
import { accountBearer, anyBearer, projectBearer, type TenantPrincipal } from '../http/auth';
import { BUDGETS, projectBudget, screenBudget, screenControlIpBudget } from '../fleet/screen-actions';
import { clientIp } from '../http/client-ip';
import { admit } from '../http/rate-limit';
import { mutation, query, reply, type AnyContext, type Authenticator, type Mode } from '../http/route';
import type { Work } from '../store/store';
import * as changes from './screen-changes';
import { findScreen, screenList, viewOf } from './screens';
import type { ScreenTable } from './screens.tables';

const PRIVATE_NO_STORE = { 'Cache-Control': 'private, no-store' };

export const listScreens = query({ auth: anyBearer, area: 'screens', query: ScreenListQuery }, async (ctx) => {
  return reply.ok(await screenList(ctx.services, ctx.services.store.db, ctx.principal.tenantId, ctx.query));
});

export const getScreen = query({ auth: anyBearer, area: 'screens' }, async (ctx) => {
  const { db } = ctx.services.store;
  const row = await findScreen(db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(await viewOf(ctx.services, db, row), { revision: row.revision });
});

export const patchScreen = mutation(
  { auth: anyBearer, area: 'screens', body: ScreenPatch, ifMatch: 'required-in-A', idempotency: 'required-in-A' },
  async (ctx, work) => {
    const before = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(before.revision);
    const after = await changes.patchScreen(changeRequest(ctx, work), before, ctx.body);
    return reply.ok(await viewOf(ctx.services, work.db, after), { revision: after.revision });
  },
);

/** The request a change is recorded under. */
function changeRequest(ctx: AnyContext, work: Work): changes.ChangeRequest {
  return { events: ctx.services.events, work, now: ctx.now, requestId: ctx.requestId };
}

/** Runs a lifecycle transition on a screen of the caller's tenant and answers the Screen. */
function transition(
  policy: { auth: Authenticator<TenantPrincipal>; mode: Mode },
  apply: (r: changes.ChangeRequest, before: ScreenTable) => Promise<ScreenTable>,
) {
  return mutation(
    { auth: policy.auth, area: 'screens', ifMatch: policy.mode, idempotency: policy.mode },
    async (ctx, work) => {
      const before = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
      ctx.checkRevision(before.revision);
      const after = await apply(changeRequest(ctx, work), before);
      return reply.ok(await viewOf(ctx.services, work.db, after), { revision: after.revision });
    },
  );
}

export const archiveScreen = transition({ auth: projectBearer, mode: 'optional' }, changes.archiveScreen);
export const unarchiveScreen = transition({ auth: projectBearer, mode: 'optional' }, changes.unarchiveScreen);
export const rotatePublicId = transition({ auth: anyBearer, mode: 'required-in-A' }, changes.rotatePublicId);
export const revokeCredential = transition({ auth: accountBearer, mode: 'required' }, changes.revokeCredential);

export const deleteScreen = mutation(
  {
    auth: anyBearer,
    area: 'screens',
    ifMatch: 'required-in-A',
    idempotency: 'required-in-A',
    rateLimits: (ctx) => [screenControlIpBudget(clientIp(ctx))],
  },
  async (ctx, work) => {
    const before = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(before.revision);
    await changes.deleteScreen(changeRequest(ctx, work), before);
    return reply.noContent();
  },
);

export const reloadScreen = mutation(
  {
    auth: projectBearer,
    area: 'screens',
    meter: false, // spec: screen messages are exempt from the credit meter
    ifMatch: 'optional',
    idempotency: 'optional', // exact retries replay the same reload for 24 h (the records' retention)
  },
  async (ctx, work) => {
    const screen = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(screen.revision);
    changes.checkReloadable(screen);
    // Budgets are spent only once the screen is known to be the caller's: requests about another
    // tenant's screen id answer not_found and never spend that screen's budget.
    Object.assign(
      ctx.answerHeaders,
      await admit(
        ctx.services.rateLimiter,
        [projectBudget(BUDGETS.reload, screen.tenant_id), screenBudget(BUDGETS.reload, screen)],
        ctx.now,
      ),
    );
    const body = await changes.requestReload(changeRequest(ctx, work), screen);
    // The screen itself does not change: the ETag is its unchanged revision.
    return reply.accepted(body, { revision: screen.revision, headers: PRIVATE_NO_STORE });
  },
);
