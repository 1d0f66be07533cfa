// Iframe placements may not show this installation's own hosts: a frame on the player's host would
// run a second player with the screen's cookies (review 2, finding 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iframePlacement, page } from './content.fixtures';
import { setHostResolver } from './iframe-hosts';
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
beforeAll(async () => {
  server = await TestServer.start({ config: ORIGINS, beforeListen: (services) => setHostResolver(services, async () => []) });
  ({ token } = await server.enroll());
});
afterAll(async () => server.stop());

const doc = (src: string) => ({ name: 'Framed', pages: [page('p', [iframePlacement('f', src)])] });
const post = (json: unknown, version = 'v1') => server.request('POST', `/api/${version}/playlists`, { token, json, idempotencyKey: randomKey() });

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
    expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ field: 'pages.0.placements.0.content.src', code: 'service_origin' }] });
  });

  it('refuses them on replace and in v2 adslot fallbacks too', async () => {
    const created = await post(doc('https://example.com/'));
    expect(created.status, created.text).toBe(201);
    const replaced = await server.request('PUT', `/api/v1/playlists/${created.json().id}`, { token, json: doc('https://play.marquee.example/'), idempotencyKey: randomKey() });
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
          fallback: { canvas: page('x', []).canvas, advance: { mode: 'duration', after_ms: 10_000 }, placements: [iframePlacement('house', 'https://dashboard.marquee.example/')] },
        },
      ],
    };
    const v2 = await post(adslot, 'v2');
    expect(v2.status, v2.text).toBe(400);
    expect(v2.json().errors[0]).toMatchObject({ field: 'pages.1.fallback.placements.0.content.src', code: 'service_origin' });
  });

  it('accepts other hosts, the release domain itself and deeper names under it', async () => {
    for (const src of ['https://example.com/', 'https://marquee.example/', 'https://marquee-apps.example/', 'https://a.b.marquee-apps.example/', 'https://play.marquee.example.evil.com/']) {
      const res = await post(doc(src));
      expect(res.status, `${src}: ${res.text}`).toBe(201);
    }
  });
});
