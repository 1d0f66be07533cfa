// The SDK's SSE client (sdk/sse) in Node against the real server, including a restart mid-stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResyncRequired } from '../../sdk/contract/events';
import {
  EventStreamError,
  followEventStream,
  type EventStream,
  type StreamMessage,
} from '../../sdk/sse/event-stream-client';
import { anyBearer } from '../http/auth';
import type { RouteEntry } from '../http/dispatch';
import { query } from '../http/route';
import type { InProcessNotifier } from '../notifier';
import { TestServer } from '../testing/harness';
import { tenantChannel } from './event-log';
import { sampleEvent, type SampleEvent } from './event-samples.testing';
import { serveScreenEventStream } from './event-stream';

const extraRoutes: RouteEntry[] = [
  {
    plane: 'control',
    method: 'GET',
    path: '/test/screens/:screenId/events',
    route: query({ auth: anyBearer }, async (ctx) => {
      const after = new URL(ctx.req.originalUrl, 'http://x').searchParams.get('after') ?? undefined;
      await serveScreenEventStream(ctx.services, ctx.res, {
        tenantId: ctx.principal.tenantId,
        screenId: ctx.params.screenId!,
        after,
      });
    }),
  },
];

let server: TestServer;
const streams: EventStream[] = [];
beforeAll(async () => {
  server = await TestServer.start({ extraRoutes });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await server.stop();
});

// Node cannot resolve *.localhost reliably; 127.0.0.1 reaches the control plane like any unknown host.
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

async function append(tenantId: string, count: number, extra: SampleEvent = {}): Promise<number[]> {
  const positions: number[] = [];
  await server.services.store.transaction(async (work) => {
    for (let i = 0; i < count; i++)
      positions.push(
        (await server.services.events.append(work, sampleEvent(tenantId, `${i}`, extra), server.clock.now()))!,
      );
  });
  return positions;
}

/** Follows a stream, collecting events; `until(n)` waits for n of them. */
function follow(path: string, token: string, options: Partial<Parameters<typeof followEventStream>[0]> = {}) {
  const events: StreamMessage<any>[] = [];
  const waiters: (() => void)[] = [];
  let opened = 0;
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const stream = followEventStream({
    url: url(path),
    headers: { authorization: `Bearer ${token}` },
    initialDelayMs: 50,
    maxDelayMs: 200,
    onOpen: () => {
      opened++;
      notify();
    },
    onEvent: (m) => {
      events.push(m);
      notify();
    },
    ...options,
    onCursor: (c) => {
      options.onCursor?.(c);
      notify();
    },
  });
  streams.push(stream);
  const until = (predicate: () => boolean, what: string, timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      if (predicate()) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${what} (have ${events.length} events)`)),
        timeoutMs,
      );
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        waiters.splice(waiters.indexOf(check), 1);
        resolve();
      };
      waiters.push(check);
    });
  return {
    stream,
    events,
    opened: () => opened,
    untilEvents: (n: number, timeoutMs?: number) => until(() => events.length >= n, `${n} events`, timeoutMs),
    until,
  };
}

describe('sdk/sse against the server', () => {
  it('replays then follows, with the bearer from headers', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 2);
    const f = follow('/api/v1/events/stream', token);
    await f.untilEvents(3);
    await append(projectId, 2, { type: 'account.created' });
    await f.untilEvents(5);
    expect(f.events.map((e) => e.type)).toEqual([
      'account.enrolled',
      'project.updated',
      'project.updated',
      'account.created',
      'account.created',
    ]);
    expect(f.events.every((e) => e.cursor === e.data.cursor)).toBe(true);
    await f.until(() => f.stream.cursor === f.events.at(-1)!.cursor, 'the cursor to move past the last event handled');
    f.stream.close();
    await f.stream.done;
  });

  it('rides out a server restart mid-stream with no gap and no duplicate', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 3, { type: 'playlist.created' });
    const f = follow('/api/v1/events/stream', token);
    await f.untilEvents(4);

    server = await server.restart(); // drains: the stream ends, reconnects are refused until it listens again
    await append(projectId, 2, { type: 'playlist.updated' });
    await f.until(() => f.opened() >= 2, 'the reconnect');
    await append(projectId, 1, { type: 'playlist.deleted' });
    await f.untilEvents(7);
    await new Promise((r) => setTimeout(r, 100));

    const types = f.events.map((e) => e.type);
    expect(types).toEqual([
      'account.enrolled',
      'playlist.created',
      'playlist.created',
      'playlist.created',
      'playlist.updated',
      'playlist.updated',
      'playlist.deleted',
    ]);
    const listed = (await server.request('GET', '/api/v1/events', { token })).json().items.map((e: any) => e.cursor);
    expect(f.events.map((e) => e.cursor)).toEqual(listed);
    f.stream.close();
  });

  it('hands a resync to onResync and resumes at the head it names', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 2);
    const resyncs: ResyncRequired[] = [];
    const f = follow('/api/v1/events/stream', token, {
      cursor: 'forged.cursor',
      onResync: (r) => void resyncs.push(r),
    });
    await f.until(() => resyncs.length === 1 && f.opened() === 2, 'the resync and the resumed connection');
    const [next] = await append(projectId, 1, { type: 'account.created' });
    await f.untilEvents(1);
    expect(resyncs[0]).toMatchObject({ type: 'stream.resync_required', details: { reason: 'invalid' } });
    expect(f.events.map((e) => [e.type, e.data.sequence])).toEqual([['account.created', next]]);
    f.stream.close();
  });

  it('resumes through Last-Event-ID when told to', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 2);
    const first = follow('/api/v1/events/stream', token);
    await first.untilEvents(3);
    first.stream.close();
    const second = follow('/api/v1/events/stream', token, { cursor: first.events[1]!.cursor, cursorIn: 'header' });
    await second.untilEvents(1);
    expect(second.events[0]!.cursor).toBe(first.events[2]!.cursor);
    second.stream.close();
  });

  it('skips filtered screen events with stream.cursor frames and stops on AbortSignal', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 1, { screenId: 'scr_s', type: 'player.reload' });
    const [, hidden] = await append(projectId, 2, { screenId: 'scr_s', type: 'screen.updated' });
    const cursors: string[] = [];
    const controller = new AbortController();
    const f = follow('/test/screens/scr_s/events', token, {
      signal: controller.signal,
      onCursor: (c) => void cursors.push(c),
    });
    await f.untilEvents(1);
    await f.until(() => cursors.length === 2, 'the stream.cursor frame');
    expect(f.events.map((e) => e.type)).toEqual(['player.reload']);
    expect(cursors[1]).toMatch(new RegExp(`^${hidden}\\.`));
    controller.abort();
    await f.stream.done;
  });

  it('closes its connection on abort, and gives up on a refused bearer', async () => {
    const { token, projectId } = await server.enroll();
    const f = follow('/api/v1/events/stream', token);
    await f.untilEvents(1);
    const subscribers = () => (server.services.notifier as InProcessNotifier).subscriberCount(tenantChannel(projectId));
    expect(subscribers()).toBe(1);
    f.stream.close();
    await f.stream.done;
    const deadline = Date.now() + 2000;
    while (subscribers() !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(subscribers()).toBe(0);

    const refused = follow('/api/v1/events/stream', 'mq_proj_not-a-token');
    const error = await refused.stream.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventStreamError);
    expect(error).toMatchObject({ status: 401, problem: { code: 'unauthorized' } });
  });
});
