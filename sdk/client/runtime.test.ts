// The runtime client's own rules against a scripted fetch: deadlines, one attempt per call, what a
// browser and a Node caller send, and which failures count as the server being unreachable.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MarqueeProblem } from './problem';
import { isUnreachable, ManifestRejected, RuntimeClient } from './runtime';

const ORIGIN = 'http://localhost:8080';
const REPORT = { severity: 'info', code: 'manifest.activated', context: { manifest_revision: 'man_1' } } as const;

interface Sent {
  method: string;
  path: string;
  headers: Headers;
  credentials: RequestCredentials | undefined;
  cache: RequestCache | undefined;
}

/** A fetch that records each request and answers with `answer` (by default 202, no body). */
function scripted(answer: (sent: Sent) => Response | Promise<Response> = () => new Response(null, { status: 202 })) {
  const sent: Sent[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request: Sent = {
      method: init?.method ?? 'GET',
      path: new URL(String(input)).pathname,
      headers: new Headers(init?.headers),
      credentials: init?.credentials,
      cache: init?.cache,
    };
    sent.push(request);
    return answer(request);
  };
  return { sent, fetch };
}

/** Waits for the call's signal to abort (a request on a half-open connection). */
const hang = (init: RequestInit | undefined) =>
  new Promise<Response>((_, reject) =>
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }),
  );

const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  Response.json(
    { type: 'about:blank', title: code, status, detail: 'scripted', code, request_id: 'req_scripted' },
    { status, headers: { 'content-type': 'application/problem+json', ...headers } },
  );

const sse = (frames: string) => new Response(frames, { headers: { 'content-type': 'text/event-stream' } });

describe('runtime call deadlines', () => {
  afterEach(() => vi.useRealTimers());

  it('gives up on a hung call after its timeout, as an unreachable server', async () => {
    const client = new RuntimeClient({
      runtimeOrigin: ORIGIN,
      fetch: (_input, init) => hang(init),
      callTimeoutMs: 100,
    });
    const started = Date.now();
    const error = await client.deviceSession(undefined).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(isUnreachable(error)).toBe(true);
  });

  it('leaves no timer behind after a call, and a stop is not an outage', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const client = new RuntimeClient({ runtimeOrigin: ORIGIN, fetch: scripted().fetch });
    await client.report(REPORT);
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
    const stop = new AbortController();
    const hung = new RuntimeClient({ runtimeOrigin: ORIGIN, fetch: (_input, init) => hang(init) });
    const pending = hung.report(REPORT, stop.signal).catch((e: unknown) => e);
    stop.abort();
    expect(isUnreachable(await pending)).toBe(false);
  });
});

describe('one attempt per call: the caller owns backoff', () => {
  it('does not retry a network failure, which counts as unreachable', async () => {
    let attempts = 0;
    const client = new RuntimeClient({
      runtimeOrigin: ORIGIN,
      fetch: async () => {
        attempts++;
        throw new TypeError('fetch failed');
      },
    });
    const error = await client.manifest(null, ORIGIN).catch((e: unknown) => e);
    expect(attempts).toBe(1);
    expect(isUnreachable(error)).toBe(true);
  });

  it('does not wait out a Retry-After: the refusal is an answer (a MarqueeProblem), not an outage', async () => {
    const { sent, fetch } = scripted(() => problem(429, 'rate_limited', { 'retry-after': '1' }));
    const error = await new RuntimeClient({ runtimeOrigin: ORIGIN, fetch }).startPairing().catch((e: unknown) => e);
    expect(sent).toHaveLength(1);
    expect(error).toBeInstanceOf(MarqueeProblem);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1, request_id: 'req_scripted' });
    expect(isUnreachable(error)).toBe(false);
  });

  it('rejects a manifest the player must not play, which is no outage either', async () => {
    const { fetch } = scripted(() => Response.json({ schemaVersion: 2 }));
    const error = await new RuntimeClient({ runtimeOrigin: ORIGIN, fetch }).manifest(null, ORIGIN).catch((e) => e);
    expect(error).toBeInstanceOf(ManifestRejected);
    expect(isUnreachable(error)).toBe(false);
  });
});

describe('what goes on the wire', () => {
  it('in a browser, sends the runtime cookies with every call and stream, never from the HTTP cache', async () => {
    const { sent, fetch } = scripted(({ path }) =>
      path === '/runtime/v1/events' ? sse('event: x\ndata: {}\n\n') : new Response(null, { status: 202 }),
    );
    const client = new RuntimeClient({ runtimeOrigin: ORIGIN, fetch });
    await client.report(REPORT);
    await new Promise<void>((resolve) => {
      const stream = client.events({ onEvent: () => (stream.close(), resolve()) });
    });
    expect(sent.map((s) => [s.path, s.credentials])).toEqual([
      ['/runtime/v1/reports', 'include'],
      ['/runtime/v1/events', 'include'],
    ]);
    expect(sent[0]!.cache).toBe('no-store');
    expect(sent[0]!.headers.get('authorization')).toBeNull();
  });

  it('in Node, sends a credential header with every call and stream, read again for each', async () => {
    let credential = 'Marquee-Session first';
    const { sent, fetch } = scripted(({ path }) =>
      path === '/runtime/v1/pairing-events' ? sse('event: x\ndata: {}\n\n') : new Response(null, { status: 202 }),
    );
    const client = new RuntimeClient({ runtimeOrigin: ORIGIN, fetch, headers: () => ({ Authorization: credential }) });
    await client.report(REPORT);
    credential = 'Marquee-Session renewed';
    await new Promise<void>((resolve) => {
      const stream = client.pairingEvents({ onEvent: () => (stream.close(), resolve()) });
    });
    await client.launch(`${ORIGIN}/runtime/v1/manifests/man_1/releases/rel_1/launch`);
    expect(sent.map((s) => [s.method, s.path, s.headers.get('authorization')])).toEqual([
      ['POST', '/runtime/v1/reports', 'Marquee-Session first'],
      ['GET', '/runtime/v1/pairing-events', 'Marquee-Session renewed'],
      ['POST', '/runtime/v1/manifests/man_1/releases/rel_1/launch', 'Marquee-Session renewed'],
    ]);
  });

  it("tells each answer's Date and the local midpoint (clock skew)", async () => {
    const serverDate = 'Mon, 02 Mar 2026 11:00:00 GMT';
    const dates: Array<[number, number]> = [];
    const { fetch } = scripted(() => new Response(null, { status: 202, headers: { date: serverDate } }));
    const before = Date.now();
    await new RuntimeClient({ runtimeOrigin: ORIGIN, fetch, onServerDate: (s, l) => dates.push([s, l]) }).report(
      REPORT,
    );
    expect(dates).toHaveLength(1);
    expect(dates[0]![0]).toBe(Date.parse(serverDate));
    expect(dates[0]![1]).toBeGreaterThanOrEqual(before);
    expect(dates[0]![1]).toBeLessThanOrEqual(Date.now());
  });
});

describe('the server clock', () => {
  it('asks GET /runtime/v1/time uncached with the cookies and returns its stamps', async () => {
    const { sent, fetch } = scripted(() => Response.json({ received_at_ms: 1000.5, sent_at_ms: 1001 }));
    const client = new RuntimeClient({ runtimeOrigin: ORIGIN, fetch });
    expect(await client.time()).toEqual({ received_at_ms: 1000.5, sent_at_ms: 1001 });
    expect(sent).toMatchObject([
      { method: 'GET', path: '/runtime/v1/time', credentials: 'include', cache: 'no-store' },
    ]);
  });
});
