// GET /runtime/v1/events: the screen's durable runtime stream (player.reload,
// screen.manifest_changed, archive and delete notices; later takeovers and display commands) on the
// events machinery. A connected paired stream keeps the screen online. A stream whose session an
// event ends (rotation, credential revoke, delete) closes after delivering that event, and every
// stream ends when its session expires: it never outlives the cookie that opened it.
import { EventStreamQuery } from '../../sdk/contract/events';
import { detailsOf, type EventRow } from '../events/event-reader';
import { serveScreenEventStream } from '../events/event-stream';
import { eventStream } from '../http/route';
import type { SseStream } from '../http/sse';
import { runtimeSessionAlive } from '../pairing/pairing';
import { runtimeCookie } from '../pairing/pairing.auth';
import { recordLastOnline } from '../screens/screens';
import { recordPlayerKind } from '../screens/screen-health';
import { isNativeRequest } from '../pairing/native.auth';
import type { PlayerKind } from '../../sdk/contract/screen-health';
import type { Services } from '../services';

/** Events after which some runtime sessions of the screen are no longer valid. */
function mayEndSessions(row: EventRow): boolean {
  if (row.type === 'screen.deleted' || row.type === 'screen.public_id_rotated') return true;
  return detailsOf(row, 'screen.manifest_changed')?.reason === 'content_access_regranted';
}

/** Longest delay setTimeout takes (about 24.8 days); sessions are far shorter. */
const MAX_TIMER_MS = 2 ** 31 - 1;

async function recordOnline(
  services: Services,
  screenId: string,
  player?: { tenantId: string; kind: PlayerKind },
): Promise<void> {
  try {
    await recordLastOnline(services.store.db, screenId, services.clock.now());
    if (player) await recordPlayerKind(services.store.db, { screenId, tenantId: player.tenantId }, player.kind);
  } catch (error) {
    services.logger.warn({ err: error, screen_id: screenId }, 'last_online_at not recorded');
  }
}

export const runtimeEvents = eventStream({ auth: runtimeCookie, query: EventStreamQuery }, async (ctx) => {
  const { services, principal } = ctx;
  let stream: SseStream | undefined;
  const expired = () => services.clock.now() >= principal.sessionExpiresAt;
  const deliver = (row: EventRow): boolean => {
    // The clock may pass the expiry before the timer below fires (a suspended host, a test clock).
    if (expired()) {
      stream?.close();
      return false;
    }
    // reference contract: a screenshot request is never delivered past its expiry.
    const shot = detailsOf(row, 'screen.screenshot_requested');
    if (shot && Date.parse(shot.expires_at) <= services.clock.now()) return false;
    if (mayEndSessions(row)) {
      // After this frame is written: end the stream if the event ended this very session.
      setImmediate(() => {
        void runtimeSessionAlive(services.store.db, principal.runtimeSessionId, services.clock.now()).then(
          (alive) => alive || stream?.close(),
          () => stream?.close(),
        );
      });
    }
    return true;
  };
  const lastEventId = ctx.req.headers['last-event-id'];
  stream = await serveScreenEventStream(services, ctx.res, {
    tenantId: principal.tenantId,
    screenId: principal.screenId,
    after: ctx.query.after,
    lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
    deliver,
    // The project's suspension ends a screen's stream by notice only: one that committed after the
    // cookie was checked, before the stream listened, reached nobody (D-448).
    stillAuthorized: () => ctx.stillAuthenticated(),
  });
  if (!stream.closed) {
    const timer = setTimeout(
      () => stream.close(),
      Math.min(Math.max(0, principal.sessionExpiresAt - services.clock.now()), MAX_TIMER_MS),
    );
    timer.unref();
    stream.onClose(() => clearTimeout(timer));
  }
  // spec: online means a paired runtime stream is connected; anonymous viewers do not count.
  if (principal.paired && !stream.closed) {
    const connection = services.presence.connect(principal.screenId);
    void recordOnline(services, principal.screenId, {
      tenantId: principal.tenantId,
      kind: isNativeRequest(ctx) ? 'kiosk' : 'browser',
    });
    stream.onClose(() => {
      void connection.then((disconnect) => disconnect());
      void recordOnline(services, principal.screenId);
    });
  }
});
