// The connection status stream (spec Events rule 4): AgentConnection metadata only, one frame now
// and one at each change, closing on approved, denied, connected, expired or cancelled. It never
// carries a bearer, envelope, nonce, cookie or project identifier (AgentConnection has none).
import { AGENT_STREAM_FINAL_STATES, type AgentConnectionState } from '../../sdk/contract/agents';
import { openSse, type SseResponse } from '../http/sse';
import type { Services } from '../services';
import { connectionChannel, connectionState, connectionView } from './agent-connections';

export const AGENT_CONNECTION_EVENT = 'agent_connection';
/** Longest delay setTimeout takes; windows are far shorter. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function serveConnectionStatus(services: Services, res: SseResponse, connectionId: string): void {
  const stream = openSse(res, { lifecycle: services.lifecycle, heartbeatMs: services.tuning.eventStreams.heartbeatMs });
  let last: AgentConnectionState | undefined;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    if (stream.closed) return;
    const row = await services.store.db
      .selectFrom('agent_connections')
      .selectAll()
      .where('id', '=', connectionId)
      .executeTakeFirst();
    // The client may have left during the read: arming the deadline timer now would hold this
    // closed stream (and its response) until the approval window ends.
    if (stream.closed) return;
    const now = services.clock.now();
    if (!row) return stream.close();
    const state = connectionState(row, now);
    if (state !== last) {
      last = state;
      stream.send({ event: AGENT_CONNECTION_EVENT, data: connectionView(row, now) });
    }
    if (AGENT_STREAM_FINAL_STATES.includes(state)) return stream.close();
    // Wake at the approval deadline to send `expired`.
    clearTimeout(timer);
    timer = setTimeout(() => void run(), Math.min(Math.max(0, row.expires_at - now), MAX_TIMER_MS));
    timer.unref();
  };
  let checks = Promise.resolve();
  const run = () => (checks = checks.then(look).catch(() => stream.close()));
  // Subscribe first, then look: a change committing in between still wakes the stream.
  const unsubscribe = services.notifier.subscribe(connectionChannel(connectionId), () => void run());
  stream.onClose(() => {
    unsubscribe();
    clearTimeout(timer);
  });
  void run();
}
