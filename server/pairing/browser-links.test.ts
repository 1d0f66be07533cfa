// Browser links: a TV's browser gets a setup code (JSON, or a no-JavaScript form), an agent claims it
// (a pairing_pending screen with a provisioning grant), and the browser continues to the provisioning
// link, which it exchanges like any other. The link itself is never data: only the 303 carries it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { CookieJar, TestServer, randomKey } from '../testing/harness';
import { BROWSER_LINK_TTL_MS, BROWSER_LINKS_OUTSTANDING_PER_IP } from './browser-links';
import { BROWSER_LINK_COOKIE } from './browser-links.routes';
import { DEVICE_COOKIE } from './pairing-cookies';
import { readStream } from './native.fixtures';

let server: TestServer;
let clock: TestClock;
let token: string;
let projectId: string;

beforeAll(async () => {
  clock = new TestClock('2026-11-25T12:00:00Z');
  // Requests name their client address in X-Forwarded-For (the test client is the trusted proxy).
  server = await TestServer.start({ clock, config: { trustedProxies: ['127.0.0.1', '::1'] } });
  ({ token, projectId } = await server.enroll());
});
afterAll(async () => server.stop());

/** Each test's browser comes from an address of its own (the outstanding budget counts per IP). */
let nextIp = 10;
function tv() {
  const ip = `198.51.100.${nextIp++}`;
  const jar = new CookieJar();
  const request = (method: string, path: string, headers: Record<string, string> = {}) =>
    server.request(method, path, { cookies: jar, headers: { 'x-forwarded-for': ip, ...headers } });
  return { jar, ip, request };
}

const claim = (code: string, idempotencyKey = randomKey(), bearer = token) =>
  server.request('POST', '/api/v1/account/browser-links/claim', { token: bearer, idempotencyKey, json: { code } });

describe('a browser asking for a setup code', () => {
  it('gets a thirty-minute code and a cookie, and the same code again while it holds it', async () => {
    const browser = tv();
    const res = await browser.request('POST', '/runtime/v1/browser-links');
    expect(res.status, res.text).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const link = res.json();
    expect(link).toEqual({
      status: 'issued',
      code: expect.stringMatching(/^[2-9A-HJKMNP-Z]{3}-[2-9A-HJKMNP-Z]{3}$/),
      expires_at: new Date(clock.now() + BROWSER_LINK_TTL_MS).toISOString(),
    });
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(new RegExp(`^${BROWSER_LINK_COOKIE}=`));
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const again = await browser.request('POST', '/runtime/v1/browser-links');
    expect(again.json().code).toBe(link.code);
    expect(again.headers['set-cookie']).toBeUndefined();
    const status = await browser.request('GET', '/runtime/v1/browser-links');
    expect(status.status).toBe(202);
    expect(status.json()).toEqual(link);
  });

  it('works without JavaScript: the form post goes on to /setup, which shows the code and refreshes', async () => {
    const browser = tv();
    const empty = await browser.request('GET', '/setup');
    expect(empty.status).toBe(200);
    expect(empty.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(empty.headers['x-robots-tag']).toBe('noindex, nofollow');
    expect(empty.text).toContain('<form method="post" action="/runtime/v1/browser-links">');
    const posted = await browser.request('POST', '/runtime/v1/browser-links', {
      accept: 'text/html,application/xhtml+xml',
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.location).toBe('/setup');
    const shown = await browser.request('GET', '/setup');
    const code = (await browser.request('GET', '/runtime/v1/browser-links')).json().code as string;
    expect(shown.text).toContain(`>${code}</div>`);
    expect(shown.text).toContain('<meta http-equiv="refresh" content="5">');
  });

  it('holds at most five unclaimed codes per address', async () => {
    const ip = '203.0.113.77';
    for (let i = 0; i < 5; i++) {
      const res = await server.request('POST', '/runtime/v1/browser-links', { headers: { 'x-forwarded-for': ip } });
      expect(res.status).toBe(201);
    }
    const refused = await server.request('POST', '/runtime/v1/browser-links', { headers: { 'x-forwarded-for': ip } });
    expect(refused.status).toBe(429);
    expect(refused.json().code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBe(BROWSER_LINK_TTL_MS / 1000);
  });

  it('holds at most five unclaimed codes per address when the requests arrive together', async () => {
    const ip = '203.0.113.78';
    const answers = await Promise.all(
      Array.from({ length: BROWSER_LINKS_OUTSTANDING_PER_IP + 3 }, () =>
        server.request('POST', '/runtime/v1/browser-links', { headers: { 'x-forwarded-for': ip } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(BROWSER_LINKS_OUTSTANDING_PER_IP).fill(201), 429, 429, 429]);
  });

  it('is refused from another site, and answers link_expired without a cookie', async () => {
    const res = await server.request('POST', '/runtime/v1/browser-links', {
      headers: { origin: 'https://evil.example', 'x-forwarded-for': '198.51.100.250' },
    });
    expect(res.status).toBe(403);
    const none = await server.request('GET', '/runtime/v1/browser-links');
    expect(none.status).toBe(410);
    expect(none.json().code).toBe('link_expired');
  });
});

describe('an agent claiming the code', () => {
  it('makes a pairing_pending screen; the browser continues to its provisioning link and provisions itself', async () => {
    const browser = tv();
    const code = (await browser.request('POST', '/runtime/v1/browser-links')).json().code as string;
    const res = await claim(code.toLowerCase());
    expect(res.status, res.text).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const claimed = res.json();
    expect(claimed).toEqual({
      session_id: expect.stringMatching(/^blink_/),
      status: 'claimed',
      screen: {
        id: expect.stringMatching(/^scr_/),
        public_id: expect.any(String),
        state: 'pairing_pending',
        public_url: `${server.config.playOrigin}/s/${claimed.screen.public_id}`,
      },
    });
    expect(res.text).not.toContain('provision=');
    const status = await browser.request('GET', '/runtime/v1/browser-links');
    expect(status.status).toBe(200);
    expect(status.json()).toMatchObject({ status: 'claimed', continue_path: '/runtime/v1/browser-links/continue' });
    expect(status.text).not.toContain('provision=');
    expect((await browser.request('GET', '/setup')).text).toContain(
      'content="1;url=/runtime/v1/browser-links/continue"',
    );

    const next = await browser.request('GET', '/runtime/v1/browser-links/continue');
    expect(next.status).toBe(303);
    expect(next.headers['cache-control']).toBe('no-store');
    const location = next.headers.location as string;
    expect(location).toMatch(new RegExp(`^${claimed.screen.public_url}#provision=[A-Za-z0-9_-]{43}$`));
    // A reload of the continue step within the window is the repair path: the same link.
    expect((await browser.request('GET', '/runtime/v1/browser-links/continue')).headers.location).toBe(location);

    const provisioning_token = location.split('#provision=')[1]!;
    const player = new CookieJar();
    const exchanged = await server.request('POST', '/runtime/v1/browser-provisioning/exchanges', {
      cookies: player,
      json: { provisioning_token, exchange_id: `xchg_${'C'.repeat(43)}` },
    });
    expect(exchanged.status, exchanged.text).toBe(201);
    expect(exchanged.json().screen).toMatchObject({ id: claimed.screen.id, state: 'active' });
    expect(player.get(server.host, DEVICE_COOKIE)).toBeDefined();
    expect(server.logText()).not.toContain(provisioning_token);

    const screens = (await server.request('GET', '/api/v1/screens', { token })).json().items;
    expect(screens.map((s: any) => s.id)).toContain(claimed.screen.id);
  });

  it('answers the browser’s stream with the claim as it happens', async () => {
    const browser = tv();
    const code = (await browser.request('POST', '/runtime/v1/browser-links')).json().code as string;
    const reading = readStream(
      server,
      '/runtime/v1/browser-links/events',
      { cookie: browser.jar.header(server.host)!, 'x-forwarded-for': browser.ip },
      3000,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect((await claim(code)).status).toBe(201);
    const { frames, text } = await reading;
    expect(frames.map((f) => [f.event, (f.data as { status: string }).status])).toEqual([
      ['browser_link', 'issued'],
      ['browser_link', 'claimed'],
    ]);
    expect(text).not.toContain('provision=');
  });

  it('refuses unknown, expired and already claimed codes, and a Model A account', async () => {
    const browser = tv();
    const code = (await browser.request('POST', '/runtime/v1/browser-links')).json().code as string;
    expect((await claim('ZZZ-ZZZ')).status).toBe(404);
    const bad = await claim('12');
    expect(bad.status).toBe(400);
    expect(bad.json().errors[0].field).toBe('code');
    const account = await server.createAccount();
    expect((await claim(code, randomKey(), account.token)).status).toBe(403);
    expect((await claim(code)).status).toBe(201);
    const twice = await claim(code);
    expect(twice.status).toBe(409);
    // An exact retry is the same claim, not a second screen.
    const key = randomKey();
    const other = tv();
    const second = (await other.request('POST', '/runtime/v1/browser-links')).json().code as string;
    const first = await claim(second, key);
    expect((await claim(second, key)).json()).toEqual(first.json());

    const late = tv();
    const lateCode = (await late.request('POST', '/runtime/v1/browser-links')).json().code as string;
    clock.advance(BROWSER_LINK_TTL_MS);
    expect((await claim(lateCode)).status).toBe(404);
    expect((await late.request('GET', '/runtime/v1/browser-links')).status).toBe(410);
  });

  it('lets the browser collect for ten minutes, then the link is gone and /setup starts over', async () => {
    const browser = tv();
    const code = (await browser.request('POST', '/runtime/v1/browser-links')).json().code as string;
    const early = await browser.request('GET', '/runtime/v1/browser-links/continue');
    expect(early.status).toBe(409);
    await claim(code);
    clock.advance(10 * 60_000);
    const expired = await browser.request('GET', '/runtime/v1/browser-links/continue');
    expect(expired.status).toBe(410);
    expect((await browser.request('GET', '/setup')).text).toContain('Show a setup code');
    await server.services.housekeeping.runAll();
    const rows = await server.services.store.db
      .selectFrom('browser_links')
      .select('delivery')
      .where('tenant_id', '=', projectId)
      .execute();
    expect(rows.filter((r) => r.delivery !== null)).toEqual([]);
  });
});
