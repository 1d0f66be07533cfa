// The client's event list and live follow against a real Marquee server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import type { EventRecord, ResyncRequired } from '../contract/events';
import { EventStreamError, type EventStream, type StreamMessage } from '../sse/event-stream-client';
import { testClient } from '../testing/client-fixture';
import type { MarqueeProblem } from './marquee-client';

let server: TestServer;
let baseUrl: string;
const streams: EventStream[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  baseUrl = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server?.stop();
});

async function project() {
  return testClient(baseUrl, { token: (await server.enroll()).token });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

/** Renames the project; answers the request id its event carries. */
async function rename(c: Awaited<ReturnType<typeof project>>, name: string): Promise<string> {
  return (await c.project.update({ name })).requestId!;
}

describe('events.list', () => {
  it('pages through the durable events with next_cursor', async () => {
    const c = await project();
    await rename(c, 'One');
    await rename(c, 'Two');
    const all = (await c.events.list()).data.items;
    const renames = all.filter((e) => e.type === 'project.updated');
    expect(renames).toHaveLength(2);
    const first = await c.events.list({ limit: 1 });
    expect(first.data.items).toEqual([all[0]]);
    const second = await c.events.list({ after: first.data.next_cursor, limit: 1 });
    expect(second.data.items).toEqual([all[1]]);
    expect(first.credits?.remaining).toBeTypeOf('number');
  });

  it('answers an unusable cursor with resync_required and the head cursor', async () => {
    const c = await project();
    await rename(c, 'Head');
    const error = (await c.events.list({ after: 'not-a-cursor' }).catch((e: unknown) => e)) as MarqueeProblem;
    expect([error.code, error.errors[0]?.code]).toEqual(['invalid_request', 'resync_required']);
    const head = error.document.head_cursor as string;
    expect((await c.events.list({ after: head })).data.items).toEqual([]);
  });
});

describe('events.follow', () => {
  it('replays after a cursor, follows live changes, and moves its cursor', async () => {
    const c = await project();
    const before = await rename(c, 'Before');
    const { next_cursor } = (await c.events.list()).data;
    const seen: StreamMessage<EventRecord>[] = [];
    const cursors: string[] = [];
    const stream = c.events.follow({
      cursor: next_cursor,
      onEvent: (event) => void seen.push(event),
      onCursor: (cursor) => cursors.push(cursor),
    });
    streams.push(stream);
    const live = await rename(c, 'Live');
    await until(() => seen.some((e) => e.data.request_id === live), 'the live event');
    stream.close();
    await stream.done;
    expect(seen.find((e) => e.data.request_id === live)).toMatchObject({
      type: 'project.updated',
      cursor: expect.any(String),
    });
    expect(seen.some((e) => e.data.request_id === before)).toBe(false); // replay starts after the cursor
    expect(stream.cursor).toBe(seen.at(-1)!.cursor);
    expect(cursors.at(-1)).toBe(stream.cursor);
  });

  it('hands a resync to onResync and resumes at the head cursor', async () => {
    const c = await project();
    await rename(c, 'Old');
    const resyncs: ResyncRequired[] = [];
    const seen: StreamMessage<EventRecord>[] = [];
    const stream = c.events.follow({
      cursor: 'forged.cursor',
      onEvent: (event) => void seen.push(event),
      onResync: (resync) => void resyncs.push(resync),
      initialDelayMs: 20,
    });
    streams.push(stream);
    await until(() => resyncs.length === 1, 'the resync');
    const after = await rename(c, 'After resync');
    await until(() => seen.length > 0, 'the event after the resync');
    stream.close();
    expect(resyncs[0]!.details.reason).toBe('invalid');
    // Resumed at the head: the rename before the resync is not replayed, the one after it is.
    expect(seen.map((e) => e.data.request_id)).toEqual([after]);
  });

  it('ends with EventStreamError when the bearer is refused', async () => {
    const c = testClient(baseUrl, { token: 'mq_proj_not-a-real-token-000000000000000000000' });
    const stream = c.events.follow({ onEvent: () => undefined });
    streams.push(stream);
    const error = (await stream.done.catch((e: unknown) => e)) as EventStreamError;
    expect(error).toBeInstanceOf(EventStreamError);
    expect(error.status).toBe(401);
  });
});
