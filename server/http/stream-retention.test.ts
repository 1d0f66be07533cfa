// Event streams opened and dropped leave nothing behind: no drain closer, heartbeat or notifier
// listener outlives its client, however early the client leaves (after the first frame, before
// the answer, or while the route is still working before it opens the stream).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenChannel, tenantChannel, tenantStreamsEndChannel } from '../events/event-log';
import type { InProcessNotifier } from '../notifier';
import { PRESENCE_GRACE_MS } from '../runtime/presence';
import { pairedPlayer } from '../runtime/runtime.fixtures';
import { TestServer } from '../testing/harness';
import { query } from './route';
import { openSse } from './sse';

let server: TestServer;
let token: string;
let projectId: string;
let player: Awaited<ReturnType<typeof pairedPlayer>>;
/** Requests to /test/late-stream that reached the route (it opens its stream 50 ms later). */
let lateArrivals = 0;

beforeAll(async () => {
  server = await TestServer.start({
    config: { maxConnectionsPerIp: 0 },
    extraRoutes: [
      {
        plane: 'control',
        method: 'GET',
        path: '/test/late-stream',
        // As pairing and link streams do: work first (authentication, a read), then open the stream.
        route: query({}, async (ctx) => {
          lateArrivals++;
          await new Promise((r) => setTimeout(r, 50));
          const stream = openSse(ctx.res, { lifecycle: ctx.services.lifecycle, heartbeatMs: 20 });
          stream.onClose(() => {});
        }),
      },
    ],
  });
  ({ token, projectId } = await server.enroll());
  player = await pairedPlayer(server, token);
});
afterAll(async () => server.stop());

/** What one server keeps per open stream. */
function retained() {
  const notifier = server.services.notifier as InProcessNotifier;
  return {
    streams: server.services.lifecycle.openStreams,
    tenantListeners: notifier.subscriberCount(tenantChannel(projectId)),
    tenantEndListeners: notifier.subscriberCount(tenantStreamsEndChannel(projectId)),
    screenListeners: notifier.subscriberCount(screenChannel(player.screen.id)),
    requests: server.services.lifecycle.activeRequests,
  };
}

/** Opens a stream and drops it: after its first bytes, or `afterMs` after sending the request. */
function openAndDrop(path: string, headers: Record<string, string>, afterMs?: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port: server.port, path, headers: { host: server.host, ...headers }, agent: false },
      (res) => {
        res.on('error', () => {});
        if (afterMs === undefined) res.once('data', () => (req.destroy(), resolve(res.statusCode!)));
      },
    );
    req.on('error', () => {});
    req.end();
    if (afterMs !== undefined) setTimeout(() => (req.destroy(), resolve(0)), afterMs);
  });
}

async function settled(baseline: ReturnType<typeof retained>) {
  for (let i = 0; i < 50 && JSON.stringify(retained()) !== JSON.stringify(baseline); i++)
    await new Promise((r) => setTimeout(r, 20));
  return retained();
}

describe('event streams opened and dropped', () => {
  it('leave no listener or drain closer behind: tenant streams', async () => {
    const baseline = retained();
    const bearer = { authorization: `Bearer ${token}` };
    const statuses = new Set<number>();
    for (let i = 0; i < 150; i++) statuses.add(await openAndDrop('/api/v1/events/stream', bearer));
    for (let i = 0; i < 50; i++) await openAndDrop('/api/v1/events/stream', bearer, i % 5);
    expect([...statuses]).toEqual([200]);
    expect(await settled(baseline)).toEqual(baseline);
  });

  it('leave no listener, presence or drain closer behind: runtime streams', async () => {
    const baseline = retained();
    const cookie = player.cookies.header(server.host)!;
    const statuses = new Set<number>();
    for (let i = 0; i < 150; i++) statuses.add(await openAndDrop('/runtime/v1/events', { cookie }));
    for (let i = 0; i < 50; i++) await openAndDrop('/runtime/v1/events', { cookie }, i % 5);
    expect([...statuses]).toEqual([200]);
    expect(await settled(baseline)).toEqual(baseline);
    // Presence counts no stream: once its grace has passed the screen is offline.
    server.clock.advance(PRESENCE_GRACE_MS + 1);
    expect((await server.services.presence.online([player.screen.id])).size).toBe(0);
  });

  it('leave no drain closer or heartbeat when the client left before the route opened its stream', async () => {
    const baseline = retained();
    lateArrivals = 0;
    for (let i = 0; i < 40; i++) await openAndDrop('/test/late-stream', {}, 10);
    await new Promise((r) => setTimeout(r, 150));
    expect(lateArrivals).toBe(40);
    expect(await settled(baseline)).toEqual(baseline);
  });
});
