// POST /runtime/v1/unpair: a browser player gives its screen up. The paired session names the
// screen (no id, If-Match or Idempotency-Key); the screen is tombstoned as an owner's delete would,
// and the answer expires the player's pairing, device and runtime cookies. A screen bound to a
// native identity is refused (screen_archive_required): such a player leaves through its signed
// identity reset instead.
import { clientIp } from '../http/client-ip';
import { mutation, reply } from '../http/route';
import { pairedRuntimeCookie } from '../pairing/pairing.auth';
import { clearCookie, DEVICE_COOKIE, PAIRING_COOKIE, RUNTIME_COOKIE } from '../pairing/pairing-cookies';
import { problem } from '../problem';
import { tombstoneScreen } from '../screens/screen-changes';
import { findScreen } from '../screens/screens';

/** The reference contract's runtime-unpair budget: 30 a minute (per screen, and per client IP). */
const UNPAIRS_PER_MINUTE = 30;

export const unpair = mutation(
  {
    auth: pairedRuntimeCookie,
    meter: false,
    rateLimits: (ctx) => [
      { name: 'runtime-unpair', limit: UNPAIRS_PER_MINUTE, windowSeconds: 60, key: ctx.principal.screenId },
      { name: 'runtime-unpair-ip', limit: UNPAIRS_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const screen = await findScreen(work.db, ctx.principal.tenantId, ctx.principal.screenId);
    if (screen.native_identity || ctx.req.headers.authorization !== undefined) {
      throw problem(
        'screen_archive_required',
        'this screen is bound to a native player identity; it leaves through POST /runtime/v1/native/identity/reset',
      );
    }
    await tombstoneScreen(
      { events: ctx.services.events, work, now: ctx.now, requestId: ctx.requestId },
      screen,
      'unpaired by its player',
    );
    work.afterCommit(() => {
      for (const name of [RUNTIME_COOKIE, DEVICE_COOKIE, PAIRING_COOKIE])
        ctx.res.append('Set-Cookie', clearCookie(name));
    });
    return reply.noContent({ headers: { 'Cache-Control': 'no-store' } });
  },
);
