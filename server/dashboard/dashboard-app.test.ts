// Serving the built dashboard: hashed assets from its folder only, with the page's headers; the
// shell for the app's pages, and for a browser's navigation to a path that is no page (as a 404).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import { assetFile, dashboardApp } from './dashboard-app.routes';

let server: TestServer;
let dir: string;
const host = () => `dashboard.localhost:${server.port}`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-dashboard-build-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>fixture shell</title>');
  fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log("dashboard")');
  fs.writeFileSync(path.join(dir, 'secret.key'), 'not served');
  const app = dashboardApp(dir);
  server = await TestServer.start({
    dashboardDir: dir,
    extraRoutes: [
      { plane: 'dashboard', method: 'GET', path: '/fixture-assets/:file', route: app.asset },
      { plane: 'dashboard', method: 'GET', path: '/fixture-page', route: app.shell },
      {
        plane: 'dashboard',
        method: 'GET',
        path: '/unbuilt-page',
        route: dashboardApp(path.join(dir, 'not-built')).shell,
      },
    ],
  });
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the built dashboard', () => {
  it('serves an asset whole, immutable, with the page’s headers', async () => {
    const res = await server.request('GET', '/fixture-assets/index-abc123.js', { host: host() });
    expect(res.status).toBe(200);
    expect(res.text).toBe('console.log("dashboard")');
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('serves the shell for a page, and says how to build it when it is not built', async () => {
    const page = await server.request('GET', '/fixture-page', { host: host(), headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.text).toBe('<!doctype html><title>fixture shell</title>');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const unbuilt = await server.request('GET', '/unbuilt-page', { host: host(), headers: { accept: 'text/html' } });
    expect(unbuilt.status).toBe(503);
    expect(unbuilt.text).toMatch(/npm run build:web/);
    expect(unbuilt.headers['x-frame-options']).toBe('DENY');
  });

  it('serves nothing outside its assets folder and no unknown type', async () => {
    for (const name of ['..%2Fsecret.key', '..%2F..%2Fpackage.json', 'missing.js', 'index-abc123.exe'])
      expect((await server.request('GET', `/fixture-assets/${name}`, { host: host() })).status, name).toBe(404);
    expect(assetFile(dir, '../secret.key')).toBeUndefined();
    expect(assetFile(dir, '.hidden.js')).toBeUndefined();
  });

  it('answers a page with the shell, framed by no one, running only its own scripts', async () => {
    const res = await server.request('GET', '/fixture-page', { host: host() });
    expect(res.status).toBe(200);
    expect(res.text).toContain('fixture shell');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('refuses to be loaded by another site (Fetch Metadata)', async () => {
    const res = await server.request('GET', '/fixture-page', {
      host: host(),
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'iframe' },
    });
    expect(res.status).toBe(403);
  });

  it('answers a browser’s navigation to no page with the shell and 404, so the app can say so', async () => {
    const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const res = await server.request('GET', '/no-such-page', { host: host(), headers: { accept: html } });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('fixture shell');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const head = await server.request('HEAD', '/screens/x/y', { host: host(), headers: { accept: html } });
    expect(head.status).toBe(404);
  });

  it('keeps JSON problems for the API, for clients that do not ask for HTML, and for other sites', async () => {
    const html = { accept: 'text/html' };
    const api = await server.request('GET', '/dashboard/v1/no-such-thing', { host: host(), headers: html });
    expect(api.status).toBe(404);
    expect(api.headers['content-type']).toContain('application/problem+json');
    const script = await server.request('GET', '/no-such-page', { host: host(), headers: { accept: '*/*' } });
    expect(script.headers['content-type']).toContain('application/problem+json');
    const framed = await server.request('GET', '/no-such-page', {
      host: host(),
      headers: { ...html, 'sec-fetch-site': 'cross-site' },
    });
    expect(framed.headers['content-type']).toContain('application/problem+json');
    const posted = await server.request('POST', '/no-such-page', { host: host(), headers: html });
    expect(posted.headers['content-type']).toContain('application/problem+json');
  });

  it('answers a mistyped address on another origin with a problem, not the dashboard', async () => {
    const res = await server.request('GET', '/no-such-page', { headers: { accept: 'text/html' } });
    expect(res.text).not.toContain('fixture shell');
  });
});
