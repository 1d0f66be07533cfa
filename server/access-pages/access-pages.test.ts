// The access page: served on the dashboard origin only, running only its own script, never framed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => server.stop());

const dashboard = () => `dashboard.localhost:${server.port}`;

describe('the access page', () => {
  it('is a small static page on the dashboard origin that no page may frame and that runs only its own script', async () => {
    for (const path of ['/access', '/connect/agc_anything']) {
      const res = await server.request('GET', path, { host: dashboard() });
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.text).toContain('<script type="module" src="/access/access.js"></script>');
    }
    const script = await server.request('GET', '/access/access.js', { host: dashboard() });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // Its tab shows the dashboard's icon (a browser would otherwise ask for a /favicon.ico).
    const page = await server.request('GET', '/access', { host: dashboard() });
    expect(page.text).toContain('<link rel="icon" type="image/svg+xml" href="/access/favicon.svg">');
    const icon = await server.request('GET', '/access/favicon.svg', { host: dashboard() });
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.text).toContain('<svg');
    expect((await server.request('GET', '/access/secret.key', { host: dashboard() })).status).toBe(404);
    expect((await server.request('GET', '/access/..%2Fsign-in.ts', { host: dashboard() })).status).toBe(404);
  });

  it('is refused when another site frames or fetches it (Fetch Metadata)', async () => {
    const res = await server.request('GET', '/access', {
      host: dashboard(),
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'iframe' },
    });
    expect(res.status).toBe(403);
  });

  it('is not served on the control or player origin', async () => {
    expect((await server.request('GET', '/access/access.js')).status).toBe(404);
    expect((await server.request('GET', '/dashboard/v1/session')).status).toBe(404);
  });
});
