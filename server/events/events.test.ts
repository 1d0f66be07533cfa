import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { anyBearer } from '../http/auth';
import type { RouteEntry } from '../http/dispatch';
import { query } from '../http/route';
import type { InProcessNotifier } from '../notifier';
import { suspendProject } from '../operators/operators';
import { TestServer } from '../testing/harness';
import { EventCursors, type StreamScope } from './cursors';
import { screenChannel, tenantChannel } from './event-log';
import { sampleEvent, type SampleEvent } from './event-samples.testing';
import { serveScreenEventStream, serveTenantEventStream, STREAM_BATCH_ROWS } from './event-stream';
import { StreamReader } from './stream-reader.testing';

// The runtime plane mounts the screen stream behind its cookie; here a test route mounts it behind a bearer.
const extraRoutes: RouteEntry[] = [
  {
    plane: 'control',
    method: 'GET',
    path: '/test/screens/:screenId/events',
    route: query({ auth: anyBearer }, async (ctx) => {
      const after = new URL(ctx.req.originalUrl, 'http://x').searchParams.get('after') ?? undefined;
      const lastEventId = ctx.req.headers['last-event-id'];
      await serveScreenEventStream(ctx.services, ctx.res, {
        tenantId: ctx.principal.tenantId,
        screenId: ctx.params.screenId!,
        after,
        lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
      });
    }),
  },
  {
    plane: 'control',
    method: 'GET',
    path: '/test/events/turns',
    route: query({ auth: anyBearer }, async (ctx) => {
      countFramesPerTurn(ctx.res);
      await serveTenantEventStream(ctx.services, ctx.res, { tenantId: ctx.principal.tenantId });
    }),
  },
];

/** The most frames a /test/events/turns stream wrote within one turn of the event loop. */
let mostFramesInOneTurn = 0;

function countFramesPerTurn(res: http.ServerResponse): void {
  let inTurn = 0;
  let ticking = true;
  const turn = () => {
    inTurn = 0;
    if (ticking) setImmediate(turn);
  };
  setImmediate(turn);
  res.on('close', () => (ticking = false));
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.includes('\nevent: '))
      mostFramesInOneTurn = Math.max(mostFramesInOneTurn, ++inTurn);
    return write(chunk, ...rest);
  }) as typeof res.write;
}

const HEARTBEAT_MS = 100;
const STALL_TIMEOUT_MS = 500;

let server: TestServer;
let cursors: EventCursors;
const open: StreamReader[] = [];

beforeAll(async () => {
  server = await TestServer.start({
    clock: new TestClock('2026-11-21T12:00:00Z'),
    extraRoutes,
    tuning: { eventStreams: { heartbeatMs: HEARTBEAT_MS, stallTimeoutMs: STALL_TIMEOUT_MS } },
  });
  cursors = new EventCursors(server.services.keys);
});
afterAll(async () => {
  for (const reader of open) reader.close();
  await server.stop();
});

async function stream(path: string, options: Parameters<typeof StreamReader.open>[2] = {}): Promise<StreamReader> {
  const reader = await StreamReader.open(server, path, options);
  open.push(reader);
  return reader;
}

/** Appends events in one transaction, as a mutation would. */
async function append(tenantId: string, count = 1, extra: SampleEvent = {}): Promise<number[]> {
  const positions: number[] = [];
  await server.services.store.transaction(async (work) => {
    for (let i = 0; i < count; i++) {
      positions.push(
        (await server.services.events.append(work, sampleEvent(tenantId, `event ${i}`, extra), server.clock.now()))!,
      );
    }
  });
  return positions;
}

const tenantScope = (tenantId: string): StreamScope => ({ kind: 'tenant', tenantId });
const notifier = () => server.services.notifier as InProcessNotifier;

describe('GET /api/v1/events', () => {
  it('lists the tenant’s events oldest first in the reference record shape', async () => {
    const { token, projectId } = await server.enroll({ agent_type: 'tester' });
    const [position] = await append(projectId, 1, {
      type: 'screen.updated',
      severity: 'warning',
      message: 'tags changed',
      resource: { type: 'screen', id: 'scr_x' },
      details: { revision: 2, changes: ['tags'], tags: ['lobby'] },
      requestId: 'req_abcdefghijklmnopqrstu',
      operationId: 'op_1',
    });
    const res = await server.request('GET', '/api/v1/events', { token });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['items', 'next_cursor']);
    expect(body.items.map((e: any) => e.type)).toEqual(['account.enrolled', 'screen.updated']);
    expect(body.items[0]).toEqual({
      cursor: expect.any(String),
      sequence: expect.any(Number),
      type: 'account.enrolled',
      severity: 'info',
      message: 'project enrolled',
      at: '2026-11-21T12:00:00.000Z',
      request_id: expect.stringMatching(/^req_/),
      resource: { type: 'project', id: projectId },
      details: { agent_type: 'tester', name: 'Marquee CLI' },
    });
    expect(body.items[1]).toEqual({
      cursor: cursors.encode(tenantScope(projectId), position!),
      sequence: position,
      type: 'screen.updated',
      severity: 'warning',
      message: 'tags changed',
      at: '2026-11-21T12:00:00.000Z',
      request_id: 'req_abcdefghijklmnopqrstu',
      operation_id: 'op_1',
      resource: { type: 'screen', id: 'scr_x' },
      details: { revision: 2, changes: ['tags'], tags: ['lobby'] },
    });
    expect(body.items[0].sequence).toBeLessThan(body.items[1].sequence);
    expect(body.next_cursor).toBe(body.items[1].cursor);
  });

  it('pages with limit and next_cursor without gaps or overlap, ending at the head', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 4);
    const seen: number[] = [];
    let after = '';
    for (let page = 0; page < 3; page++) {
      const res = await server.request('GET', `/api/v1/events?limit=2${after ? `&after=${after}` : ''}`, { token });
      expect(res.status).toBe(200);
      const body = res.json();
      expect(body.items.length).toBe(page < 2 ? 2 : 1);
      seen.push(...body.items.map((e: any) => e.sequence));
      after = body.next_cursor;
    }
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(5);
    const end = (await server.request('GET', `/api/v1/events?after=${after}`, { token })).json();
    expect(end).toEqual({ items: [], next_cursor: after });
    const [next] = await append(projectId);
    const more = (await server.request('GET', `/api/v1/events?after=${end.next_cursor}`, { token })).json();
    expect(more.items.map((e: any) => e.sequence)).toEqual([next]);
  });

  it('answers an out-of-range or malformed limit and unknown parameters with invalid_request', async () => {
    const { token } = await server.enroll();
    for (const q of ['limit=0', 'limit=201', 'limit=abc', 'limit=1.5', 'cursor=x']) {
      const res = await server.request('GET', `/api/v1/events?${q}`, { token });
      expect(res.status, q).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
    expect((await server.request('GET', '/api/v1/events?limit=200', { token })).status).toBe(200);
  });

  it('answers a cursor it cannot resume with invalid_request naming resync_required and the head cursor', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const head = (await append(a.projectId, 2)).at(-1)!;
    const bCursor = (await server.request('GET', '/api/v1/events', { token: b.token })).json().next_cursor;
    const cases: [string, string][] = [
      ['garbage', 'invalid'],
      [bCursor, 'invalid'],
      [cursors.encode(tenantScope(a.projectId), 1_000_000_000), 'future'],
    ];
    for (const [after, reason] of cases) {
      const res = await server.request('GET', `/api/v1/events?after=${encodeURIComponent(after)}`, { token: a.token });
      expect(res.status).toBe(400);
      const problem = res.json();
      expect(problem.code).toBe('invalid_request');
      expect(problem.errors[0]).toMatchObject({ field: 'after', code: 'resync_required' });
      expect(problem.resync_reason).toBe(reason);
      const resumed = (
        await server.request('GET', `/api/v1/events?after=${problem.head_cursor}`, { token: a.token })
      ).json();
      expect(resumed.items).toEqual([]);
      expect(cursors.decode(tenantScope(a.projectId), problem.head_cursor)).toBe(head);
    }
  });

  it('never shows another tenant’s events', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    await append(b.projectId, 3, { type: 'playlist.created' });
    const items = (await server.request('GET', '/api/v1/events', { token: a.token })).json().items;
    expect(items.map((e: any) => e.type)).toEqual(['account.enrolled']);
  });

  it('serves account bearers (Model A) too, and needs a bearer', async () => {
    const { token, accountId } = await server.createAccount();
    const items = (await server.request('GET', '/api/v1/events', { token })).json().items;
    expect(items.map((e: any) => [e.type, e.resource.id])).toEqual([['account.created', accountId]]);
    expect((await server.request('GET', '/api/v1/events')).status).toBe(401);
  });
});

describe('GET /api/v1/events/stream', () => {
  it('streams with SSE headers and no credit headers, while the meter debits the opening request', async () => {
    const { token } = await server.enroll();
    const remaining = async () =>
      (await server.request('GET', '/api/v1/project', { token })).json().credit_remaining as number;
    const before = await remaining();
    const reader = await stream('/api/v1/events/stream', { token });
    expect(reader.status).toBe(200);
    expect(reader.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(reader.headers['x-accel-buffering']).toBe('no');
    expect(reader.headers['cache-control']).toBe('no-cache, no-store, no-transform');
    expect(Object.keys(reader.headers).filter((h) => h.startsWith('marquee-credits'))).toEqual([]);
    await reader.waitForFrames(1);
    expect(await remaining()).toBe(before - 1);
    reader.close();
  });

  it('replays from the oldest retained event, then follows live, one line of JSON per frame with id = cursor and event = type', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 2);
    const reader = await stream('/api/v1/events/stream', { token });
    await reader.waitForFrames(3);
    await append(projectId, 2, { type: 'account.created' });
    const frames = await reader.waitForFrames(5);
    expect(frames.map((f) => f.event)).toEqual([
      'account.enrolled',
      'project.updated',
      'project.updated',
      'account.created',
      'account.created',
    ]);
    for (const frame of frames) {
      const record = frame.json();
      expect(frame.id).toBe(record.cursor);
      expect(frame.event).toBe(record.type);
    }
    const sequences = frames.map((f) => f.json().sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(reader.raw.startsWith('retry: 3000\n\n')).toBe(true);
    const eventBlocks = reader.raw.split('\n\n').filter((block) => block.startsWith('id: '));
    for (const block of eventBlocks)
      expect(block.split('\n')).toEqual([
        expect.stringMatching(/^id: /),
        expect.stringMatching(/^event: /),
        expect.stringMatching(/^data: \{.*\}$/),
      ]);
    expect(reader.raw).not.toContain('\r');
    reader.close();
  });

  it('resumes exactly after the cursor on reconnect: no gap, no duplicate, order kept', async () => {
    const { token, projectId } = await server.enroll();
    await append(projectId, 3);
    const first = await stream('/api/v1/events/stream', { token });
    const seen = (await first.waitForFrames(4)).map((f) => f.json());
    first.close();
    await first.waitForEnd();
    await append(projectId, 3, { type: 'playlist.created' });
    const second = await stream(`/api/v1/events/stream?after=${seen.at(-1).cursor}`, { token });
    const replayed = (await second.waitForFrames(3)).map((f) => f.json());
    await append(projectId, 1, { type: 'playlist.updated' });
    const live = (await second.waitForFrames(4))[3]!.json();
    const all = [...seen, ...replayed, live];
    const sequences = all.map((e) => e.sequence);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(all.map((e) => e.type)).toEqual([
      'account.enrolled',
      'project.updated',
      'project.updated',
      'project.updated',
      'playlist.created',
      'playlist.created',
      'playlist.created',
      'playlist.updated',
    ]);
    // Nothing of this tenant exists between the sequences seen.
    const listed = (await server.request('GET', '/api/v1/events?limit=200', { token }))
      .json()
      .items.map((e: any) => e.sequence);
    expect(listed).toEqual(sequences);
  });

  it('takes the query cursor over Last-Event-ID, and Last-Event-ID alone', async () => {
    const { token, projectId } = await server.enroll();
    const [p1, p2, p3] = await append(projectId, 3);
    const scope = tenantScope(projectId);
    const both = await stream(`/api/v1/events/stream?after=${cursors.encode(scope, p2!)}`, {
      token,
      headers: { 'last-event-id': cursors.encode(scope, p1!) },
    });
    expect((await both.waitForFrames(1))[0]!.json().sequence).toBe(p3);
    const header = await stream('/api/v1/events/stream', {
      token,
      headers: { 'last-event-id': cursors.encode(scope, p1!) },
    });
    expect((await header.waitForFrames(2)).map((f) => f.json().sequence)).toEqual([p2, p3]);
    const emptyQuery = await stream('/api/v1/events/stream?after=', {
      token,
      headers: { 'last-event-id': cursors.encode(scope, p2!) },
    });
    expect((await emptyQuery.waitForFrames(1))[0]!.json().sequence).toBe(p3);
    for (const r of [both, header, emptyQuery]) r.close();
  });

  it('sends exactly one stream.resync_required at the head and closes, for each kind of bad cursor', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const head = (await append(a.projectId, 2)).at(-1)!;
    const scope = tenantScope(a.projectId);
    const good = cursors.encode(scope, head);
    const bad: [string, string, 'invalid' | 'future'][] = [
      ['malformed', 'not-a-cursor', 'invalid'],
      ['forged signature', `${head}.AAAAAAAAAAAAAAAAAAAAAA`, 'invalid'],
      ['altered position', good.replace(/^\d+/, String(head - 1)), 'invalid'],
      ['another tenant’s', cursors.encode(tenantScope(b.projectId), head), 'invalid'],
      [
        'a screen stream’s',
        cursors.encode({ kind: 'screen', tenantId: a.projectId, screenId: 'scr_1' }, head),
        'invalid',
      ],
      ['future', cursors.encode(scope, head + 1), 'future'],
    ];
    for (const [kind, cursor, reason] of bad) {
      for (const via of ['query', 'header'] as const) {
        const reader = await stream(
          via === 'query' ? `/api/v1/events/stream?after=${encodeURIComponent(cursor)}` : '/api/v1/events/stream',
          {
            token: a.token,
            headers: via === 'header' ? { 'last-event-id': cursor } : {},
          },
        );
        await reader.waitForEnd();
        expect(reader.status, kind).toBe(200);
        expect(reader.frames.length, `${kind} via ${via}`).toBe(1);
        const frame = reader.frames[0]!;
        expect(frame.event).toBe('stream.resync_required');
        expect(frame.id).toBe(good);
        expect(frame.json()).toMatchObject({
          type: 'stream.resync_required',
          cursor: good,
          sequence: head,
          severity: 'warning',
          details: { reason },
        });
      }
    }
    // The head cursor resumes: only what comes next is delivered.
    const resumed = await stream(`/api/v1/events/stream?after=${good}`, { token: a.token });
    const [next] = await append(a.projectId);
    expect((await resumed.waitForFrames(1))[0]!.json().sequence).toBe(next);
    resumed.close();
  });

  it('keeps tenants apart: a stream sees only its tenant’s events', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const readerA = await stream('/api/v1/events/stream', { token: a.token });
    const readerB = await stream('/api/v1/events/stream', { token: b.token });
    await Promise.all([readerA.waitForFrames(1), readerB.waitForFrames(1)]);
    await append(b.projectId, 2, { type: 'playlist.deleted' });
    await append(a.projectId, 1, { type: 'account.created' });
    await append(b.projectId, 1, { type: 'playlist.deleted' });
    await readerB.waitForFrames(4);
    await readerA.waitForFrames(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(readerA.frames.map((f) => f.event)).toEqual(['account.enrolled', 'account.created']);
    expect(readerB.frames.map((f) => f.event)).toEqual([
      'account.enrolled',
      'playlist.deleted',
      'playlist.deleted',
      'playlist.deleted',
    ]);
    readerA.close();
    readerB.close();
  });

  it('sends heartbeat comments at the configured interval', async () => {
    const { token } = await server.enroll();
    const reader = await stream('/api/v1/events/stream', { token });
    await reader.waitUntil(() => reader.comments.length >= 3, 'three heartbeats', HEARTBEAT_MS * 8);
    expect(reader.comments.every((c) => c === 'keep-alive')).toBe(true);
    reader.close();
  });

  it('answers HEAD without holding a stream open', async () => {
    const { token } = await server.enroll();
    const res = await server.request('HEAD', '/api/v1/events/stream', { token });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
  });

  it('unsubscribes a stream once its client goes away', async () => {
    const { token, projectId } = await server.enroll();
    const reader = await stream('/api/v1/events/stream', { token });
    await reader.waitForFrames(1);
    expect(notifier().subscriberCount(tenantChannel(projectId))).toBe(1);
    reader.close();
    await waitFor(() => notifier().subscriberCount(tenantChannel(projectId)) === 0, 'the unsubscribe');
  });
});

describe('streams a credential no longer authorizes', () => {
  /**
   * Holds the next metered request (a project bearer's, after authentication) until the returned
   * release is called: the window between authenticating a stream and its subscription to its end.
   */
  function holdNextMeteredRequest(): { reached: Promise<void>; release: () => void } {
    const meter = server.services.meter;
    const charge = meter.charge;
    let reached!: () => void;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = {
      reached: new Promise<void>((resolve) => (reached = resolve)),
      release: () => release(),
    };
    meter.charge = async (request) => {
      meter.charge = charge;
      reached();
      await released;
      return charge.call(meter, request);
    };
    return held;
  }

  it('ends a stream whose bearer was revoked while the stream was being opened', async () => {
    const { token } = await server.enroll();
    const held = holdNextMeteredRequest();
    const opening = stream('/api/v1/events/stream', { token });
    await held.reached; // authenticated, not yet subscribed to the revocation
    const revoked = await server.request('POST', '/api/v1/account/credential/revoke', { token });
    expect(revoked.status).toBe(204);
    held.release();
    const reader = await opening;
    expect(reader.status).toBe(200);
    await reader.waitForEnd(2000);
    expect(reader.events).toEqual([]);
  });

  it('ends a stream whose project was suspended while the stream was being opened', async () => {
    const { token, projectId } = await server.enroll();
    const held = holdNextMeteredRequest();
    const opening = stream('/api/v1/events/stream', { token });
    await held.reached;
    await server.services.store.transaction((work) =>
      suspendProject(server.services, work, { id: projectId, reason: null, requestId: 'req_test' }, server.clock.now()),
    );
    held.release();
    const reader = await opening;
    await reader.waitForEnd(2000);
    expect(reader.events).toEqual([]);
  });
});

describe('slow consumers', () => {
  it('drops a client that stops reading without holding up writers or other streams', async () => {
    const { token, projectId } = await server.enroll();
    const stalled = await stream('/api/v1/events/stream', { token });
    const healthy = await stream('/api/v1/events/stream', { token });
    await Promise.all([stalled.waitForFrames(1), healthy.waitForFrames(1)]);
    stalled.res.pause(); // stops reading: the kernel buffers fill, then the server's
    const other = await server.enroll();
    const otherReader = await stream('/api/v1/events/stream', { token: other.token });
    await otherReader.waitForFrames(1);

    // About 6 MB of events: more than the loopback socket buffers hold.
    const padding = 'x'.repeat(4000);
    const started = performance.now();
    for (let i = 0; i < 15; i++)
      await append(projectId, 100, {
        type: 'runtime.reported',
        details: { code: 'padding', severity: 'info', context: { padding } },
      });
    const appendMs = performance.now() - started;
    await append(other.projectId, 1, { type: 'account.created' });

    await healthy.waitForFrames(1501, 15_000);
    await otherReader.waitForFrames(2);
    await waitFor(
      () => notifier().subscriberCount(tenantChannel(projectId)) === 1,
      'the stalled stream to be dropped',
      STALL_TIMEOUT_MS + 5000,
    );
    expect(appendMs).toBeLessThan(5000);
    const received = stalled.frames.length;
    stalled.res.resume();
    await stalled.waitForEnd();
    // The server dropped it mid-way instead of buffering everything for it.
    expect(stalled.frames.length).toBeLessThan(1501);
    expect(received).toBeLessThan(1501);
    expect(server.logText()).toContain('the client stopped reading');
    healthy.close();
    otherReader.close();
  });
});

describe('long replays', () => {
  it('give the rest of the server a turn of the event loop after each batch', async () => {
    const { token, projectId } = await server.enroll();
    for (let i = 0; i < 30; i++) await append(projectId, STREAM_BATCH_ROWS);
    const reader = await stream('/test/events/turns', { token });
    await reader.waitForFrames(30 * STREAM_BATCH_ROWS + 1, 15_000);
    reader.close();
    // A turn can fall between two batches or after both (the stream's turn and the count's share a phase).
    expect(mostFramesInOneTurn).toBeGreaterThan(0);
    expect(mostFramesInOneTurn).toBeLessThanOrEqual(2 * STREAM_BATCH_ROWS);
  });
});

describe('screen streams (the runtime stream machinery)', () => {
  it('deliver only the screen’s runtime events, and move the cursor past filtered ones with payload-free stream.cursor frames', async () => {
    const { token, projectId } = await server.enroll();
    const [r1] = await append(projectId, 1, { screenId: 'scr_a', type: 'player.reload' });
    await append(projectId, 2, { screenId: 'scr_a', type: 'screen.updated' });
    await append(projectId, 1, { screenId: 'scr_b', type: 'player.reload' });
    await append(projectId, 1, { type: 'project.updated' });
    const [r2] = await append(projectId, 1, { screenId: 'scr_a', type: 'screen.manifest_changed' });
    const [, hidden] = await append(projectId, 2, { screenId: 'scr_a', type: 'screen.updated' });

    const reader = await stream('/test/screens/scr_a/events', { token });
    const frames = await reader.waitForFrames(3);
    const screenScope: StreamScope = { kind: 'screen', tenantId: projectId, screenId: 'scr_a' };
    expect(frames.map((f) => [f.event, f.id])).toEqual([
      ['player.reload', cursors.encode(screenScope, r1!)],
      ['screen.manifest_changed', cursors.encode(screenScope, r2!)],
      ['stream.cursor', cursors.encode(screenScope, hidden!)],
    ]);
    expect(frames[0]!.json().cursor).toBe(frames[0]!.id);
    expect(frames[2]!.data).toBe('');
    expect(reader.raw).toContain(`id: ${cursors.encode(screenScope, hidden!)}\nevent: stream.cursor\ndata: \n\n`);

    // Live: a filtered event moves the cursor too; a runtime one is delivered.
    const [liveHidden] = await append(projectId, 1, { screenId: 'scr_a', type: 'screen.updated' });
    await reader.waitForFrames(4);
    expect(reader.frames[3]!).toMatchObject({ event: 'stream.cursor', id: cursors.encode(screenScope, liveHidden!) });
    const [r3] = await append(projectId, 1, { screenId: 'scr_a', type: 'player.reload' });
    expect((await reader.waitForFrames(5))[4]!.json().sequence).toBe(r3);
    reader.close();

    // Reconnecting at a stream.cursor cursor resumes past the filtered events.
    const resumed = await stream(`/test/screens/scr_a/events?after=${cursors.encode(screenScope, liveHidden!)}`, {
      token,
    });
    expect((await resumed.waitForFrames(1))[0]!.json().sequence).toBe(r3);
    resumed.close();
  });

  it('refuse tenant cursors and other screens’ cursors, and tenant streams refuse screen cursors', async () => {
    const { token, projectId } = await server.enroll();
    const [p] = await append(projectId, 1, { screenId: 'scr_c', type: 'player.reload' });
    const screenCursor = cursors.encode({ kind: 'screen', tenantId: projectId, screenId: 'scr_c' }, p!);
    const otherScreen = cursors.encode({ kind: 'screen', tenantId: projectId, screenId: 'scr_d' }, p!);
    const tenantCursor = cursors.encode(tenantScope(projectId), p!);
    for (const [path, cursor] of [
      ['/test/screens/scr_c/events', tenantCursor],
      ['/test/screens/scr_c/events', otherScreen],
      ['/api/v1/events/stream', screenCursor],
    ] as const) {
      const reader = await stream(`${path}?after=${cursor}`, { token });
      await reader.waitForEnd();
      expect(reader.frames.map((f) => [f.event, f.json().details.reason])).toEqual([
        ['stream.resync_required', 'invalid'],
      ]);
    }
    // The screen's own cursor resumes.
    const ok = await stream(`/test/screens/scr_c/events?after=${screenCursor}`, { token });
    const [next] = await append(projectId, 1, { screenId: 'scr_c', type: 'player.reload' });
    expect((await ok.waitForFrames(1))[0]!.json().sequence).toBe(next);
    expect(notifier().subscriberCount(screenChannel('scr_c'))).toBe(1);
    ok.close();
  });
});

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
