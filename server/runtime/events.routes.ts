// GET /runtime/v1/events: the screen's durable runtime stream (player.reload,
// screen.manifest_changed, archive and delete notices; later takeovers and display commands) on the
// events machinery. A connected paired stream keeps the screen online. A stream whose session an
// event ends (rotation, credential revoke, delete) closes after delivering that event, and every
// stream ends when its session expires: it never outlives the cookie that opened it.
import { EventStreamQuery } from '../../sdk/contract/events';
import type { EventRow } from '../events/event-reader';
import { serveScreenEventStream } from '../events/event-stream';
import { eventStream } from '../http/route';
import type { SseStream } from '../http/sse';
import { runtimeCookie } from '../pairing/pairing.auth';
import type { Services } from '../services';

/** Events after which some runtime sessions of the screen are no longer valid. */
function mayEndSessions(row: EventRow): boolean {
  if (row.type === 'screen.deleted' || row.type === 'screen.public_id_rotated') return true;
  return (
    row.type === 'screen.manifest_changed' && row.details !== null && row.details.includes('"content_access_regranted"')
  );
}

async function sessionAlive(services: Services, sessionId: string): Promise<boolean> {
  const row = await services.store.db
    .selectFrom('runtime_sessions')
    .innerJoin('screens', 'screens.id', 'runtime_sessions.screen_id')
    .select([
      'runtime_sessions.revoked_at',
      'runtime_sessions.expires_at',
      'runtime_sessions.content_access_generation',
      'screens.content_access_generation as screen_generation',
      'screens.state',
    ])
    .where('runtime_sessions.id', '=', sessionId)
    .executeTakeFirst();
  return (
    row !== undefined &&
    row.revoked_at === null &&
    row.expires_at > services.clock.now() &&
    row.state !== 'deleted' &&
    row.content_access_generation === row.screen_generation
  );
}

/** Longest delay setTimeout takes (about 24.8 days); sessions are far shorter. */
const MAX_TIMER_MS = 2 ** 31 - 1;

async function recordLastOnline(services: Services, screenId: string): Promise<void> {
  try {
    await services.store.db
      .updateTable('screens')
      .set({ last_online_at: services.clock.now() })
      .where('id', '=', screenId)
      .execute();
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
    if (mayEndSessions(row)) {
      // After this frame is written: end the stream if the event ended this very session.
      setImmediate(() => {
        void sessionAlive(services, principal.runtimeSessionId).then(
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
    void recordLastOnline(services, principal.screenId);
    stream.onClose(() => {
      void connection.then((disconnect) => disconnect());
      void recordLastOnline(services, principal.screenId);
    });
  }
});
