// The client's own rules, against a scripted fetch. The real server is in server/events/sdk-client.test.ts.
import { describe, expect, it } from 'vitest';
import { backoffDelay, EventStreamError, followEventStream, type StreamMessage } from './event-stream-client';

type Script = (url: URL, init: RequestInit) => Response | Promise<Response>;

/** A fetch that answers attempt n with script[n] (the last one repeats) and records each call. */
function scriptedFetch(...script: Script[]) {
  const calls: { url: URL; headers: Record<string, string> }[] = [];
  const fetch = (async (input: URL | RequestInfo, init: RequestInit = {}) => {
    const url = new URL(String(input));
    calls.push({ url, headers: init.headers as Record<string, string> });
    return script[Math.min(calls.length - 1, script.length - 1)]!(url, init);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

function sse(text: string, { hold = false } = {}): Script {
  return (_url, init) =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text));
          if (!hold) controller.close();
          init.signal?.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')));
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } },
    );
}

const status =
  (code: number, headers: Record<string, string> = {}): Script =>
  () =>
    new Response(JSON.stringify({ code: code === 401 ? 'unauthorized' : 'not_ready' }), {
      status: code,
      headers: { 'content-type': 'application/problem+json', ...headers },
    });

const frame = (id: string, type: string, data: unknown) =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

describe('backoffDelay', () => {
  it('doubles per attempt, jitters between half and all of it, and stops at the cap', () => {
    expect([0, 1, 2, 3].map((n) => backoffDelay(n, 100, 10_000, () => 0))).toEqual([50, 100, 200, 400]);
    expect([0, 1, 2, 3].map((n) => backoffDelay(n, 100, 10_000, () => 0.999999))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(20, 100, 10_000, () => 0.5)).toBe(7500);
    expect(backoffDelay(1000, 100, 10_000, () => 0)).toBe(5000);
  });
});

describe('followEventStream', () => {
  it('sends the caller’s headers and the cursor as after, and retries refusals with growing delays and Retry-After', async () => {
    const { fetch, calls } = scriptedFetch(
      status(503),
      status(503),
      status(429, { 'retry-after': '1' }),
      sse(frame('c2', 'test.x', { n: 2 }), { hold: true }),
    );
    const delays: number[] = [];
    const got: StreamMessage[] = [];
    const stream = followEventStream({
      url: 'http://marquee.test/api/v1/events/stream',
      cursor: 'c1',
      headers: () => ({ authorization: 'Bearer t0ken' }),
      fetch,
      initialDelayMs: 10,
      random: () => 0,
      onRetry: (r) => void delays.push(r.delayMs),
      onEvent: (m) => {
        got.push(m);
        stream.close();
      },
    });
    await stream.done;
    expect(delays).toEqual([5, 10, 1000]);
    expect(calls.map((c) => c.url.searchParams.get('after'))).toEqual(['c1', 'c1', 'c1', 'c1']);
    expect(
      calls.every((c) => c.headers.authorization === 'Bearer t0ken' && c.headers.accept === 'text/event-stream'),
    ).toBe(true);
    expect(got).toEqual([{ cursor: 'c2', type: 'test.x', data: { n: 2 } }]);
    expect(stream.cursor).toBe('c2');
  });

  it('sends the cursor as Last-Event-ID when asked', async () => {
    const { fetch, calls } = scriptedFetch(sse(frame('c2', 'test.x', {}), { hold: true }));
    const stream = followEventStream({
      url: 'http://marquee.test/s?after=old',
      cursor: 'c1',
      cursorIn: 'header',
      fetch,
      onEvent: () => stream.close(),
    });
    await stream.done;
    expect(calls[0]!.headers['last-event-id']).toBe('c1');
    expect(calls[0]!.url.searchParams.get('after')).toBe('old');
  });

  it('gives up on a refusal no retry can fix', async () => {
    const { fetch, calls } = scriptedFetch(status(401));
    let retries = 0;
    const stream = followEventStream({
      url: 'http://marquee.test/s',
      fetch,
      onRetry: () => retries++,
      onEvent: () => undefined,
    });
    const error = await stream.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventStreamError);
    expect(error).toMatchObject({ status: 401, problem: { code: 'unauthorized' } });
    expect(calls.length).toBe(1);
    expect(retries).toBe(0);
  });

  it('reconnects from the last cursor after the server ends the stream, and resets the backoff once frames flow', async () => {
    const { fetch, calls } = scriptedFetch(
      sse(frame('c1', 'a', 1) + frame('c2', 'a', 2)),
      status(503),
      sse(frame('c3', 'a', 3), { hold: true }),
    );
    const cursors: string[] = [];
    const delays: number[] = [];
    const stream = followEventStream({
      url: 'http://marquee.test/s',
      fetch,
      initialDelayMs: 4,
      random: () => 0,
      onCursor: (c) => void cursors.push(c),
      onRetry: (r) => void delays.push(r.delayMs),
      onEvent: (m) => {
        if (m.cursor === 'c3') stream.close();
      },
    });
    await stream.done;
    expect(cursors).toEqual(['c1', 'c2', 'c3']);
    expect(calls.map((c) => c.url.searchParams.get('after'))).toEqual([null, 'c2', 'c2']);
    expect(delays).toEqual([2, 4]);
  });

  it('hands stream.resync_required to onResync, not onEvent, and resumes at its head cursor at once', async () => {
    const resyncData = {
      cursor: 'head',
      sequence: 9,
      type: 'stream.resync_required',
      severity: 'warning',
      message: 'm',
      at: 'now',
      details: { reason: 'expired' },
    };
    const { fetch, calls } = scriptedFetch(
      sse(frame('head', 'stream.resync_required', resyncData)),
      sse(frame('c10', 'test.x', {}), { hold: true }),
    );
    const resyncs: unknown[] = [];
    const events: string[] = [];
    let retries = 0;
    const stream = followEventStream({
      url: 'http://marquee.test/s',
      cursor: 'stale',
      fetch,
      onRetry: () => retries++,
      onResync: async (r) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        resyncs.push(r);
      },
      onEvent: (m) => {
        events.push(m.type);
        stream.close();
      },
    });
    await stream.done;
    expect(resyncs).toEqual([resyncData]);
    expect(events).toEqual(['test.x']);
    expect(calls.map((c) => c.url.searchParams.get('after'))).toEqual(['stale', 'head']);
    expect(retries).toBe(0);
  });

  it('moves the cursor on payload-free stream.cursor frames without an event', async () => {
    const { fetch } = scriptedFetch(
      sse(`id: c5\nevent: stream.cursor\ndata: \n\n${frame('c6', 'test.x', {})}`, { hold: true }),
    );
    const cursors: string[] = [];
    const events: string[] = [];
    const stream = followEventStream({
      url: 'http://marquee.test/s',
      fetch,
      onCursor: (c) => void cursors.push(c),
      onEvent: (m) => {
        events.push(m.cursor!);
        stream.close();
      },
    });
    await stream.done;
    expect(cursors).toEqual(['c5', 'c6']);
    expect(events).toEqual(['c6']);
  });

  it('treats a silent connection as dead after the idle timeout and reconnects', async () => {
    const { fetch, calls } = scriptedFetch(
      sse('retry: 3000\n\n', { hold: true }),
      sse(frame('c1', 'test.x', {}), { hold: true }),
    );
    const stream = followEventStream({
      url: 'http://marquee.test/s',
      fetch,
      idleTimeoutMs: 50,
      initialDelayMs: 1,
      onEvent: () => stream.close(),
    });
    await stream.done;
    expect(calls.length).toBe(2);
  });

  it('ends when its AbortSignal aborts, and rejects with the error a callback throws without retrying', async () => {
    const controller = new AbortController();
    const { fetch } = scriptedFetch(sse('', { hold: true }));
    const aborted = followEventStream({
      url: 'http://marquee.test/s',
      fetch,
      signal: controller.signal,
      onEvent: () => undefined,
    });
    setTimeout(() => controller.abort(), 10);
    await expect(aborted.done).resolves.toBeUndefined();

    const scripted = scriptedFetch(sse(frame('c1', 'test.x', {}), { hold: true }));
    let retries = 0;
    const failing = followEventStream({
      url: 'http://marquee.test/s',
      fetch: scripted.fetch,
      onRetry: () => retries++,
      onEvent: () => {
        throw new TypeError('handler bug');
      },
    });
    await expect(failing.done).rejects.toThrow('handler bug');
    expect(failing.cursor).toBeUndefined(); // not moved past an event that was not handled
    expect(retries).toBe(0);
    expect(scripted.calls.length).toBe(1);
  });

  it('hands over no event after its AbortSignal aborts, even from the read that is being handed over', async () => {
    const controller = new AbortController();
    // One read holds three frames, as a replay does.
    const { fetch } = scriptedFetch(
      sse(frame('c1', 'test.x', { n: 1 }) + frame('c2', 'test.x', { n: 2 }) + frame('c3', 'test.x', { n: 3 }), {
        hold: true,
      }),
    );
    const seen: string[] = [];
    const stream = followEventStream({
      url: 'http://marquee.test/s',
      fetch,
      signal: controller.signal,
      onEvent: (message) => {
        seen.push(message.cursor!);
        controller.abort(); // "stop after one"
      },
    });
    await expect(stream.done).resolves.toBeUndefined();
    expect(seen).toEqual(['c1']);
    expect(stream.cursor).toBe('c1');
  });
});
