// The account surface a project bearer reads and uses (the hosted peer's CLI leans on it): the
// project through the account shape, revoking the calling credential, and one-time dashboard links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { SmtpCapture } from '../mail/mail.fixtures';
import { joinAsMember, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { DASHBOARD_LINK_TTL_MS } from '../invitations/invitations';
import { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { TestServer, randomKey } from '../testing/harness';

let smtp: SmtpCapture;
let server: TestServer;
let clock: TestClock;

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  clock = new TestClock('2026-11-25T12:00:00Z');
  server = await TestServer.start({
    clock,
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

const dashboardLink = (token: string, idempotencyKey?: string) =>
  server.request('POST', '/api/v1/account/dashboard-links', { token, ...(idempotencyKey ? { idempotencyKey } : {}) });

describe('GET /api/v1/account', () => {
  it('shows a project bearer its project through the account shape, without spending a credit', async () => {
    const { token, projectId } = await server.enroll({ project_name: 'Lobby', email: 'ops@example.com' });
    const first = await server.request('GET', '/api/v1/account', { token });
    expect(first.status, first.text).toBe(200);
    const account = first.json();
    expect(account).toMatchObject({
      id: projectId,
      email: 'ops@example.com',
      name: 'Lobby',
      status: 'active',
      used_bytes: 0,
      reserved_bytes: 0,
      screen_count: 0,
    });
    expect(typeof account.credit_remaining).toBe('number');
    expect(account.created_at).toBe('2026-11-25T12:00:00.000Z');
    expect(first.headers.etag).toBe(`"${account.revision}"`);
    const again = (await server.request('GET', '/api/v1/account', { token })).json();
    expect(again.credit_remaining).toBe(account.credit_remaining);
  });

  it('still shows a Model A account its account', async () => {
    const account = await server.createAccount();
    const res = await server.request('GET', '/api/v1/account', { token: account.token });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ id: account.accountId, email: expect.stringContaining('@') });
    expect(res.json()).not.toHaveProperty('credit_remaining');
  });
});

describe('realm refusals', () => {
  it('name the wanted bearer with its article: "an account bearer", "a project bearer"', async () => {
    const account = await server.createAccount();
    const project = await server.enroll();
    const onProject = await server.request('GET', '/api/v1/project', { token: account.token });
    expect(onProject.status).toBe(403);
    expect(onProject.json().detail).toBe('this route takes a project bearer (Model P)');
    const onAccount = await server.request('POST', '/api/v1/account/credential-issuances/iss_x/ack', {
      token: project.token,
    });
    expect(onAccount.status).toBe(403);
    expect(onAccount.json().detail).toBe('this route takes an account bearer (Model A)');
  });
});

describe('POST /api/v1/account/credential/revoke', () => {
  it('revokes exactly the calling project bearer, the last one too, and answers a repeat with 204 again', async () => {
    const { token, projectId } = await server.enroll();
    const res = await server.request('POST', '/api/v1/account/credential/revoke', { token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect((await server.request('GET', '/api/v1/project', { token })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/account', { token })).status).toBe(401);
    expect((await server.request('POST', '/api/v1/account/credential/revoke', { token })).status).toBe(204);
    const events = await server.services.store.db
      .selectFrom('events')
      .select('type')
      .where('tenant_id', '=', projectId)
      .where('type', '=', 'agent.disconnected')
      .execute();
    expect(events).toHaveLength(1);
    const project = await server.services.store.db
      .selectFrom('tenants')
      .select('status')
      .where('id', '=', projectId)
      .executeTakeFirstOrThrow();
    expect(project.status).toBe('active');
  });

  it('revokes a Model A account bearer the same way; an unknown bearer is 401', async () => {
    const account = await server.createAccount();
    expect((await server.request('POST', '/api/v1/account/credential/revoke', { token: account.token })).status).toBe(
      204,
    );
    expect((await server.request('GET', '/api/v1/account', { token: account.token })).status).toBe(401);
    expect((await server.request('POST', '/api/v1/account/credential/revoke', { token: account.token })).status).toBe(
      204,
    );
    const unknown = await server.request('POST', '/api/v1/account/credential/revoke', { token: 'mq_proj_nobody' });
    expect(unknown.status).toBe(401);
  });
});

describe('POST /api/v1/account/dashboard-links', () => {
  it('mints a ten-minute link of exactly <dashboard>/#link=<43 chars>, never cached', async () => {
    const { token } = await server.enroll();
    const res = await dashboardLink(token);
    expect(res.status, res.text).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const { url, expires_at } = res.json();
    expect(url).toMatch(
      new RegExp(`^${server.config.dashboardOrigin.replace(/[.]/g, '\\.')}/#link=[A-Za-z0-9_-]{43}$`),
    );
    expect(Date.parse(expires_at) - clock.now()).toBe(DASHBOARD_LINK_TTL_MS);
    expect(server.logText()).not.toContain(url.split('#link=')[1]);
  });

  it('brings a signed-in member in through the claim, once; the link is single use', async () => {
    const { token, projectId } = await server.enroll({ project_name: 'Foyer' });
    const browser = await joinAsMember(server, smtp, token, 'foyer@example.com');
    const other = await server.enroll({ project_name: 'Atrium' });
    const link = (await dashboardLink(other.token)).json().url.split('#link=')[1];
    const claimed = await browser.request('POST', '/dashboard/v1/links/claim', { json: { token: link } });
    expect(claimed.status, claimed.text).toBe(200);
    expect(claimed.headers['cache-control']).toBe('no-store');
    expect(claimed.json().next).toBe('accept');
    expect(claimed.text).not.toContain(link);
    // The claim's answer carries the signup's CSRF token; the session's comes back with the session.
    await browser.request('GET', '/dashboard/v1/session');
    const accepted = await browser.request('POST', '/dashboard/v1/invitations/accept');
    expect(accepted.status, accepted.text).toBe(200);
    const projects = (await browser.request('GET', '/dashboard/v1/projects')).json().items.map((p: any) => p.id);
    expect(projects.sort()).toEqual([projectId, other.projectId].sort());
    const again = await new DashboardBrowser(server).request('POST', '/dashboard/v1/links/claim', {
      json: { token: link },
    });
    expect(again.json().code).toBe('invitation_consumed');
  });

  it('asks an anonymous visitor to prove an address; an elapsed link is link_expired, a wrong one link_invalid', async () => {
    const { token } = await server.enroll();
    const link = (await dashboardLink(token)).json().url.split('#link=')[1];
    const visitor = new DashboardBrowser(server);
    expect((await visitor.request('POST', '/dashboard/v1/links/claim', { json: { token: link } })).json().next).toBe(
      'verify_email',
    );
    const late = (await dashboardLink(token)).json().url.split('#link=')[1];
    clock.advance(DASHBOARD_LINK_TTL_MS);
    const expired = await new DashboardBrowser(server).request('POST', '/dashboard/v1/links/claim', {
      json: { token: late },
    });
    expect(expired.status).toBe(410);
    expect(expired.json().code).toBe('link_expired');
    const wrong = await new DashboardBrowser(server).request('POST', '/dashboard/v1/links/claim', {
      json: { token: 'A'.repeat(43) },
    });
    expect(wrong.json().code).toBe('link_invalid');
  });

  it('replays the same link to an exact retry while it lives, then answers link_expired', async () => {
    const { token } = await server.enroll();
    const key = randomKey();
    const first = (await dashboardLink(token, key)).json();
    expect((await dashboardLink(token, key)).json()).toEqual(first);
    clock.advance(DASHBOARD_LINK_TTL_MS);
    const late = await dashboardLink(token, key);
    expect(late.status).toBe(410);
    expect(late.json().code).toBe('link_expired');
    expect(late.text).not.toContain(first.url.split('#link=')[1]);
  });

  it('replays no link that can no longer be claimed: one accepted is invitation_consumed, one revoked link_invalid', async () => {
    const { token } = await server.enroll({ project_name: 'Cloister' });
    const member = await joinAsMember(server, smtp, (await server.enroll()).token, 'cloister@example.com');
    const key = randomKey();
    const first = (await dashboardLink(token, key)).json();
    const link = first.url.split('#link=')[1];
    await member.request('POST', '/dashboard/v1/links/claim', { json: { token: link } });
    await member.request('GET', '/dashboard/v1/session');
    expect((await member.request('POST', '/dashboard/v1/invitations/accept')).status).toBe(200);
    const used = await dashboardLink(token, key);
    expect(used.status).toBe(409);
    expect(used.json().code).toBe('invitation_consumed');
    expect(used.text).not.toContain(link);

    const revokedKey = randomKey();
    const second = (await dashboardLink(token, revokedKey)).json();
    const listed = (await server.request('GET', '/api/v1/invitations?status=outstanding', { token })).json().items;
    for (const item of listed) await server.request('POST', `/api/v1/invitations/${item.id}/revoke`, { token });
    const revoked = await dashboardLink(token, revokedKey);
    expect(revoked.json().code).toBe('link_invalid');
    expect(revoked.text).not.toContain(second.url.split('#link=')[1]);
  });

  it('is limited to 20 links per credential per hour', async () => {
    const { token } = await server.enroll();
    for (let i = 0; i < 20; i++) expect((await dashboardLink(token)).status).toBe(201);
    const refused = await dashboardLink(token);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('is a project (Model P) route', async () => {
    const account = await server.createAccount();
    expect((await dashboardLink(account.token)).status).toBe(403);
  });
});
