// Screens on the control plane: list, read, patch, and the lifecycle of the spec's Screen table
// (archive, unarchive, delete, public-id rotate, credential revoke) plus reload.
import { ScreenListQuery, ScreenPatch, type ScreenList, type ScreenReloadAccepted } from '../../sdk/contract/screens';
import { isoTime } from '../clock';
import { accountBearer, anyBearer, projectBearer, type TenantPrincipal } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { problem } from '../problem';
import { admit } from '../http/rate-limit';
import {
  mutation,
  query,
  reply,
  type AnyContext,
  type Authenticator,
  type Mode,
  type RequestContext,
} from '../http/route';
import { newId } from '../keys';
import { revokeDevices, revokeRuntimeSessions } from '../pairing/pairing';
import { checkAssignable } from '../playlists/playlists';
import { admitScreen, releaseScreen } from '../tenants/tenants';
import { changeScreen, findScreen, newPublicId, screenView, tagsOf, viewOf, type ScreenChange } from './screens';
import type { Work } from '../store/store';
import type { ScreenTable } from './screens.tables';
import { isIanaZoneName } from './time-zones';
import { lockstepChanges } from './screen-sync';

/** spec: a reload expires ten minutes after it was requested (players ignore it afterwards). */
export const RELOAD_TTL_MS = 10 * 60_000;
const RELOADS_PER_PROJECT_PER_MINUTE = 600; // spec fleet budgets: reload-project 600 ...
const RELOADS_PER_SCREEN_PER_MINUTE = 6; // ... with reload-screen 6
const SCREEN_CONTROL_PER_IP_PER_MINUTE = 60; // spec: screen-control-ip, shared with single-screen DELETE

const PRIVATE_NO_STORE = { 'Cache-Control': 'private, no-store' };

export const listScreens = query({ auth: anyBearer, area: 'screens', query: ScreenListQuery }, async (ctx) => {
  const { db } = ctx.services.store;
  let q = db.selectFrom('screens').selectAll().where('tenant_id', '=', ctx.principal.tenantId);
  q = ctx.query.state ? q.where('state', '=', ctx.query.state) : q.where('state', 'in', ['pairing_pending', 'active']);
  if (ctx.query.tag) {
    q = q.where(
      'id',
      'in',
      db
        .selectFrom('screen_tags')
        .select('screen_id')
        .where('tenant_id', '=', ctx.principal.tenantId)
        .where('tag', '=', ctx.query.tag),
    );
  }
  const rows = await q.orderBy('created_at').orderBy('id').execute();
  const tags = await tagsOf(
    db,
    rows.map((r) => r.id),
  );
  const body: ScreenList = { items: rows.map((r) => screenView(ctx.services, r, tags.get(r.id)!)) };
  return reply.ok(body);
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
    const patch = ctx.body;
    const change: ScreenChange & { set: NonNullable<ScreenChange['set']> } = { set: {}, changes: [] };
    let remint: string | undefined;

    // Only what differs from the screen is written: a field sent with its current value changes
    // nothing, and a PATCH that changes nothing bumps nothing (no hidden revision bumps).
    if (patch.name !== undefined && patch.name !== before.label) {
      change.set.label = patch.name;
      change.changes.push('label');
    }
    if (patch.timezone !== undefined && patch.timezone !== before.timezone) {
      if (!isIanaZoneName(patch.timezone)) {
        throw problem('invalid_request', `timezone: "${patch.timezone}" is not an IANA time-zone identifier`, {
          errors: [
            {
              field: 'timezone',
              code: 'invalid',
              detail: 'must be an IANA time-zone identifier such as Europe/Berlin',
            },
          ],
        });
      }
      change.set.timezone = patch.timezone;
      change.changes.push('timezone');
      remint = 'timezone_changed';
    }
    if (patch.playlist_id !== undefined && patch.playlist_id !== before.playlist_id) {
      change.set.playlist_id = patch.playlist_id;
      change.changes.push('playlist_id');
      if (patch.playlist_id !== null)
        await checkAssignable(
          work.db,
          before.tenant_id,
          patch.playlist_id,
          change.set.timezone ?? before.timezone,
          'playlist_id',
        );
      remint = 'playlist_assigned';
    }
    if (lockstepChanges(patch, before, change)) remint ??= 'sync_changed';
    if (patch.tags !== undefined) {
      const tags = [...patch.tags].sort();
      const current = (await tagsOf(work.db, [before.id])).get(before.id)!;
      if (tags.join('\n') !== current.join('\n')) {
        change.tags = tags;
        change.changes.push('tags');
      }
    }
    if (change.changes.length === 0)
      return reply.ok(await viewOf(ctx.services, work.db, before), { revision: before.revision });
    // An archived screen shows dark glass whatever its settings: its manifest is reminted on unarchive.
    if (remint && before.state !== 'archived') change.remint = remint;
    const after = await changeScreen(ctx.services.events, work, before, change, ctx.now, ctx.requestId);
    return reply.ok(await viewOf(ctx.services, work.db, after), { revision: after.revision });
  },
);

type TransitionContext = RequestContext<undefined, Record<string, never>, TenantPrincipal>;

/** Runs a lifecycle transition on a screen of the caller's tenant and answers the Screen. */
function transition(
  policy: { auth: Authenticator<TenantPrincipal>; mode: Mode },
  apply: (ctx: TransitionContext, before: ScreenTable, work: Work) => Promise<ScreenTable>,
) {
  return mutation(
    { auth: policy.auth, area: 'screens', ifMatch: policy.mode, idempotency: policy.mode },
    async (ctx, work) => {
      const before = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
      ctx.checkRevision(before.revision);
      const after = await apply(ctx, before, work);
      return reply.ok(await viewOf(ctx.services, work.db, after), { revision: after.revision });
    },
  );
}

export const archiveScreen = transition({ auth: projectBearer, mode: 'optional' }, async (ctx, before, work) => {
  if (before.state === 'archived') throw problem('resource_conflict', `screen ${before.id} is already archived`);
  await releaseScreen(work.db, before.tenant_id);
  return changeScreen(
    ctx.services.events,
    work,
    before,
    {
      set: { state: 'archived', archived_at: ctx.now },
      changes: ['state'],
      lifecycle: {
        type: 'screen.archived',
        message: 'screen archived: hidden from the default list, glass darkened',
        runtime: true,
      },
      remint: 'archived',
    },
    ctx.now,
    ctx.requestId,
  );
});

export const unarchiveScreen = transition({ auth: projectBearer, mode: 'optional' }, async (ctx, before, work) => {
  if (before.state !== 'archived') throw problem('resource_conflict', `screen ${before.id} is not archived`);
  await admitScreen(work.db, before.tenant_id);
  return changeScreen(
    ctx.services.events,
    work,
    before,
    {
      set: { state: 'active', archived_at: null },
      changes: ['state'],
      lifecycle: {
        type: 'screen.unarchived',
        message: 'screen unarchived: listed again, normal manifest reminted',
        runtime: true,
      },
      remint: 'unarchived',
    },
    ctx.now,
    ctx.requestId,
  );
});

export const rotatePublicId = transition({ auth: anyBearer, mode: 'required-in-A' }, async (ctx, before, work) => {
  await revokeRuntimeSessions(work, before.id, ctx.now);
  const after = await changeScreen(
    ctx.services.events,
    work,
    before,
    {
      set: { public_id: newPublicId() },
      changes: ['public_id', 'content_access_generation'],
      regrant: true,
      lifecycle: {
        type: 'screen.public_id_rotated',
        message: 'public URL rotated; runtime sessions invalidated, device credential kept',
        runtime: true,
      },
    },
    ctx.now,
    ctx.requestId,
  );
  await signalRegrant(ctx, work, after);
  return after;
});

export const revokeCredential = transition({ auth: accountBearer, mode: 'required' }, async (ctx, before, work) => {
  await revokeDevices(work, before.id, ctx.now);
  await revokeRuntimeSessions(work, before.id, ctx.now);
  const after = await changeScreen(
    ctx.services.events,
    work,
    before,
    {
      changes: ['device_credential', 'content_access_generation'],
      regrant: true,
      lifecycle: {
        type: 'screen.credential_revoked',
        message: 'paired device credential and all runtime grants revoked; public URL kept',
      },
    },
    ctx.now,
    ctx.requestId,
  );
  await signalRegrant(ctx, work, after);
  return after;
});

/**
 * spec: after a rotation "live grants are reissued at the new generation for the unchanged manifest
 * revision": the manifest revision stays, players are told to fetch the manifest again.
 */
async function signalRegrant(ctx: AnyContext, work: Work, screen: ScreenTable): Promise<void> {
  await ctx.services.events.append(
    work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      runtime: true,
      type: 'screen.manifest_changed',
      message: 'grants reissued at a new content-access generation',
      resource: { type: 'screen', id: screen.id },
      details: {
        manifest_revision: screen.manifest_revision,
        content_access_generation: screen.content_access_generation,
        reason: 'content_access_regranted',
      },
      requestId: ctx.requestId,
    },
    ctx.now,
  );
}

export const deleteScreen = mutation(
  {
    auth: anyBearer,
    area: 'screens',
    ifMatch: 'required-in-A',
    idempotency: 'required-in-A',
    rateLimits: (ctx) => [
      { name: 'screen-control-ip', limit: SCREEN_CONTROL_PER_IP_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const before = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(before.revision);
    if (before.native_identity) {
      throw problem(
        'screen_archive_required',
        `screen ${before.id} is bound to a native player identity; archive it instead of deleting it`,
      );
    }
    if (before.state !== 'archived') await releaseScreen(work.db, before.tenant_id);
    await revokeDevices(work, before.id, ctx.now);
    await revokeRuntimeSessions(work, before.id, ctx.now);
    // A tombstone refers to nothing: its playlists may be deleted.
    await work.db.deleteFrom('screen_playlist_references').where('screen_id', '=', before.id).execute();
    await changeScreen(
      ctx.services.events,
      work,
      before,
      {
        set: { state: 'deleted', deleted_at: ctx.now },
        changes: ['state'],
        lifecycle: {
          type: 'screen.deleted',
          message: 'screen deleted; its cookies and runtime grants are revoked',
          runtime: true,
        },
      },
      ctx.now,
      ctx.requestId,
    );
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
    if (screen.state === 'pairing_pending')
      throw problem('resource_conflict', `screen ${screen.id} is still pairing_pending; there is no player to reload`);
    // Budgets are spent only once the screen is known to be the caller's: requests about another
    // tenant's screen id answer not_found and never spend that screen's budget.
    Object.assign(
      ctx.answerHeaders,
      admit(
        ctx.services.rateLimiter,
        [
          { name: 'reload-project', limit: RELOADS_PER_PROJECT_PER_MINUTE, windowSeconds: 60, key: screen.tenant_id },
          {
            name: 'reload-screen',
            limit: RELOADS_PER_SCREEN_PER_MINUTE,
            windowSeconds: 60,
            key: `${screen.tenant_id}:${screen.id}`,
          },
        ],
        ctx.now,
      ),
    );
    const body: ScreenReloadAccepted = { reload_id: newId('rld'), expires_at: isoTime(ctx.now + RELOAD_TTL_MS) };
    await ctx.services.events.append(
      work,
      {
        tenantId: screen.tenant_id,
        screenId: screen.id,
        runtime: true,
        type: 'player.reload',
        message: 'reload requested',
        resource: { type: 'screen', id: screen.id },
        details: { reason: 'project', reload_id: body.reload_id, spread_s: 0, expires_at: body.expires_at },
        requestId: ctx.requestId,
      },
      ctx.now,
    );
    // The screen itself does not change: the ETag is its unchanged revision.
    return reply.accepted(body, { revision: screen.revision, headers: PRIVATE_NO_STORE });
  },
);
