// Dashboard sign-in and sessions: a __Host- cookie on the dashboard host only, CSRF protection,
// idle and absolute expiry, logout and revocation, project selection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { joinAsMember, TEST_PASSWORD, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { SmtpCapture } from '../mail/mail.fixtures';
import { TestServer } from '../testing/harness';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from './dashboard-cookies';
import { DashboardBrowser } from './dashboard.fixtures';

let smtp: SmtpCapture;
let server: TestServer;
let clock: TestClock;
let token: string;
let projectId: string;
const email = 'ada@example.com';

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  clock = new TestClock('2026-11-25T12:00:00Z');
  server = await TestServer.start({
    clock,
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  ({ token, projectId } = await server.enroll({ project_name: 'Lobby screens' }));
  await joinAsMember(server, smtp, token, email, { name: 'Ada' });
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

async function signedIn(): Promise<DashboardBrowser> {
  const browser = new DashboardBrowser(server);
  await browser.signIn(email, TEST_PASSWORD);
  return browser;
}

describe('password sign-in', () => {
  it('answers the session and sets it as a __Host- cookie: Secure, HttpOnly, SameSite=Strict, Path=/, no Domain', async () => {
    const browser = new DashboardBrowser(server);
    const res = await browser.signIn('ADA@example.com', TEST_PASSWORD);
    const cookie = (res.headers['set-cookie'] ?? []).find((c) => c.startsWith('__Host-marquee-dashboard='))!;
    expect(cookie).toMatch(
      new RegExp(
        `^__Host-marquee-dashboard=[A-Za-z0-9_-]{43}; Max-Age=${SESSION_ABSOLUTE_MS / 1000}; Path=/; Secure; HttpOnly; SameSite=Strict$`,
      ),
    );
    expect(res.headers['cache-control']).toBe('no-store');
    const session = res.json();
    expect(session).toMatchObject({
      display_name: 'Ada',
      email,
      method: 'password',
      project: { id: projectId, name: 'Lobby screens', membership: 'project_member' },
    });
    expect(session.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const again = await browser.request('GET', '/dashboard/v1/session');
    expect(again.status).toBe(200);
    expect(again.headers['cache-control']).toBe('private, no-store');
  });

  it('gives a wrong password and an unknown address the same unauthorized answer', async () => {
    const browser = new DashboardBrowser(server);
    const wrong = await browser.request('POST', '/dashboard/v1/sign-in', {
      json: { email, password: 'not the password at all' },
    });
    const unknown = await browser.request('POST', '/dashboard/v1/sign-in', {
      json: { email: 'nobody@example.com', password: TEST_PASSWORD },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.json().detail).toBe(unknown.json().detail);
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });
});

describe('CSRF protection', () => {
  it('refuses a mutation without the session’s token or with another', async () => {
    const browser = await signedIn();
    const csrf = browser.csrf;
    browser.csrf = '';
    expect((await browser.request('POST', '/dashboard/v1/logout')).status).toBe(403);
    browser.csrf = 'x'.repeat(43);
    expect((await browser.request('POST', '/dashboard/v1/logout')).status).toBe(403);
    browser.csrf = csrf;
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(200);
  });

  it('refuses a mutation from another origin, or without one, even with the right token', async () => {
    const browser = await signedIn();
    const other = await browser.request('POST', '/dashboard/v1/logout', {
      headers: { origin: 'http://localhost:8080' },
    });
    expect(other.status).toBe(403);
    const none = await browser.request('POST', '/dashboard/v1/logout', {
      bare: true,
      headers: { 'marquee-csrf-token': browser.csrf },
    });
    expect(none.status).toBe(403);
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(200);
  });

  it('refuses cross-site and same-site requests (Fetch Metadata), reads included', async () => {
    const browser = await signedIn();
    for (const site of ['cross-site', 'same-site']) {
      const read = await browser.request('GET', '/dashboard/v1/session', { headers: { 'sec-fetch-site': site } });
      expect(read.status, site).toBe(403);
    }
  });

  it('refuses a sign-in from another origin (login CSRF)', async () => {
    const browser = new DashboardBrowser(server);
    const res = await browser.request('POST', '/dashboard/v1/sign-in', {
      json: { email, password: TEST_PASSWORD },
      headers: { origin: 'http://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(browser.sessionCookie).toBeUndefined();
  });
});

describe('session expiry and revocation', () => {
  it('ends a session unused for an hour (idle expiry); use keeps it alive', async () => {
    const browser = await signedIn();
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(200);
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(200);
    clock.advance(SESSION_IDLE_MS + 1);
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(401);
  });

  it('ends a session 24 hours after sign-in however much it is used (absolute expiry)', async () => {
    const browser = await signedIn();
    const started = clock.now();
    while (clock.now() + SESSION_IDLE_MS / 2 < started + SESSION_ABSOLUTE_MS) {
      clock.advance(SESSION_IDLE_MS / 2);
      expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(200);
    }
    clock.set(started + SESSION_ABSOLUTE_MS);
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(401);
  });

  it('logout revokes the session: its cookie is expired and no longer works if replayed', async () => {
    const browser = await signedIn();
    const cookie = browser.sessionCookie!;
    const res = await browser.request('POST', '/dashboard/v1/logout');
    expect(res.status).toBe(204);
    expect(res.headers['set-cookie']).toContain(
      '__Host-marquee-dashboard=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Strict',
    );
    const replay = new DashboardBrowser(server);
    replay.jar.set(replay.host, '__Host-marquee-dashboard', cookie);
    expect((await replay.request('GET', '/dashboard/v1/session')).status).toBe(401);
  });

  it('lists the person’s sessions and revokes another one of them; another person’s is not_found', async () => {
    const laptop = await signedIn();
    const phone = await signedIn();
    const listed = (await laptop.request('GET', '/dashboard/v1/sessions')).json().items as {
      id: string;
      current: boolean;
    }[];
    expect(listed.filter((s) => s.current)).toHaveLength(1);
    const phoneId = (await phone.request('GET', '/dashboard/v1/sessions')).json().items.find((s: any) => s.current).id;
    expect((await laptop.request('POST', `/dashboard/v1/sessions/${phoneId}/revoke`)).status).toBe(204);
    expect((await phone.request('GET', '/dashboard/v1/session')).status).toBe(401);
    const stranger = await joinAsMember(server, smtp, token, 'stranger@example.com');
    const laptopId = listed.find((s) => s.current)!.id;
    expect((await stranger.request('POST', `/dashboard/v1/sessions/${laptopId}/revoke`)).status).toBe(404);
    expect((await laptop.request('GET', '/dashboard/v1/session')).status).toBe(200);
  });
});

describe('projects and members', () => {
  it('switches the selected project only to one the person belongs to', async () => {
    const second = await server.enroll({ project_name: 'Shop windows' });
    await joinAsMember(server, smtp, second.token, 'grace@example.com', { name: 'Grace' });
    const grace = new DashboardBrowser(server);
    await grace.signIn('grace@example.com', TEST_PASSWORD);
    const projects = (await grace.request('GET', '/dashboard/v1/projects')).json().items;
    expect(projects.map((p: any) => p.id)).toEqual([second.projectId]);
    const refused = await grace.request('PUT', '/dashboard/v1/session/project', { json: { project_id: projectId } });
    expect(refused.status).toBe(404);
  });

  it('lists the members of the selected project with how they sign in', async () => {
    const browser = await signedIn();
    const members = (await browser.request('GET', '/dashboard/v1/members')).json().items;
    expect(members).toContainEqual(
      expect.objectContaining({
        email,
        display_name: 'Ada',
        membership: 'project_member',
        password: true,
        passkeys: 0,
      }),
    );
  });
});

describe('sign-in budgets', () => {
  it('limits password attempts per address (429 with Retry-After), counting unknown addresses alike', async () => {
    const own = await TestServer.start({
      clock: new TestClock('2026-11-25T12:00:00Z'),
      tuning: { passwordHash: TEST_PASSWORD_COST },
    });
    try {
      const browser = new DashboardBrowser(own);
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        const res = await browser.request('POST', '/dashboard/v1/sign-in', {
          json: { email: 'who@example.com', password: `guess number ${i}` },
        });
        statuses.push(res.status);
        if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
      expect(statuses[10]).toBe(429);
    } finally {
      await own.stop();
    }
  });
});
