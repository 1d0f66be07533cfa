// Test helpers: drive pairing over HTTP with a cookie jar, and read event streams to their end.
import { expect } from 'vitest';
import { CookieJar, randomKey, type TestServer } from '../testing/harness';

export interface SseFrame {
  id?: string;
  event?: string;
  data?: any;
}

export function parseSse(text: string): SseFrame[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((l) => l.startsWith('data:') || l.startsWith('event:')))
    .map((block) => {
      const frame: SseFrame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) frame.data = line.length > 6 ? JSON.parse(line.slice(6)) : undefined;
      }
      return frame;
    });
}

/** Opens a stream; `done` resolves with status, headers and frames when the server ends it. */
export function openStream(server: TestServer, path: string, cookies: CookieJar) {
  let status = 0;
  let headers: Record<string, unknown> = {};
  let text = '';
  let onData: (() => void) | undefined;
  const done = new Promise<{ status: number; headers: Record<string, unknown>; frames: SseFrame[]; text: string }>(
    (resolve, reject) => {
      const req = server.rawRequest('GET', path, { cookies, headers: { accept: 'text/event-stream' } }, (res) => {
        status = res.statusCode!;
        headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          onData?.();
        });
        res.on('end', () => resolve({ status, headers, frames: parseSse(text), text }));
        res.on('error', reject);
      });
      req.on('error', reject);
    },
  );
  /** Resolves once the stream has written something (the preamble, at least). */
  const opened = new Promise<void>((resolve) => {
    onData = resolve;
  });
  return { done, opened };
}

/** Starts a pairing session as a player would; returns its code and cookie jar. */
export async function startPairing(
  server: TestServer,
  cookies = new CookieJar(),
): Promise<{ code: string; cookies: CookieJar; body: any }> {
  const res = await server.request('POST', '/runtime/v1/pairing-sessions', { cookies });
  expect(res.status, res.text).toBe(201);
  return { code: res.json().code, cookies, body: res.json() };
}

export async function claimCode(server: TestServer, token: string, code: string, extra: Record<string, unknown> = {}) {
  return server.request('POST', '/api/v1/screens/pair', {
    token,
    json: { code, ...extra },
    idempotencyKey: randomKey(),
  });
}

/** Pairs a new screen end to end (start, claim, events, complete) and returns the player's jar. */
export async function pairActiveScreen(
  server: TestServer,
  token: string,
): Promise<{ screen: any; cookies: CookieJar; publicUrl: string }> {
  const { code, cookies } = await startPairing(server);
  const claim = await claimCode(server, token, code);
  expect(claim.status, claim.text).toBe(201);
  const events = await openStream(server, '/runtime/v1/pairing-events', cookies).done;
  const nonce = events.frames[0]!.data.completion_nonce;
  const done = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
    cookies,
    json: { completion_nonce: nonce },
  });
  expect(done.status, done.text).toBe(200);
  return { screen: done.json().screen, cookies, publicUrl: done.json().public_url };
}

/** Claims a code without completing: a pairing_pending screen. */
export async function pairPendingScreen(server: TestServer, token: string): Promise<any> {
  const { code } = await startPairing(server);
  const claim = await claimCode(server, token, code);
  expect(claim.status, claim.text).toBe(201);
  return claim.json().screen;
}
