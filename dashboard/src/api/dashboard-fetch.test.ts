// The dashboard's fetch: /api/v1 paths of its own origin move to /dashboard/v1, changes carry the
// session's CSRF token, cookies go to its own origin only, and a 401 there ends the session.
import { describe, expect, it } from 'vitest';
import { createDashboardFetch, dashboardUrl } from './dashboard-fetch';

const ORIGIN = 'http://dashboard.localhost:8080';

function recorder(status = 200) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(null, { status });
  }) as unknown as typeof globalThis.fetch;
  return { calls, fetch };
}

describe('dashboardUrl', () => {
  it('moves /api/v1 paths of its own origin under /dashboard/v1, keeping the query', () => {
    expect(dashboardUrl(`${ORIGIN}/api/v1/screens?state=archived`, ORIGIN)).toBe(
      `${ORIGIN}/dashboard/v1/screens?state=archived`,
    );
    expect(dashboardUrl(`${ORIGIN}/dashboard/v1/session`, ORIGIN)).toBe(`${ORIGIN}/dashboard/v1/session`);
  });

  it('leaves another origin alone (an S3 upload URL)', () => {
    expect(dashboardUrl('https://bucket.example/api/v1/x', ORIGIN)).toBe('https://bucket.example/api/v1/x');
  });
});

describe('createDashboardFetch', () => {
  it('adds the CSRF token to changes, not to reads, and sends cookies to its own origin only', async () => {
    const { calls, fetch } = recorder();
    const f = createDashboardFetch(ORIGIN, { csrfToken: () => 'tok', fetch });
    await f(`${ORIGIN}/api/v1/screens`, { method: 'GET' });
    await f(`${ORIGIN}/api/v1/screens/pair`, { method: 'POST' });
    await f('https://bucket.example/put', { method: 'PUT' });
    expect(new Headers(calls[0]!.init.headers).get('marquee-csrf-token')).toBeNull();
    expect(new Headers(calls[1]!.init.headers).get('marquee-csrf-token')).toBe('tok');
    expect(calls[1]!.url).toBe(`${ORIGIN}/dashboard/v1/screens/pair`);
    expect(new Headers(calls[2]!.init.headers).get('marquee-csrf-token')).toBeNull();
    expect(calls.map((c) => c.init.credentials)).toEqual(['same-origin', 'same-origin', 'omit']);
  });

  it('tells the app when a dashboard route answers 401', async () => {
    let ended = 0;
    const { fetch } = recorder(401);
    const f = createDashboardFetch(ORIGIN, { csrfToken: () => '', fetch, onUnauthorized: () => ended++ });
    await f(`${ORIGIN}/api/v1/screens`);
    await f('https://bucket.example/put', { method: 'PUT' });
    expect(ended).toBe(1);
  });
});
