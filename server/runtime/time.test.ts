import { describe, expect, it } from 'vitest';
import { CookieJar } from '../testing/harness';
import { anonymousPlayer, useEnrolledServer } from './runtime.fixtures';

const env = useEnrolledServer();

describe('GET /runtime/v1/time', () => {
  it('stamps arrival and answer on the server clock, never cached', async () => {
    const p = await env.player();
    env.clock.set('2026-11-21T12:00:00.250Z');
    const res = await env.server.request('GET', '/runtime/v1/time', { cookies: p.cookies });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toEqual({
      received_at_ms: Date.parse('2026-11-21T12:00:00.250Z'),
      sent_at_ms: Date.parse('2026-11-21T12:00:00.250Z'),
    });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['ratelimit-policy']).toBe('"runtime-time";q=120;w=60');
  });

  it('answers a public screen’s read-only session too', async () => {
    const p = await env.player();
    const anonymous = await anonymousPlayer(env.server, p.screen);
    const res = await env.server.request('GET', '/runtime/v1/time', { cookies: anonymous.cookies });
    expect(res.status, res.text).toBe(200);
  });

  it('refuses a caller without a runtime session, and a bearer', async () => {
    const none = await env.server.request('GET', '/runtime/v1/time', { cookies: new CookieJar() });
    expect(none.status).toBe(401);
    expect(none.json().code).toBe('unauthorized');
    const bearer = await env.server.request('GET', '/runtime/v1/time', {
      headers: { authorization: `Bearer ${env.token}` },
    });
    expect(bearer.status).toBe(401);
  });

  it('refuses a cross-site page riding the player’s cookies', async () => {
    const p = await env.player();
    const res = await env.server.request('GET', '/runtime/v1/time', {
      cookies: p.cookies,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(403);
  });
});
