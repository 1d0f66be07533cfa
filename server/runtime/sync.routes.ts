// Lockstep over the runtime plane (issue 15). A page no member can end alone (an application that
// advances on its own) moves the whole group by a barrier, "page P at instant T": for browser
// players the server is the group's lead. The first advance of a timeline's turn becomes the
// barrier, written as a durable `screen.sync_barrier` on the runtime stream of every member; the
// same advance asked by the other members (each shows the same application) gets that barrier
// back. Kiosks on a LAN do the same among themselves (packaging/kiosk/lan-lockstep.ts), with the
// key answered here: derived per project and group, handed only to native (kiosk) sessions.
import type { SyncAdvanceAccepted, SyncBarrier, SyncLanKey } from '../../sdk/contract/runtime';
import { SyncAdvance } from '../../sdk/contract/runtime';
import { isoTime } from '../clock';
import { mutation, query, reply, type Reply } from '../http/route';
import { isNativeRequest } from '../pairing/native.auth';
import { pairedRuntimeCookie, runtimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import { problem } from '../problem';
import { announceBarrier, lastBarrier, lockGroupBarrier, screenSyncGroup } from './sync-barriers';

/**
 * The barrier's instant is this far ahead: the event crosses the runtime stream (SSE, the internet)
 * and members prepare the page before it. A member that hears it late shows the page late, on the
 * group's timeline from then on.
 */
export const RUNTIME_BARRIER_LEAD_MS = 1000;
/**
 * An advance of the same timeline before the last barrier's instant plus this is the same advance
 * asked by another member (each member's application asks): it gets that barrier. An application
 * page that asks again this soon after it came on glass waits for that.
 */
export const ADVANCE_QUIET_MS = 2000;
/** Every member of a group asks once a turn; pages turn every few seconds at the fastest. */
const ADVANCES_PER_SCREEN_PER_MINUTE = 120;
const ADVANCE_BODY_LIMIT = 1024;
/** A barrier is looked for this far back only (older ones are long past their quiet time). */
const BARRIER_LOOKBACK_MS = 60_000;

export const postAdvance = mutation(
  {
    auth: pairedRuntimeCookie,
    body: SyncAdvance,
    bodyLimit: ADVANCE_BODY_LIMIT,
    rateLimits: (ctx) => [
      {
        name: 'runtime-sync-advance',
        limit: ADVANCES_PER_SCREEN_PER_MINUTE,
        windowSeconds: 60,
        key: (ctx.principal as RuntimePrincipal).screenId,
      },
    ],
  },
  async (ctx, work): Promise<Reply> => {
    const { principal, now, services } = ctx;
    const screen = await screenSyncGroup(work.db, principal.screenId);
    if (!screen.sync_group || screen.state !== 'active')
      throw problem('resource_conflict', 'this screen plays in no sync group; it ends its pages itself');
    const group = screen.sync_group;
    await lockGroupBarrier(work, principal.tenantId, group);
    const previous = await lastBarrier(work.db, principal.screenId, now - BARRIER_LOOKBACK_MS);
    if (previous && previous.timeline === ctx.body.timeline && now < Date.parse(previous.at) + ADVANCE_QUIET_MS) {
      const body: SyncAdvanceAccepted = { barrier: previous };
      return reply.accepted(body, { headers: { 'Cache-Control': 'no-store' } });
    }
    const barrier = {
      timeline: ctx.body.timeline,
      page_index: ctx.body.page_index,
      at: isoTime(now + RUNTIME_BARRIER_LEAD_MS),
    };
    await announceBarrier(
      services.events,
      work,
      { tenantId: principal.tenantId, group, barrier, requestId: ctx.requestId },
      now,
    );
    const body: SyncAdvanceAccepted = { barrier };
    return reply.accepted(body, { headers: { 'Cache-Control': 'no-store' } });
  },
);

/** A member that starts looks this far back for the group's last barrier (an application page lasts minutes at most). */
const LAST_BARRIER_LOOKBACK_MS = 3600_000;

/**
 * GET /runtime/v1/sync/barrier: the group's last barrier as this screen's stream carried it, for a
 * member that (re)starts after it: it joins the timeline that barrier began, not the epoch's.
 */
export const getBarrier = query({ auth: runtimeCookie }, async (ctx): Promise<Reply> => {
  const last = await lastBarrier(ctx.services.store.db, ctx.principal.screenId, ctx.now - LAST_BARRIER_LOOKBACK_MS);
  const body: SyncBarrier = { barrier: last ?? null };
  return { status: 200, body, headers: { 'Cache-Control': 'no-store' } };
});

export const getLanKey = query({ auth: pairedRuntimeCookie }, async (ctx): Promise<Reply> => {
  // Browser players have no LAN carrier: the key stays with the kiosks (and off public viewers).
  if (!isNativeRequest(ctx)) throw problem('forbidden', 'the LAN key is handed to kiosk (native) sessions only');
  const screen = await screenSyncGroup(ctx.services.store.db, ctx.principal.screenId);
  if (!screen.sync_group) throw problem('resource_conflict', 'this screen plays in no sync group');
  const key = ctx.services.keys.sign('lockstep-lan', `${ctx.principal.tenantId}\u0000${screen.sync_group}`);
  const body: SyncLanKey = { group: screen.sync_group, key };
  return { status: 200, body, headers: { 'Cache-Control': 'no-store' } };
});
