// Test support for the typed client: a client with short real waits, and a fetch that records
// what each request carried (and can lose answers or refuse on cue) in front of the real one.
import { createMarqueeClient, type ClientOptions } from '../client/marquee-client';

export interface RecordedCall {
  url: string;
  method: string;
  headers: Record<string, string>;
}

export type FetchStep =
  | 'pass'
  | 'network-before'
  | 'network-after'
  | { status: number; code?: string; retryAfter?: string };

/** Real fetch behind a script of failures keyed by a predicate; every request is recorded. */
export function recordingFetch(script: { when: (call: RecordedCall) => boolean; steps: FetchStep[] }[] = []) {
  const calls: RecordedCall[] = [];
  const fetchImpl = (async (input: URL | RequestInfo, init?: RequestInit) => {
    const raw = new Headers(init?.headers);
    const headers: Record<string, string> = {};
    raw.forEach((value, name) => (headers[name] = value));
    const call = { url: String(input), method: init?.method ?? 'GET', headers };
    calls.push(call);
    const step = script.find((s) => s.when(call))?.steps.shift() ?? 'pass';
    if (step === 'network-before') throw new TypeError('fetch failed (connection reset before sending)');
    if (step === 'network-after') {
      const response = await fetch(input, init); // the server did the work; the answer is lost on the way back
      await response.arrayBuffer();
      throw new TypeError('fetch failed (connection reset after sending)');
    }
    if (step !== 'pass') {
      const body = {
        type: 'x',
        title: 'x',
        status: step.status,
        detail: 'scripted',
        instance: '/',
        code: step.code ?? 'rate_limited',
        request_id: 'req_scripted',
        errors: [],
      };
      return new Response(JSON.stringify(body), {
        status: step.status,
        headers: {
          'content-type': 'application/problem+json',
          ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}),
        },
      });
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { calls, fetchImpl };
}

/** A client whose retry and poll waits are real but short (a polling loop must not spin). */
export function testClient(baseUrl: string, options: Partial<ClientOptions> = {}) {
  const sleeps: number[] = [];
  const client = createMarqueeClient({
    baseUrl,
    sleep: (ms) => {
      sleeps.push(ms);
      return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 10)));
    },
    ...options,
  });
  return Object.assign(client, { sleeps });
}
