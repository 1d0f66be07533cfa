import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAIRING_CODE_PATTERN } from '../../sdk/contract/screens';
import { TestClock } from '../clock';
import type { RouteEntry } from '../http/dispatch';
import { query, reply } from '../http/route';
import { CookieJar, randomKey, TestServer } from '../testing/harness';
import { pairedRuntimeCookie, runtimeCookie } from './pairing.auth';
import { DEVICE_COOKIE, PAIRING_COOKIE, RUNTIME_COOKIE } from './pairing-cookies';
import { claimCode, openStream, pairActiveScreen, pairPendingScreen, startPairing } from './pairing.fixtures';

const whoami = (ctx: { principal: { screenId: string; paired: boolean; capabilities: readonly string[] } }) =>
  reply.ok({ screen: ctx.principal.screenId, paired: ctx.principal.paired, capabilities: ctx.principal.capabilities });

const extraRoutes: RouteEntry[] = [
  {
    plane: 'runtime',
    method: 'GET',
    path: '/test/runtime',
    route: query({ auth: runtimeCookie }, async (ctx) => whoami(ctx)),
  },
  {
    plane: 'runtime',
    method: 'GET',
    path: '/test/paired-runtime',
    route: query({ auth: pairedRuntimeCookie }, async (ctx) => whoami(ctx)),
  },
];

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z'), extraRoutes });
  token = (await server.enroll()).token;
});
afterAll(async () => server.stop());

/** Moves past the per-minute budgets so each test starts with fresh windows. */
function nextMinute() {
  server.clock.advance(61_000);
}

function setCookieLine(res: { headers: Record<string, unknown> }, name: string): string {
  const lines = (res.headers['set-cookie'] as string[] | undefined) ?? [];
  const line = lines.find((l) => l.startsWith(`${name}=`));
  expect(line, `Set-Cookie ${name}`).toBeDefined();
  return line!;
}

async function screenCount(t = token): Promise<number> {
  return (await server.request('GET', '/api/v1/project', { token: t })).json().screen_count;
}

describe('pairing end to end', () => {
  it('pairs a player: code → claim → pairing.claimed → complete → device session', async () => {
    nextMinute();
    const jar = new CookieJar();
    const start = await server.request('POST', '/runtime/v1/pairing-sessions', { cookies: jar });
    expect(start.status).toBe(201);
    expect(start.headers['cache-control']).toBe('no-store');
    const { code, expires_at } = start.json();
    expect(code).toMatch(PAIRING_CODE_PATTERN);
    expect(Date.parse(expires_at) - server.clock.now()).toBe(10 * 60_000);
    const pairingCookie = setCookieLine(start, PAIRING_COOKIE);
    for (const attr of ['HttpOnly', 'Secure', 'Path=/', 'SameSite=Strict', 'Max-Age=1200'])
      expect(pairingCookie).toContain(attr);
    expect(pairingCookie).not.toContain('Domain');

    // The player listens before the claim: the frame arrives live, then the stream ends.
    const stream = openStream(server, '/runtime/v1/pairing-events', jar);
    await stream.opened;

    const claim = await claimCode(server, token, code, { label: 'Lobby' });
    expect(claim.status).toBe(201);
    expect(claim.headers['cache-control']).toBe('private, no-store');
    const { screen, public_url } = claim.json();
    expect(screen).toMatchObject({
      label: 'Lobby',
      name: 'Lobby',
      state: 'pairing_pending',
      revision: 1,
      manifest_revision: 1,
      content_access_generation: 1,
      tags: [],
      online: false,
    });
    expect(public_url).toBe(`${server.config.playOrigin}/s/${screen.public_id}`);
    expect(screen.public_id).toMatch(/^[A-Za-z0-9_-]{20,}$/);

    const events = await stream.done;
    expect(events.status).toBe(200);
    expect(events.headers['content-type']).toContain('text/event-stream');
    expect(events.frames).toHaveLength(1);
    expect(events.frames[0]!.event).toBe('pairing.claimed');
    expect(Object.keys(events.frames[0]!.data).sort()).toEqual(['completion_nonce', 'type']);
    expect(events.frames[0]!.data.type).toBe('pairing.claimed');
    const nonce = events.frames[0]!.data.completion_nonce;
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const complete = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies: jar,
      json: { completion_nonce: nonce },
    });
    expect(complete.status).toBe(200);
    expect(complete.headers['cache-control']).toBe('no-store');
    expect(complete.json().screen).toMatchObject({ id: screen.id, state: 'active', revision: 2 });
    expect(complete.json().public_url).toBe(public_url);
    const device = setCookieLine(complete, DEVICE_COOKIE);
    for (const attr of ['HttpOnly', 'Secure', 'Path=/', 'SameSite=Strict']) expect(device).toContain(attr);
    expect(setCookieLine(complete, PAIRING_COOKIE)).toContain('Max-Age=0');
    expect(jar.get(server.host, PAIRING_COOKIE)).toBeUndefined();

    const session = await server.request('POST', '/runtime/v1/device-sessions', { cookies: jar });
    expect(session.status).toBe(201);
    expect(session.json()).toEqual({
      paired: true,
      capabilities: [
        'manifest.read',
        'events.read',
        'content.read',
        'kv.read',
        'kv.write',
        'runtime.report',
        'presence.write',
      ],
      event_cursor: expect.any(String),
      public_url,
      display: { power: null, schedule: null },
    });
    expect(setCookieLine(session, RUNTIME_COOKIE)).toContain('Max-Age=86400');

    const me = await server.request('GET', '/test/paired-runtime', { cookies: jar });
    expect(me.status).toBe(200);
    expect(me.json()).toMatchObject({ screen: screen.id, paired: true });

    const shown = await server.request('GET', `/api/v1/screens/${screen.id}`, { token });
    expect(shown.json()).toMatchObject({ state: 'active', revision: 2 });
    const log = await server.services.store.db
      .selectFrom('events')
      .select(['type', 'screen_id'])
      .where('screen_id', '=', screen.id)
      .orderBy('position')
      .execute();
    expect(log.map((e) => e.type)).toEqual(['screen.paired', 'screen.updated', 'screen.activated']);
  });

  it('replays a claim that happened before the stream connected, then closes', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    await claimCode(server, token, code);
    const first = await openStream(server, '/runtime/v1/pairing-events', cookies).done;
    const again = await openStream(server, '/runtime/v1/pairing-events', cookies).done;
    expect(first.frames.map((f) => f.event)).toEqual(['pairing.claimed']);
    expect(again.frames[0]!.data).toEqual(first.frames[0]!.data);
  });

  it('answers HEAD of the pairing stream with its headers and ends, holding nothing open (review 3, finding D)', async () => {
    nextMinute();
    const { cookies } = await startPairing(server);
    const socket = net.connect(server.port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    await new Promise((resolve) => socket.once('connect', resolve));
    // A request pipelined behind the HEAD is answered only if the HEAD's answer ended.
    socket.write(
      `HEAD /runtime/v1/pairing-events HTTP/1.1\r\nHost: ${server.host}\r\nCookie: ${cookies.header(server.host)}\r\n\r\n`,
    );
    socket.write(`GET /.health HTTP/1.1\r\nHost: ${server.host}\r\n\r\n`);
    const statuses = () => text.match(/^HTTP\/1\.1 \d+/gm) ?? [];
    for (const deadline = Date.now() + 2000; statuses().length < 2 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    expect(statuses()).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(text).toMatch(/content-type: text\/event-stream/i);
    expect((await server.request('HEAD', '/runtime/v1/pairing-events')).status).toBe(401);
  });

  it('answers an exact retry of a claim with the original result without consuming quota', async () => {
    nextMinute();
    const { code } = await startPairing(server);
    const key = randomKey();
    const first = await server.request('POST', '/api/v1/screens/pair', { token, json: { code }, idempotencyKey: key });
    const count = await screenCount();
    const again = await server.request('POST', '/api/v1/screens/pair', { token, json: { code }, idempotencyKey: key });
    expect(again.status).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(await screenCount()).toBe(count);
    const other = await server.request('POST', '/api/v1/screens/pair', {
      token,
      json: { code, label: 'Other' },
      idempotencyKey: key,
    });
    expect(other.status).toBe(409);
    expect(other.json().code).toBe('idempotency_mismatch');
  });

  it('gives a code claimed by several projects at the same moment to one of them', async () => {
    nextMinute();
    const { code } = await startPairing(server);
    const tokens = [token, ...(await Promise.all([1, 2, 3].map(async () => (await server.enroll()).token)))];
    const counts = async () => (await Promise.all(tokens.map((t) => screenCount(t)))).reduce((a, b) => a + b, 0);
    const before = await counts();
    const answers = await Promise.all(
      tokens.map((t) =>
        server.request('POST', '/api/v1/screens/pair', { token: t, json: { code }, idempotencyKey: randomKey() }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 404, 404, 404]);
    expect((await counts()) - before).toBe(1);
  });

  it('defaults the label to the dashed code', async () => {
    nextMinute();
    const { code } = await startPairing(server);
    const claim = await claimCode(server, token, code);
    expect(claim.json().screen.label).toBe(`Screen ${code.slice(0, 3)}-${code.slice(3)}`);
  });

  it('lets an account (Model A) claim codes too', async () => {
    nextMinute();
    const account = await server.createAccount();
    const { code } = await startPairing(server);
    const claim = await claimCode(server, account.token, code);
    expect(claim.status).toBe(201);
    expect(claim.json().screen.state).toBe('pairing_pending');
  });

  it('refuses a second claim of the same code', async () => {
    nextMinute();
    const { code } = await startPairing(server);
    expect((await claimCode(server, token, code)).status).toBe(201);
    const again = await claimCode(server, token, code);
    expect(again.status).toBe(404);
  });

  it('validates the code and label', async () => {
    nextMinute();
    for (const json of [
      { code: 'ABC12O' },
      { code: 'abcdef' },
      { code: 'ABCDEFG' },
      { code: 'ABCDEF', label: '' },
      { code: 'ABCDEF', extra: 1 },
    ]) {
      const res = await server.request('POST', '/api/v1/screens/pair', { token, json, idempotencyKey: randomKey() });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });
});

describe('completion', () => {
  it('refuses completion before the claim, and with a wrong nonce', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    const early = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies,
      json: { completion_nonce: 'x'.repeat(43) },
    });
    expect(early.status).toBe(409);
    expect(early.json().code).toBe('resource_conflict');
    await claimCode(server, token, code);
    const wrong = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies,
      json: { completion_nonce: 'y'.repeat(43) },
    });
    expect(wrong.status).toBe(403);
    const malformed = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies,
      json: { completion_nonce: 'short' },
    });
    expect(malformed.status).toBe(400);
  });

  it('answers a retried completion with the same screen and device credential, moving nothing', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    const claim = await claimCode(server, token, code);
    const nonce = (await openStream(server, '/runtime/v1/pairing-events', cookies).done).frames[0]!.data
      .completion_nonce;
    const saved = cookies.get(server.host, PAIRING_COOKIE)!;
    const first = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies,
      json: { completion_nonce: nonce },
    });
    // The answer was lost: the browser still holds its pairing cookie and retries.
    const retryJar = new CookieJar();
    retryJar.set(server.host, PAIRING_COOKIE, saved);
    const retry = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies: retryJar,
      json: { completion_nonce: nonce },
    });
    expect(retry.status).toBe(200);
    expect(retry.json().screen).toMatchObject({ id: claim.json().screen.id, revision: first.json().screen.revision });
    expect(retryJar.get(server.host, DEVICE_COOKIE)).toBe(cookies.get(server.host, DEVICE_COOKIE));
  });
});

describe('renewing a code', () => {
  it('expires the previous code of the same pairing cookie: a late claim of it is not_found, never a stranded screen', async () => {
    nextMinute();
    const { code: old, cookies } = await startPairing(server);
    server.clock.advance(9 * 60_000); // the player renews a minute before the code expires
    const { code: renewed } = await startPairing(server, cookies);
    expect(renewed).not.toBe(old);
    const count = await screenCount();
    const late = await claimCode(server, token, old);
    expect(late.status).toBe(404);
    expect(late.json().code).toBe('not_found');
    expect(await screenCount()).toBe(count);
    // The renewed code pairs as usual.
    expect((await claimCode(server, token, renewed)).status).toBe(201);
    const nonce = (await openStream(server, '/runtime/v1/pairing-events', cookies).done).frames[0]!.data
      .completion_nonce;
    expect(
      (
        await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
          cookies,
          json: { completion_nonce: nonce },
        })
      ).status,
    ).toBe(200);
  });

  it("leaves other players' codes alone", async () => {
    nextMinute();
    const other = await startPairing(server);
    await startPairing(server);
    expect((await claimCode(server, token, other.code)).status).toBe(201);
  });

  it('answers 409 when the code being replaced was just claimed, so the player completes that pairing', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    const claim = await claimCode(server, token, code);
    const renew = await server.request('POST', '/runtime/v1/pairing-sessions', { cookies });
    expect(renew.status).toBe(409);
    expect(renew.json().code).toBe('resource_conflict');
    expect(renew.headers['set-cookie']).toBeUndefined();
    const nonce = (await openStream(server, '/runtime/v1/pairing-events', cookies).done).frames[0]!.data
      .completion_nonce;
    expect(
      (
        await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
          cookies,
          json: { completion_nonce: nonce },
        })
      ).status,
    ).toBe(200);
    expect((await server.request('GET', `/api/v1/screens/${claim.json().screen.id}`, { token })).json().state).toBe(
      'active',
    );
  });

  it('starts afresh when the claimed screen was deleted before the player completed', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    const claim = await claimCode(server, token, code);
    expect((await server.request('DELETE', `/api/v1/screens/${claim.json().screen.id}`, { token })).status).toBe(204);
    const renew = await server.request('POST', '/runtime/v1/pairing-sessions', { cookies });
    expect(renew.status).toBe(201);
  });
});

describe('expiry and guessing', () => {
  it('expires an unclaimed code after ten minutes: no claim, no stream', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    server.clock.advance(10 * 60_000);
    const claim = await claimCode(server, token, code);
    expect(claim.status).toBe(404);
    const stream = await server.request('GET', '/runtime/v1/pairing-events', { cookies });
    expect(stream.status).toBe(401);
  });

  it('keeps a claimed session completable after the code window, until the cookie expires', async () => {
    nextMinute();
    const { code, cookies } = await startPairing(server);
    server.clock.advance(9 * 60_000);
    await claimCode(server, token, code);
    server.clock.advance(5 * 60_000);
    const nonce = (await openStream(server, '/runtime/v1/pairing-events', cookies).done).frames[0]!.data
      .completion_nonce;
    const done = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
      cookies,
      json: { completion_nonce: nonce },
    });
    expect(done.status).toBe(200);
  });

  it('limits wrong codes per tenant and per IP, counting only misses', async () => {
    server.clock.advance(10 * 60_000);
    const guesser = (await server.enroll()).token;
    const bystander = (await server.enroll()).token;
    for (let i = 0; i < 10; i++) {
      const miss = await claimCode(server, guesser, 'ZZZZZZ');
      expect(miss.status).toBe(404);
    }
    const { code } = await startPairing(server);
    const limited = await claimCode(server, guesser, code);
    expect(limited.status).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The misses came from this IP too: another tenant on it is held back as well.
    expect((await claimCode(server, bystander, code)).status).toBe(429);
    server.clock.advance(10 * 60_000);
    const fresh = await startPairing(server);
    expect((await claimCode(server, guesser, fresh.code)).status).toBe(201);
  });

  it('limits claims per minute per tenant', async () => {
    server.clock.advance(10 * 60_000);
    const busy = (await server.enroll()).token;
    const codes: string[] = [];
    for (let i = 0; i < 16; i++) codes.push((await startPairing(server)).code);
    nextMinute();
    for (let i = 0; i < 16; i++) codes.push((await startPairing(server)).code);
    for (let i = 0; i < 30; i++) expect((await claimCode(server, busy, codes[i]!)).status).toBe(201);
    const limited = await claimCode(server, busy, codes[30]!);
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toContain('pairing-claim');
  });

  it('limits pairing starts per IP', async () => {
    nextMinute();
    for (let i = 0; i < 20; i++)
      expect((await server.request('POST', '/runtime/v1/pairing-sessions')).status).toBe(201);
    const limited = await server.request('POST', '/runtime/v1/pairing-sessions');
    expect(limited.status).toBe(429);
    expect(limited.headers['set-cookie']).toBeUndefined();
  });
});

describe('realms', () => {
  it('refuses a bearer on every runtime route', async () => {
    nextMinute();
    for (const [method, path] of [
      ['POST', '/runtime/v1/pairing-sessions'],
      ['GET', '/runtime/v1/pairing-events'],
      ['POST', '/runtime/v1/pairing-sessions/complete'],
      ['POST', '/runtime/v1/device-sessions'],
      ['POST', '/runtime/v1/sessions'],
      ['GET', '/test/runtime'],
    ] as const) {
      const res = await server.request(method, path, { token });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('refuses player cookies on control routes', async () => {
    nextMinute();
    const { cookies } = await pairActiveScreen(server, token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    expect(cookies.get(server.host, DEVICE_COOKIE)).toBeDefined();
    expect(cookies.get(server.host, RUNTIME_COOKIE)).toBeDefined();
    for (const path of ['/api/v1/screens', '/api/v1/playlists', '/api/v1/project']) {
      const res = await server.request('GET', path, { cookies });
      expect(res.status, path).toBe(401);
    }
  });

  it('keeps the player cookies apart: each authorizes only its own routes', async () => {
    nextMinute();
    const { code, cookies: pairingJar } = await startPairing(server);
    await claimCode(server, token, code);
    // A pairing cookie is not a device cookie, nor a runtime cookie.
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies: pairingJar })).status).toBe(401);
    expect((await server.request('GET', '/test/runtime', { cookies: pairingJar })).status).toBe(401);

    const { cookies } = await pairActiveScreen(server, token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    const deviceOnly = new CookieJar();
    deviceOnly.set(server.host, DEVICE_COOKIE, cookies.get(server.host, DEVICE_COOKIE)!);
    expect((await server.request('GET', '/test/runtime', { cookies: deviceOnly })).status).toBe(401);
    expect((await server.request('GET', '/runtime/v1/pairing-events', { cookies: deviceOnly })).status).toBe(401);
    const runtimeOnly = new CookieJar();
    runtimeOnly.set(server.host, RUNTIME_COOKIE, cookies.get(server.host, RUNTIME_COOKIE)!);
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies: runtimeOnly })).status).toBe(401);
    expect((await server.request('GET', '/test/runtime', { cookies: runtimeOnly })).status).toBe(200);
    // A value signed for one purpose never verifies as another.
    const swapped = new CookieJar();
    swapped.set(server.host, RUNTIME_COOKIE, cookies.get(server.host, DEVICE_COOKIE)!);
    expect((await server.request('GET', '/test/runtime', { cookies: swapped })).status).toBe(401);
  });

  it('refuses a tampered cookie', async () => {
    nextMinute();
    const { cookies } = await pairActiveScreen(server, token);
    const value = cookies.get(server.host, DEVICE_COOKIE)!;
    const [payload, signature] = value.split('.');
    const forged = Buffer.from(JSON.stringify({ d: 'dev_someone_else' })).toString('base64url');
    const jar = new CookieJar();
    jar.set(server.host, DEVICE_COOKIE, `${forged}.${signature}`);
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies: jar })).status).toBe(401);
    jar.set(server.host, DEVICE_COOKIE, `${payload}.${signature!.slice(0, -2)}xx`);
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies: jar })).status).toBe(401);
  });

  it('refuses the paired profile to an anonymous session', async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    const jar = new CookieJar();
    const session = await server.request('POST', '/runtime/v1/sessions', {
      cookies: jar,
      json: { public_id: screen.public_id },
    });
    expect(session.status).toBe(201);
    expect(session.json()).toMatchObject({
      paired: false,
      capabilities: ['manifest.read', 'events.read', 'content.read', 'kv.read'],
    });
    expect((await server.request('GET', '/test/runtime', { cookies: jar })).json()).toMatchObject({
      screen: screen.id,
      paired: false,
    });
    expect((await server.request('GET', '/test/paired-runtime', { cookies: jar })).status).toBe(403);
  });

  it('refuses cross-site browser requests to start pairing', async () => {
    nextMinute();
    const evil = await server.request('POST', '/runtime/v1/pairing-sessions', {
      headers: { origin: 'https://evil.example' },
    });
    expect(evil.status).toBe(403);
    const crossSite = await server.request('POST', '/runtime/v1/pairing-sessions', {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    const same = await server.request('POST', '/runtime/v1/pairing-sessions', {
      headers: { origin: server.config.playOrigin, 'sec-fetch-site': 'same-origin' },
    });
    expect(same.status).toBe(201);
    // A player on the LAN opened at the server's address is same-origin with the host it talks to.
    const lan = await server.request('POST', '/runtime/v1/pairing-sessions', {
      host: `192.168.1.5:${server.port}`,
      headers: { origin: `http://192.168.1.5:${server.port}` },
    });
    expect(lan.status).toBe(201);
    const spoof = await server.request('POST', '/runtime/v1/pairing-sessions', {
      host: `192.168.1.5:${server.port}`,
      headers: { origin: `http://192.168.1.6:${server.port}` },
    });
    expect(spoof.status).toBe(403);
  });
});

describe('runtime sessions', () => {
  it('opens a read-only session by public id; an unknown id is not_found', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const ok = await server.request('POST', '/runtime/v1/sessions', { json: { public_id: screen.public_id } });
    expect(ok.status).toBe(201);
    expect(ok.json().public_url).toBe(`${server.config.playOrigin}/s/${screen.public_id}`);
    expect((await server.request('POST', '/runtime/v1/sessions', { json: { public_id: 'nope' } })).status).toBe(404);
    expect((await server.request('POST', '/runtime/v1/sessions', { json: {} })).status).toBe(400);
  });

  it('answers a device session that names another public id with resource_conflict and the right URL', async () => {
    nextMinute();
    const { cookies, publicUrl } = await pairActiveScreen(server, token);
    const res = await server.request('POST', '/runtime/v1/device-sessions', {
      cookies,
      json: { public_id: 'not-mine' },
    });
    expect(res.status).toBe(409);
    expect(res.json().public_url).toBe(publicUrl);
  });

  it('expires a runtime session after a day; the device cookie opens a new one', async () => {
    nextMinute();
    const { cookies } = await pairActiveScreen(server, token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    server.clock.advance(24 * 3600_000);
    expect((await server.request('GET', '/test/runtime', { cookies })).status).toBe(401);
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies })).status).toBe(201);
    expect((await server.request('GET', '/test/runtime', { cookies })).status).toBe(200);
  });

  it('invalidates runtime sessions on public-id rotation and keeps the device credential', async () => {
    nextMinute();
    const { screen, cookies } = await pairActiveScreen(server, token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    const anon = new CookieJar();
    await server.request('POST', '/runtime/v1/sessions', { cookies: anon, json: { public_id: screen.public_id } });
    const rotated = await server.request('POST', `/api/v1/screens/${screen.id}/public-id/rotate`, { token });
    expect(rotated.status).toBe(200);
    expect((await server.request('GET', '/test/runtime', { cookies })).status).toBe(401);
    expect((await server.request('GET', '/test/runtime', { cookies: anon })).status).toBe(401);
    expect(
      (await server.request('POST', '/runtime/v1/sessions', { json: { public_id: screen.public_id } })).status,
    ).toBe(404);
    const fresh = await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    expect(fresh.status).toBe(201);
    expect(fresh.json().public_url).toBe(`${server.config.playOrigin}/s/${rotated.json().public_id}`);
    expect((await server.request('GET', '/test/runtime', { cookies })).status).toBe(200);
  });

  it('revokes the device credential and runtime sessions when the screen is deleted', async () => {
    nextMinute();
    const { screen, cookies } = await pairActiveScreen(server, token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    expect((await server.request('DELETE', `/api/v1/screens/${screen.id}`, { token })).status).toBe(204);
    expect((await server.request('GET', '/test/runtime', { cookies })).status).toBe(401);
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies })).status).toBe(401);
  });

  it('revokes the device credential on credential revoke (Model A) and keeps the public URL', async () => {
    nextMinute();
    const account = await server.createAccount();
    const { screen, cookies } = await pairActiveScreen(server, account.token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    const revoked = await server.request('POST', `/api/v1/screens/${screen.id}/credential/revoke`, {
      token: account.token,
      ifMatch: 2,
      idempotencyKey: randomKey(),
    });
    expect(revoked.status).toBe(200);
    expect(revoked.json()).toMatchObject({
      public_id: screen.public_id,
      revision: 3,
      content_access_generation: 2,
      state: 'active',
    });
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies })).status).toBe(401);
    expect((await server.request('GET', '/test/runtime', { cookies })).status).toBe(401);
    expect(
      (await server.request('POST', '/runtime/v1/sessions', { json: { public_id: screen.public_id } })).status,
    ).toBe(201);
    const types = (
      await server.services.store.db
        .selectFrom('events')
        .select('type')
        .where('screen_id', '=', screen.id)
        .orderBy('position')
        .execute()
    ).map((e) => e.type);
    expect(types.slice(-3)).toEqual(['screen.updated', 'screen.credential_revoked', 'screen.manifest_changed']);
    // Credential revoke is a Model A route.
    const asProject = await server.request('POST', `/api/v1/screens/${screen.id}/credential/revoke`, { token });
    expect(asProject.status).toBe(403);
  });
});

describe('browser provisioning', () => {
  it('provisions a screen, exchanges the fragment token once, and redelivers it to an exact retry', async () => {
    nextMinute();
    const key = randomKey();
    const count = await screenCount();
    const res = await server.request('POST', '/api/v1/screens/provision', {
      token,
      json: { label: 'Kiosk' },
      idempotencyKey: key,
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const body = res.json();
    expect(body.screen).toMatchObject({ label: 'Kiosk', state: 'pairing_pending' });
    expect(body.public_url).toBe(`${server.config.playOrigin}/s/${body.screen.public_id}`);
    expect(body.provisioning_url).toMatch(new RegExp(`^${body.public_url}#provision=[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(body.expires_at) - server.clock.now()).toBe(10 * 60_000);
    expect(await screenCount()).toBe(count + 1);

    const again = await server.request('POST', '/api/v1/screens/provision', {
      token,
      json: { label: 'Kiosk' },
      idempotencyKey: key,
    });
    expect(again.json().provisioning_url).toBe(body.provisioning_url);
    expect(await screenCount()).toBe(count + 1);

    const provisioning_token = body.provisioning_url.split('#provision=')[1];
    const exchange_id = `xchg_${randomKey()}${randomKey()}`.slice(0, 48);
    const jar = new CookieJar();
    const ex = await server.request('POST', '/runtime/v1/browser-provisioning/exchanges', {
      cookies: jar,
      json: { provisioning_token, exchange_id },
    });
    expect(ex.status).toBe(201);
    expect(ex.headers['cache-control']).toBe('no-store');
    expect(ex.headers['referrer-policy']).toBe('no-referrer');
    expect(ex.json().screen).toMatchObject({ id: body.screen.id, state: 'active', revision: 2 });
    expect(jar.get(server.host, DEVICE_COOKIE)).toBeDefined();
    expect(jar.get(server.host, RUNTIME_COOKIE)).toBeUndefined();
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies: jar })).status).toBe(201);

    const types = (
      await server.services.store.db
        .selectFrom('events')
        .select('type')
        .where('screen_id', '=', body.screen.id)
        .orderBy('position')
        .execute()
    ).map((e) => e.type);
    expect(types).toEqual(['screen.provisioned', 'screen.updated', 'screen.activated']);

    const retry = await server.request('POST', '/runtime/v1/browser-provisioning/exchanges', {
      json: { provisioning_token, exchange_id },
    });
    expect(retry.status).toBe(201);
    expect(retry.json().screen.revision).toBe(2);
    const other = await server.request('POST', '/runtime/v1/browser-provisioning/exchanges', {
      json: { provisioning_token, exchange_id: `xchg_${'B'.repeat(43)}` },
    });
    expect(other.status).toBe(409);
    expect(other.text).not.toContain(provisioning_token);
  });

  it('stops redelivering after ten minutes and refuses a stale exchange', async () => {
    nextMinute();
    const key = randomKey();
    const res = await server.request('POST', '/api/v1/screens/provision', { token, json: {}, idempotencyKey: key });
    const provisioning_token = res.json().provisioning_url.split('#provision=')[1];
    server.clock.advance(10 * 60_000);
    const replay = await server.request('POST', '/api/v1/screens/provision', { token, json: {}, idempotencyKey: key });
    expect(replay.status).toBe(410);
    expect(replay.text).not.toContain(provisioning_token);
    const ex = await server.request('POST', '/runtime/v1/browser-provisioning/exchanges', {
      json: { provisioning_token, exchange_id: `xchg_${'C'.repeat(43)}` },
    });
    expect(ex.status).toBe(410);
    expect(
      (
        await server.request('POST', '/runtime/v1/browser-provisioning/exchanges', {
          json: { provisioning_token: 'D'.repeat(43), exchange_id: `xchg_${'C'.repeat(43)}` },
        })
      ).status,
    ).toBe(404);
  });

  it('is a Model P route', async () => {
    const account = await server.createAccount();
    const res = await server.request('POST', '/api/v1/screens/provision', {
      token: account.token,
      json: {},
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(403);
  });
});

describe('housekeeping', () => {
  it('erases recorded provisioning tokens after their window and removes long-expired sessions', async () => {
    nextMinute();
    const { cookies } = await startPairing(server);
    await server.request('POST', '/api/v1/screens/provision', { token, json: {}, idempotencyKey: randomKey() });
    const { db } = server.services.store;
    const bodies = () =>
      db
        .selectFrom('idempotency_records')
        .select('body')
        .where('route', '=', 'POST /api/v1/screens/provision')
        .execute();
    expect((await bodies()).some((r) => r.body !== null)).toBe(true);
    server.clock.advance(11 * 60_000);
    await server.services.housekeeping.runAll();
    expect((await bodies()).every((r) => r.body === null)).toBe(true);
    server.clock.advance(25 * 3600_000);
    const expired = () =>
      db
        .selectFrom('pairing_sessions')
        .select('id')
        .where('expires_at', '<', server.clock.now() - 24 * 3600_000)
        .execute();
    expect((await expired()).length).toBeGreaterThan(0);
    await server.services.housekeeping.runAll();
    expect(await expired()).toEqual([]);
    expect((await server.request('GET', '/runtime/v1/pairing-events', { cookies })).status).toBe(401);
  });
});

describe('secrets', () => {
  it('never writes cookies, nonces or provisioning tokens to the log', async () => {
    nextMinute();
    const { cookies } = await pairActiveScreen(server, token);
    await server.request('POST', '/runtime/v1/device-sessions', { cookies });
    const logs = server.logText();
    for (const name of [DEVICE_COOKIE, RUNTIME_COOKIE]) expect(logs).not.toContain(cookies.get(server.host, name)!);
    expect(logs).not.toContain('provision=');
  });
});
