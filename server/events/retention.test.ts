import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { anyBearer } from '../http/auth';
import type { RouteEntry } from '../http/dispatch';
import { query } from '../http/route';
import { TestServer } from '../testing/harness';
import { EventCursors, type StreamScope } from './cursors';
import { sampleEvent, type SampleEvent } from './event-samples.testing';
import { serveScreenEventStream } from './event-stream';
import { pruneEvents } from './retention';
import { StreamReader } from './stream-reader.testing';

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 30;

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
let cursors: EventCursors;
beforeAll(async () => {
  server = await TestServer.start({
    clock: new TestClock('2026-11-01T00:00:00Z'),
    config: { eventRetentionDays: RETENTION_DAYS },
    extraRoutes,
  });
  cursors = new EventCursors(server.services.keys);
});
afterAll(async () => server.stop());

async function append(tenantId: string, extra: SampleEvent = {}): Promise<number> {
  return (await server.services.store.transaction((work) =>
    server.services.events.append(work, sampleEvent(tenantId, 'm', extra), server.clock.now()),
  ))!;
}

async function firstFrame(path: string, token: string) {
  const reader = await StreamReader.open(server, path, { token });
  const [frame] = await reader.waitForFrames(1);
  reader.close();
  return frame!;
}

describe('event retention', () => {
  it('prunes events past the window in the housekeeping pass; cursors before a pruned event resync, later ones resume', async () => {
    const { token, projectId } = await server.enroll();
    const scope: StreamScope = { kind: 'tenant', tenantId: projectId };
    const screen: StreamScope = { kind: 'screen', tenantId: projectId, screenId: 'scr_keep' };
    const e1 = await append(projectId, { screenId: 'scr_keep', type: 'player.reload' });
    const e2 = await append(projectId, { screenId: 'scr_keep', type: 'player.reload' });
    server.clock.advance((RETENTION_DAYS + 1) * DAY_MS);
    const e3 = await append(projectId, { screenId: 'scr_keep', type: 'player.reload' });

    await server.services.housekeeping.runAll();

    const listed = (await server.request('GET', '/api/v1/events', { token })).json();
    expect(listed.items.map((e: any) => e.sequence)).toEqual([e3]);

    // Nothing after e2 was pruned: it resumes exactly.
    expect((await firstFrame(`/api/v1/events/stream?after=${cursors.encode(scope, e2)}`, token)).json().sequence).toBe(
      e3,
    );
    expect(
      (await firstFrame(`/test/screens/scr_keep/events?after=${cursors.encode(screen, e2)}`, token)).json().sequence,
    ).toBe(e3);

    // e2 was pruned after e1: resuming at e1 would skip it.
    const resync = await firstFrame(`/api/v1/events/stream?after=${cursors.encode(scope, e1)}`, token);
    expect(resync.event).toBe('stream.resync_required');
    expect(resync.json()).toMatchObject({ cursor: cursors.encode(scope, e3), details: { reason: 'expired' } });
    const screenResync = await firstFrame(`/test/screens/scr_keep/events?after=${cursors.encode(screen, e1)}`, token);
    expect(screenResync.json()).toMatchObject({
      type: 'stream.resync_required',
      cursor: cursors.encode(screen, e3),
      details: { reason: 'expired' },
    });
    const problem = (
      await server.request('GET', `/api/v1/events?after=${cursors.encode(scope, e1)}`, { token })
    ).json();
    expect(problem).toMatchObject({
      code: 'invalid_request',
      resync_reason: 'expired',
      head_cursor: cursors.encode(scope, e3),
    });

    // The beginning of the stream (position 0) is before pruned events as well.
    const fromZero = await firstFrame(`/api/v1/events/stream?after=${cursors.encode(scope, 0)}`, token);
    expect(fromZero.json().details.reason).toBe('expired');
    // No cursor at all: the oldest retained event.
    expect((await firstFrame('/api/v1/events/stream', token)).json().sequence).toBe(e3);
  });

  it('keeps the head once every event of a scope is pruned, so held cursors stay valid and are not taken for future ones', async () => {
    const { token, projectId } = await server.enroll();
    const scope: StreamScope = { kind: 'tenant', tenantId: projectId };
    const last = await append(projectId);
    server.clock.advance((RETENTION_DAYS + 1) * DAY_MS);
    await server.services.housekeeping.runAll();
    const listed = (await server.request('GET', '/api/v1/events', { token })).json();
    expect(listed).toEqual({ items: [], next_cursor: cursors.encode(scope, last) });
    const reader = await StreamReader.open(server, `/api/v1/events/stream?after=${cursors.encode(scope, last)}`, {
      token,
    });
    const next = await append(projectId);
    expect((await reader.waitForFrames(1))[0]!.json().sequence).toBe(next);
    reader.close();
  });

  it('prunes large backlogs in several short transactions', async () => {
    const { projectId } = await server.enroll();
    const old = server.clock.now();
    const rows = Array.from({ length: 12_000 }, (_, i) => ({
      tenant_id: projectId,
      type: 'bulk',
      severity: 'info' as const,
      message: `${i}`,
      runtime: 0,
      at: old,
    }));
    for (let i = 0; i < rows.length; i += 1000)
      await server.services.store.db
        .insertInto('events')
        .values(rows.slice(i, i + 1000))
        .execute();
    server.clock.advance(RETENTION_DAYS * DAY_MS + 1);
    const kept = await append(projectId);
    const count = async () =>
      Number(
        (
          await server.services.store.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('tenant_id', '=', projectId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count()).toBe(12_002);
    const pruned = await pruneEvents(server.services.store, server.clock.now(), RETENTION_DAYS);
    expect(pruned).toBeGreaterThanOrEqual(12_001); // other tests' tenants are older still
    expect(await count()).toBe(1);
    const mark = await server.services.store.db
      .selectFrom('event_watermarks')
      .select('pruned_through')
      .where('scope', '=', `tenant:${projectId}`)
      .executeTakeFirstOrThrow();
    expect(mark.pruned_through).toBe(kept - 1);
  });
});
