// Iframe placements may not show this installation's own hosts: a frame on the player's host would
// run a second player with the screen's cookies (review 2, finding 1).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { iframePlacement, page } from './content.fixtures';
import type { HostResolver } from './host-resolver';
import { IFRAME_DNS_CACHE_MS, IFRAME_DNS_CONCURRENCY, MAX_IFRAME_HOSTS } from './iframe-hosts';
import { randomKey, TestServer } from '../testing/harness';

const ORIGINS = {
  controlOrigin: 'https://control.marquee.example',
  playOrigin: 'https://play.marquee.example',
  dashboardOrigin: 'https://dashboard.marquee.example',
  // Another registrable domain than the player: the server refuses release hosts on the player's site.
  releaseOrigin: 'https://{label}.marquee-apps.example',
};

let server: TestServer;
let token: string;
/** The resolver of the test at hand (none answers unless a test says otherwise). */
let resolver: HostResolver = async () => [];
beforeAll(async () => {
  server = await TestServer.start({
    config: ORIGINS,
    hostResolver: (host, signal) => resolver(host, signal),
  });
  ({ token } = await server.enroll());
});
afterAll(async () => server.stop());

const doc = (src: string) => ({ name: 'Framed', pages: [page('p', [iframePlacement('f', src)])] });
const post = (json: unknown, version = 'v1') =>
  server.request('POST', `/api/${version}/playlists`, { token, json, idempotencyKey: randomKey() });

describe('iframe sources on Marquee itself', () => {
  it.each([
    ['the player', 'https://play.marquee.example/#provision=abc'],
    ['a public screen on the player', 'https://PLAY.marquee.example./s/pub_123'],
    ['the player on another port', 'https://play.marquee.example:8443/'],
    ['the control plane', 'https://control.marquee.example/api/v1/project'],
    ['the dashboard', 'https://dashboard.marquee.example/'],
    ['a release host', 'https://0123456789abcdef0123456789abcdef01234567.marquee-apps.example/index.html'],
    ['any label the release template can name', 'https://anything.marquee-apps.example/'],
  ])('refuses %s, naming the field', async (_what, src) => {
    const res = await post(doc(src));
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'pages.0.placements.0.content.src', code: 'service_origin' }],
    });
  });

  it('refuses them on replace and in v2 adslot fallbacks too', async () => {
    const created = await post(doc('https://example.com/'));
    expect(created.status, created.text).toBe(201);
    const replaced = await server.request('PUT', `/api/v1/playlists/${created.json().id}`, {
      token,
      json: doc('https://play.marquee.example/'),
      idempotencyKey: randomKey(),
    });
    expect(replaced.status).toBe(400);
    const adslot = {
      name: 'Ads',
      pages: [
        page('main', [iframePlacement('f', 'https://example.com/')]),
        {
          type: 'adslot',
          id: 'ad',
          slot: { key: 'lobby', duration_ms: 10_000 },
          transition: { type: 'crossfade', duration_ms: 0 },
          fallback: {
            canvas: page('x', []).canvas,
            advance: { mode: 'duration', after_ms: 10_000 },
            placements: [iframePlacement('house', 'https://dashboard.marquee.example/')],
          },
        },
      ],
    };
    const v2 = await post(adslot, 'v2');
    expect(v2.status, v2.text).toBe(400);
    expect(v2.json().errors[0]).toMatchObject({
      field: 'pages.1.fallback.placements.0.content.src',
      code: 'service_origin',
    });
  });

  it('accepts other hosts, the release domain itself and deeper names under it', async () => {
    for (const src of [
      'https://example.com/',
      'https://marquee.example/',
      'https://marquee-apps.example/',
      'https://a.b.marquee-apps.example/',
      'https://play.marquee.example.evil.com/',
    ]) {
      const res = await post(doc(src));
      expect(res.status, `${src}: ${res.text}`).toBe(201);
    }
  });
});

describe('resolving iframe host names', () => {
  // Each test starts with no remembered answers: a server of its own.
  let own: { server: TestServer; token: string } | undefined;
  beforeEach(async () => {
    own = { server, token };
    server = await TestServer.start({ config: ORIGINS, hostResolver: (host, signal) => resolver(host, signal) });
    ({ token } = await server.enroll());
  });
  afterEach(async () => {
    await server.stop();
    ({ server, token } = own!);
    resolver = async () => [];
  });

  /** Counts calls and calls at once; each answer takes `delayMs` unless `hang` says never. */
  function countingResolver(options: { delayMs?: number; hang?: (host: string) => boolean } = {}) {
    const seen = { calls: [] as string[], inFlight: 0, maxInFlight: 0, cancelled: [] as string[] };
    resolver = async (host, signal) => {
      seen.calls.push(host);
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      try {
        await new Promise<void>((resolve, reject) => {
          const stop = () => (seen.cancelled.push(host), reject(signal.reason));
          signal.addEventListener('abort', stop, { once: true });
          if (!options.hang?.(host))
            setTimeout(() => (signal.removeEventListener('abort', stop), resolve()), options.delayMs ?? 10);
        });
        return ['93.184.216.34'];
      } finally {
        seen.inFlight--;
      }
    };
    return seen;
  }
  /** `hosts` distinct names, each placed twice, ten placements a page. */
  function framedDoc(hosts: number) {
    const srcs = Array.from({ length: hosts * 2 }, (_, i) => `https://h${i % hosts}.example.org/`);
    const pages = [];
    for (let i = 0; i < srcs.length; i += 10)
      pages.push(
        page(
          `p${i}`,
          srcs.slice(i, i + 10).map((src, j) => iframePlacement(`f${j}`, src)),
        ),
      );
    return { name: 'Many frames', pages };
  }

  it('resolves each distinct name once, a few at a time', async () => {
    const seen = countingResolver();
    const res = await post(framedDoc(MAX_IFRAME_HOSTS), 'v2');
    expect(res.status, res.text).toBe(201);
    expect(seen.calls.length).toBe(MAX_IFRAME_HOSTS);
    expect(new Set(seen.calls).size).toBe(MAX_IFRAME_HOSTS);
    expect(seen.maxInFlight).toBeGreaterThan(1);
    expect(seen.maxInFlight).toBeLessThanOrEqual(IFRAME_DNS_CONCURRENCY);
  });

  it('refuses a document naming more distinct hosts than the limit, before any lookup', async () => {
    const seen = countingResolver();
    const res = await post(framedDoc(MAX_IFRAME_HOSTS + 1), 'v2');
    expect(res.status, res.text).toBe(400);
    // Host number 65 is h64, first placed as the 65th placement: page 6, placement 4.
    expect(res.json()).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'pages.6.placements.4.content.src', code: 'too_many_hosts' }],
    });
    expect(res.json().detail).toContain(`at most ${MAX_IFRAME_HOSTS}`);
    expect(seen.calls).toEqual([]);
  });

  it('reuses an answer for a minute, then asks again', async () => {
    const seen = countingResolver();
    expect((await post(framedDoc(3), 'v2')).status).toBe(201);
    expect((await post(framedDoc(3), 'v2')).status).toBe(201);
    expect(seen.calls.length).toBe(3);
    server.clock.advance(IFRAME_DNS_CACHE_MS + 1);
    expect((await post(framedDoc(3), 'v2')).status).toBe(201);
    expect(seen.calls.length).toBe(6);
  });

  it('does not refuse a name that does not answer in time, and stops its lookup', async () => {
    const seen = countingResolver({ hang: (host) => host === 'h1.example.org' });
    const res = await post(framedDoc(2), 'v2');
    expect(res.status, res.text).toBe(201);
    expect(seen.cancelled).toEqual(['h1.example.org']);
    expect(seen.inFlight).toBe(0);
    // Only answers are remembered: the name that did not answer is asked again on the next write.
    expect((await post(framedDoc(2), 'v2')).status).toBe(201);
    expect(seen.calls.filter((host) => host === 'h1.example.org')).toHaveLength(2);
    expect(seen.calls.filter((host) => host === 'h0.example.org')).toHaveLength(1);
  });

  it('resolves nothing for a replace of a playlist the tenant does not have', async () => {
    const seen = countingResolver();
    const res = await server.request('PUT', '/api/v2/playlists/pl_unknown', {
      token,
      json: framedDoc(4),
      ifMatch: 1,
      idempotencyKey: randomKey(),
    });
    expect(res.status, res.text).toBe(404);
    expect(seen.calls).toEqual([]);
  });
});
