// GET /runtime/v1/time: the server clock for lockstep playback. Players of a sync group make timed
// exchanges with it (as NTP does) and play by the estimate (sdk/lockstep/clock-sync.ts). The
// answer stamps the request's arrival (the request clock, read before authentication) and the
// answer's departure, so the time spent authorizing does not count as network delay. Small, never
// cached, and authorized like the manifest: any runtime session of the screen, paired or public.
import type { RuntimeTime } from '../../sdk/contract/runtime';
import { query, type Reply } from '../http/route';
import { runtimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';

/** A member asks eight times at start, then about every ten seconds (sdk/lockstep/clock-sync.ts): ample room. */
const TIME_EXCHANGES_PER_SCREEN_PER_MINUTE = 120;

export const getTime = query(
  {
    auth: runtimeCookie,
    rateLimits: (ctx) => [
      {
        name: 'runtime-time',
        limit: TIME_EXCHANGES_PER_SCREEN_PER_MINUTE,
        windowSeconds: 60,
        key: (ctx.principal as RuntimePrincipal).screenId,
      },
    ],
  },
  async (ctx): Promise<Reply> => {
    const body: RuntimeTime = { received_at_ms: ctx.now, sent_at_ms: ctx.services.clock.now() };
    return { status: 200, body, headers: { 'Cache-Control': 'no-store' } };
  },
);
