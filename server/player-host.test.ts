// The player origin never lets itself be framed (review 2, finding 1): every answer forbids framing,
// and a navigation the browser marks as loading a frame is refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactPath } from './logger';
import { TestServer } from './testing/harness';

let server: TestServer;
let build: string;

beforeAll(async () => {
  build = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-player-'));
  fs.mkdirSync(path.join(build, 'assets'));
  fs.writeFileSync(path.join(build, 'index.html'), '<!doctype html><title>Marquee player</title>');
  fs.writeFileSync(path.join(build, 'assets', 'index-abc.js'), 'console.log(1)');
  fs.writeFileSync(path.join(build, 'sw.js'), 'self.addEventListener("fetch", () => {})');
  server = await TestServer.start({ playerDir: build });
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(build, { recursive: true, force: true });
});

const NO_FRAMING = { 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY' };
const TOP_LEVEL = { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

describe('the player origin', () => {
  it.each([
    ['the shell', '/', 'text/html; charset=utf-8'],
    ['a public screen', '/s/pub_abc123', 'text/html; charset=utf-8'],
    ['a provisioning link', '/s/pub_abc123?x=1', 'text/html; charset=utf-8'],
    ['its scripts', '/assets/index-abc.js', 'text/javascript; charset=utf-8'],
    ['its service worker', '/sw.js', 'text/javascript; charset=utf-8'],
  ])('forbids framing on %s', async (_what, url, type) => {
    const res = await server.request('GET', url, { headers: TOP_LEVEL });
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ ...NO_FRAMING, 'content-type': type });
  });

  it("names the dashboard's pairing link in the shell, so the pairing QR code opens it with the code", async () => {
    for (const url of ['/', '/s/pub_abc123']) {
      const res = await server.request('GET', url, { headers: TOP_LEVEL });
      const meta = /<meta name="marquee:pairing-hint-url" content="([^"]*)" \/>/.exec(res.text);
      expect(meta?.[1]).toBe(`${server.services.config.dashboardOrigin}/screens?pair={code}`);
      expect(res.text).toContain('<title>Marquee player</title>');
    }
    // A rebuilt player is served at once (the shell is kept only while its file is unchanged).
    const built = path.join(build, 'index.html');
    fs.writeFileSync(built, '<!doctype html><html><head><title>Rebuilt player</title></head></html>');
    const rebuilt = await server.request('GET', '/', { headers: TOP_LEVEL });
    expect(rebuilt.text).toMatch(
      /<head><meta name="marquee:pairing-hint-url" content="[^"]+" \/><title>Rebuilt player/,
    );
    fs.writeFileSync(built, '<!doctype html><title>Marquee player</title>');
    // Scripts and the service worker are served as built.
    const script = await server.request('GET', '/assets/index-abc.js', { headers: TOP_LEVEL });
    expect(script.text).toBe('console.log(1)');
  });

  it.each(['iframe', 'frame', 'embed', 'object'])(
    'refuses a navigation into a %s with a problem that forbids framing too',
    async (dest) => {
      for (const url of ['/', '/s/pub_abc123']) {
        const res = await server.request('GET', url, {
          headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': dest },
        });
        expect(res.status).toBe(403);
        expect(res.headers).toMatchObject({ ...NO_FRAMING, 'content-type': 'application/problem+json' });
        expect(res.json()).toMatchObject({
          code: 'forbidden',
          detail: expect.stringMatching(/never runs inside a frame/),
        });
        expect(res.text).not.toContain('Marquee player');
      }
      // The same site framing it (an application frame on a release host) is refused alike.
      const sameSite = await server.request('GET', '/', {
        headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': dest },
      });
      expect(sameSite.status).toBe(403);
    },
  );

  it('still serves browsers that send no Fetch Metadata (kiosk shells, old engines), without framing', async () => {
    const res = await server.request('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject(NO_FRAMING);
  });

  it('forbids framing on the not-built page as well', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-unbuilt-'));
    const unbuilt = await TestServer.start({ playerDir: empty });
    try {
      const res = await unbuilt.request('GET', '/');
      expect(res.status).toBe(503);
      expect(res.headers).toMatchObject(NO_FRAMING);
    } finally {
      await unbuilt.stop();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('the public screen URL in logs (review 3, finding A)', () => {
  // /s/<public_id> is a credential: whoever holds it opens a runtime session for the screen.
  const publicId = 'OGqUsC28YzGtfkzWq0ni45KlCJLnrBXh';

  it('never writes the public id to the request log, nor into a problem', async () => {
    const before = server.logText().length;
    expect((await server.request('GET', `/s/${publicId}`, { headers: TOP_LEVEL })).status).toBe(200);
    const framed = await server.request('GET', `/s/${publicId}/`, {
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
    });
    expect(framed.status).toBe(403);
    expect(framed.json().instance).toBe('/s/[redacted]/');
    expect(framed.text).not.toContain(publicId);
    // The request line is written when the response closes.
    await new Promise((r) => setTimeout(r, 50));
    const lines = server
      .logText()
      .slice(before)
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'));
    expect(lines.some((l) => l.includes('"path":"/s/[redacted]"'))).toBe(true);
    expect(lines.some((l) => l.includes('"path":"/s/[redacted]/"'))).toBe(true);
    expect(server.logText()).not.toContain(publicId);
  });

  it('redacts path variants a browser or proxy may send, and nothing else', () => {
    expect(redactPath(`//s/${publicId}`)).toBe('//s/[redacted]');
    expect(redactPath(`/S/${publicId}/x`)).toBe('/S/[redacted]/x');
    expect(redactPath('/runtime/v1/manifest')).toBe('/runtime/v1/manifest');
    expect(redactPath('/assets/s/index.js')).toBe('/assets/s/index.js');
  });
});
