// Invitations (spec: States / Invitation; Limits / Time windows): email and link delivery, reuse of
// an outstanding email invitation, 7-day and 24-hour expiry, revocation, acceptance through the
// signup cookie with a password, address proof for links, and joining as a person who has a login.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { linkToken, SmtpCapture } from '../mail/mail.fixtures';
import { pairPendingScreen } from '../pairing/pairing.fixtures';
import { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { TestServer, randomKey } from '../testing/harness';
import { SIGNUP_TTL_MS } from '../sign-in/dashboard-cookies';
import { ADDRESS_CODE_ATTEMPTS, ADDRESS_CODE_TTL_MS, ADDRESS_CODES_PER_SIGNUP } from './acceptance';
import { inviteByEmail, joinAsMember, TEST_PASSWORD, TEST_PASSWORD_COST } from './invitations.fixtures';
import { INVITATION_EMAIL_TTL_MS, INVITATION_LINK_TTL_MS, revokeInvitation } from './invitations';

let smtp: SmtpCapture;
let server: TestServer;
let clock: TestClock;
let token: string;
let projectId: string;

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  clock = new TestClock('2026-11-25T12:00:00Z');
  server = await TestServer.start({
    clock,
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  ({ token, projectId } = await server.enroll({ project_name: 'Lobby screens' }));
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

const invite = (json: unknown, idempotencyKey = randomKey(), bearer = token) =>
  server.request('POST', '/api/v1/invitations', { token: bearer, idempotencyKey, json });

async function latestLink(email: string): Promise<string> {
  const count = smtp.to(email).length;
  const mail = await smtp.waitFor(email, (m) => smtp.to(email).indexOf(m) === count - 1 || count === 0);
  return linkToken(smtp.to(email).at(-1) ?? mail, 'invite');
}

async function nextMail(email: string, before: number) {
  return smtp.waitFor(email, (m) => smtp.to(email).indexOf(m) >= before);
}

function claim(browser: DashboardBrowser, inviteToken: string) {
  return browser.request('POST', '/dashboard/v1/invitations/claim', { json: { token: inviteToken } });
}

describe('creating invitations', () => {
  it('mails each address its own invitation, valid seven days, and records the event', async () => {
    const res = await invite({ kind: 'project_member', emails: ['one@example.com', 'Two@Example.com'] });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const body = res.json();
    expect(body.link_url).toBeUndefined();
    expect(body.items).toHaveLength(2);
    expect(body.items[1]).toMatchObject({
      kind: 'project_member',
      delivery: 'email',
      email: 'two@example.com',
      status: 'outstanding',
      reused: false,
    });
    expect(Date.parse(body.items[0].expires_at) - clock.now()).toBe(INVITATION_EMAIL_TTL_MS);
    const mail = await smtp.waitFor('two@example.com');
    expect(mail.subject).toContain('Lobby screens');
    expect(linkToken(mail, 'invite')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const events = (await server.request('GET', '/api/v1/events', { token })).json().items;
    expect(events.filter((e: any) => e.type === 'invitation.created')).toHaveLength(2);
    expect(events.find((e: any) => e.type === 'invitation.created').details).toEqual({
      kind: 'project_member',
      delivery: 'email',
      reused: false,
    });
  });

  it('reuses the outstanding invitation of the same kind, address and project: same id, fresh link, old link dead', async () => {
    const first = (await invite({ kind: 'project_member', emails: ['again@example.com'] })).json().items[0];
    const firstLink = await latestLink('again@example.com');
    clock.advance(3600_000);
    const before = smtp.to('again@example.com').length;
    const second = (await invite({ kind: 'project_member', emails: ['AGAIN@example.com'] })).json().items[0];
    expect(second).toMatchObject({ id: first.id, reused: true, expires_at: first.expires_at });
    const secondLink = linkToken(await nextMail('again@example.com', before), 'invite');
    expect(secondLink).not.toBe(firstLink);
    expect((await claim(new DashboardBrowser(server), firstLink)).json().code).toBe('link_invalid');
    expect((await claim(new DashboardBrowser(server), secondLink)).status).toBe(200);
    // Another kind, or another project, is another invitation.
    const buyer = (
      await invite({ kind: 'ad_buyer', emails: ['again@example.com'], advertising: { slots: ['lobby_top'] } })
    ).json().items[0];
    expect(buyer.id).not.toBe(first.id);
    const other = await server.enroll();
    const elsewhere = (
      await invite({ kind: 'project_member', emails: ['again@example.com'] }, randomKey(), other.token)
    ).json().items[0];
    expect(elsewhere.id).not.toBe(first.id);
  });

  it('hands a link invitation over once as link_url, valid 24 hours, and mails nothing', async () => {
    const res = await invite({ kind: 'project_member', delivery: 'link' });
    expect(res.status).toBe(201);
    const body = res.json();
    expect(body.link_url).toMatch(new RegExp(`^${server.config.dashboardOrigin}/#invite=[A-Za-z0-9_-]{43}$`));
    expect(body.items[0]).toMatchObject({ delivery: 'link', email: null, status: 'outstanding' });
    expect(Date.parse(body.items[0].expires_at) - clock.now()).toBe(INVITATION_LINK_TTL_MS);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses malformed requests with invalid_request', async () => {
    for (const json of [
      { kind: 'project_member' },
      { kind: 'project_member', delivery: 'link', emails: ['x@example.com'] },
      { kind: 'ad_buyer', emails: ['x@example.com'] },
      { kind: 'project_member', emails: ['x@example.com'], advertising: { slots: ['a'] } },
      { kind: 'ad_buyer', emails: ['x@example.com'], advertising: {} },
      { kind: 'project_member', emails: ['x@example.com', 'X@example.com'] },
      { kind: 'owner', emails: ['x@example.com'] },
      { kind: 'project_member', emails: ['not an address'] },
    ]) {
      const res = await invite(json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
    const noKey = await server.request('POST', '/api/v1/invitations', {
      token,
      json: { kind: 'project_member', delivery: 'link' },
    });
    expect(noKey.status).toBe(400);
  });

  it('takes only this project’s screens into an ad buyer’s scope', async () => {
    const other = await server.enroll();
    const foreign = await pairPendingScreen(server, other.token);
    const refused = await invite({
      kind: 'ad_buyer',
      emails: ['buyer@example.com'],
      advertising: { screens: [foreign.id] },
    });
    expect(refused.status).toBe(404);
    const own = await pairPendingScreen(server, token);
    const res = await invite({ kind: 'ad_buyer', emails: ['buyer@example.com'], advertising: { screens: [own.id] } });
    expect(res.status).toBe(201);
    expect(res.json().items[0].advertising).toEqual({ screens: [own.id] });
  });

  it('mails no member of the project: names the address as a member already and invites the others', async () => {
    await joinAsMember(server, smtp, token, 'member@example.com');
    const mailsBefore = smtp.to('member@example.com').length;
    const res = await invite({ kind: 'project_member', emails: ['Member@Example.com', 'newcomer@example.com'] });
    expect(res.status, res.text).toBe(201);
    const body = res.json();
    expect(body.items.map((i: any) => i.email)).toEqual(['newcomer@example.com']);
    expect(body.already_members).toEqual(['Member@Example.com']);
    await smtp.waitFor('newcomer@example.com');
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.to('member@example.com')).toHaveLength(mailsBefore);
  });

  it('replays an exact retry without a second mail, and refuses the key with another body', async () => {
    const key = randomKey();
    const first = await invite({ kind: 'project_member', emails: ['retry@example.com'] }, key);
    await smtp.waitFor('retry@example.com');
    const again = await invite({ kind: 'project_member', emails: ['retry@example.com'] }, key);
    expect(again.status).toBe(201);
    expect(again.json()).toEqual(first.json());
    const other = await invite({ kind: 'project_member', emails: ['other@example.com'] }, key);
    expect(other.json().code).toBe('idempotency_mismatch');
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.to('retry@example.com')).toHaveLength(1);
  });
});

describe('invitation windows and states', () => {
  it('expires an email invitation after seven days and a link after 24 hours', async () => {
    const own = await server.enroll();
    const byMail = (
      await invite({ kind: 'project_member', emails: ['late@example.com'] }, randomKey(), own.token)
    ).json().items[0];
    const mailLink = await latestLink('late@example.com');
    const link = (await invite({ kind: 'project_member', delivery: 'link' }, randomKey(), own.token)).json();
    const linkToken_ = link.link_url.split('#invite=')[1];
    clock.advance(INVITATION_LINK_TTL_MS - 1);
    expect((await claim(new DashboardBrowser(server), linkToken_)).status).toBe(200);
    clock.advance(1);
    expect((await claim(new DashboardBrowser(server), linkToken_)).json().code).toBe('link_expired');
    expect((await claim(new DashboardBrowser(server), mailLink)).status).toBe(200);
    clock.advance(INVITATION_EMAIL_TTL_MS - INVITATION_LINK_TTL_MS);
    const expired = await claim(new DashboardBrowser(server), mailLink);
    expect(expired.status).toBe(410);
    expect(expired.json().code).toBe('link_expired');
    const listed = (await server.request('GET', '/api/v1/invitations?status=expired', { token: own.token })).json()
      .items;
    expect(listed.map((i: any) => i.id).sort()).toEqual([byMail.id, link.items[0].id].sort());
    // An expired email invitation is not reused: the next one is new.
    const fresh = (
      await invite({ kind: 'project_member', emails: ['late@example.com'] }, randomKey(), own.token)
    ).json().items[0];
    expect(fresh).toMatchObject({ reused: false, status: 'outstanding' });
  });

  it('revokes an outstanding invitation (its link dies); revoking again changes nothing; another project’s is not_found', async () => {
    const item = (await invite({ kind: 'project_member', emails: ['revoked@example.com'] })).json().items[0];
    const link = await latestLink('revoked@example.com');
    const res = await server.request('POST', `/api/v1/invitations/${item.id}/revoke`, { token });
    expect(res.status).toBe(204);
    expect((await server.request('POST', `/api/v1/invitations/${item.id}/revoke`, { token })).status).toBe(204);
    expect((await claim(new DashboardBrowser(server), link)).json().code).toBe('link_invalid');
    const listed = (await server.request('GET', '/api/v1/invitations?status=revoked', { token })).json().items;
    expect(listed.find((i: any) => i.id === item.id)).toMatchObject({ status: 'revoked' });
    const other = await server.enroll();
    expect((await server.request('POST', `/api/v1/invitations/${item.id}/revoke`, { token: other.token })).status).toBe(
      404,
    );
  });

  it('revokes once when a revoke arrives while another is under way; the second changes nothing', async () => {
    const item = (await invite({ kind: 'project_member', emails: ['twice@example.com'] })).json().items[0];
    const { services } = server;
    let second: Promise<{ status: number; json(): any }> | undefined;
    await services.store.transaction(async (work) => {
      await revokeInvitation(services, work, { tenantId: projectId, id: item.id, requestId: 'req_first' }, clock.now());
      second = server.request('POST', `/api/v1/invitations/${item.id}/revoke`, { token });
      await new Promise((r) => setTimeout(r, 300));
    });
    expect((await second!).status).toBe(204);
    const revoked = await services.store.db
      .selectFrom('events')
      .select('type')
      .where('resource_id', '=', item.id)
      .where('type', '=', 'invitation.revoked')
      .execute();
    expect(revoked).toHaveLength(1);
  });

  it('answers invitation_consumed when revoking an accepted invitation, and to a second acceptance', async () => {
    await joinAsMember(server, smtp, token, 'accepted@example.com');
    const accepted = (await server.request('GET', '/api/v1/invitations?status=accepted', { token })).json().items;
    const item = accepted.find((i: any) => i.email === 'accepted@example.com');
    const res = await server.request('POST', `/api/v1/invitations/${item.id}/revoke`, { token });
    expect(res.status).toBe(409);
    expect(res.json().code).toBe('invitation_consumed');
    const link = linkToken(smtp.to('accepted@example.com').at(-1)!, 'invite');
    expect((await claim(new DashboardBrowser(server), link)).json().code).toBe('invitation_consumed');
  });

  it('lists by kind and status, newest first, in pages with an opaque cursor', async () => {
    const own = await server.enroll();
    for (let i = 0; i < 3; i++) {
      const emails = Array.from({ length: 20 }, (_, j) => `p${i}-${j}@example.com`);
      expect((await invite({ kind: 'project_member', emails }, randomKey(), own.token)).status).toBe(201);
      clock.advance(1000);
    }
    const first = (await server.request('GET', '/api/v1/invitations?kind=project_member', { token: own.token })).json();
    expect(first.items).toHaveLength(50);
    expect(first.items[0].email).toMatch(/^p2-/);
    const second = (
      await server.request('GET', `/api/v1/invitations?cursor=${first.next_cursor}`, { token: own.token })
    ).json();
    expect(second.items).toHaveLength(10);
    expect(second.next_cursor).toBeNull();
    expect(new Set([...first.items, ...second.items].map((i: any) => i.id)).size).toBe(60);
    expect(
      (await server.request('GET', '/api/v1/invitations?kind=ad_buyer', { token: own.token })).json().items,
    ).toEqual([]);
    expect((await server.request('GET', '/api/v1/invitations?cursor=nonsense', { token: own.token })).status).toBe(400);
    expect((await server.request('GET', '/api/v1/invitations?status=lost', { token: own.token })).status).toBe(400);
  });
});

describe('accepting an invitation', () => {
  it('makes a new member with a password: the signup cookie, then a session in the project', async () => {
    const before = smtp.to('new@example.com').length;
    await inviteByEmail(server, token, 'new@example.com');
    const link = linkToken(await nextMail('new@example.com', before), 'invite');
    const browser = new DashboardBrowser(server);
    const claimed = await claim(browser, link);
    expect(claimed.json()).toMatchObject({
      next: 'create_credential',
      invitation: { kind: 'project_member', project_name: 'Lobby screens', email: 'new@example.com' },
    });
    expect(claimed.headers['set-cookie']?.[0]).toMatch(
      /^__Host-marquee-signup=[A-Za-z0-9_-]{43}; Max-Age=1800; Path=\/; Secure; HttpOnly; SameSite=Strict$/,
    );
    const short = await browser.request('POST', '/dashboard/v1/signup/password', {
      json: { display_name: 'Nia', password: 'short' },
    });
    expect(short.status).toBe(400);
    const joined = await browser.request('POST', '/dashboard/v1/signup/password', {
      json: { display_name: '  Nia  ', password: TEST_PASSWORD },
    });
    expect(joined.status).toBe(200);
    expect(joined.json()).toMatchObject({
      display_name: 'Nia',
      email: 'new@example.com',
      method: 'signup',
      project: { id: projectId },
    });
    expect(joined.headers['set-cookie']).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^__Host-marquee-dashboard=/),
        expect.stringMatching(/^__Host-marquee-signup=; Max-Age=0/),
      ]),
    );
    const events = (await server.request('GET', '/api/v1/events', { token })).json().items.map((e: any) => e.type);
    expect(events).toEqual(expect.arrayContaining(['invitation.accepted', 'member.joined']));
    const self = (await server.request('GET', '/api/v1/agents/self', { token })).json();
    expect(self.connection_ready).toBe(true);
  });

  it('proves the address of a link invitation by a mailed code before a login is made', async () => {
    const link = (await invite({ kind: 'project_member', delivery: 'link' })).json().link_url.split('#invite=')[1];
    const browser = new DashboardBrowser(server);
    expect((await claim(browser, link)).json().next).toBe('verify_email');
    const early = await browser.request('POST', '/dashboard/v1/signup/password', {
      json: { display_name: 'Lin', password: TEST_PASSWORD },
    });
    expect(early.status).toBe(409);
    expect(
      (await browser.request('POST', '/dashboard/v1/signup/email', { json: { email: 'lin@example.com' } })).status,
    ).toBe(202);
    const code = /code to confirm this address on Marquee is ([0-9]{6})/.exec(
      (await smtp.waitFor('lin@example.com')).text,
    )![1]!;
    const wrong = code === '000000' ? '000001' : '000000';
    const bad = await browser.request('POST', '/dashboard/v1/signup/email/verify', { json: { code: wrong } });
    expect(bad.status).toBe(400);
    const verified = await browser.request('POST', '/dashboard/v1/signup/email/verify', { json: { code } });
    expect(verified.json()).toEqual({ email: 'lin@example.com', next: 'create_credential' });
    const joined = await browser.request('POST', '/dashboard/v1/signup/password', {
      json: { display_name: 'Lin', password: TEST_PASSWORD },
    });
    expect(joined.json()).toMatchObject({ email: 'lin@example.com', project: { id: projectId } });
  });

  it('voids a code after five wrong tries, counting each although the request fails', async () => {
    const link = (await invite({ kind: 'project_member', delivery: 'link' })).json().link_url.split('#invite=')[1];
    const browser = new DashboardBrowser(server);
    await claim(browser, link);
    await browser.request('POST', '/dashboard/v1/signup/email', { json: { email: 'guess@example.com' } });
    const code = /is ([0-9]{6})\./.exec((await smtp.waitFor('guess@example.com')).text)![1]!;
    const wrong = code === '111111' ? '222222' : '111111';
    for (let i = 0; i < ADDRESS_CODE_ATTEMPTS; i++) {
      expect(
        (await browser.request('POST', '/dashboard/v1/signup/email/verify', { json: { code: wrong } })).status,
      ).toBe(400);
    }
    const late = await browser.request('POST', '/dashboard/v1/signup/email/verify', { json: { code } });
    expect(late.json().code).toBe('link_expired');
  });

  it('ends a mailed code after 15 minutes and the signup cookie after 30', async () => {
    const link = (await invite({ kind: 'project_member', delivery: 'link' })).json().link_url.split('#invite=')[1];
    const browser = new DashboardBrowser(server);
    await claim(browser, link);
    await browser.request('POST', '/dashboard/v1/signup/email', { json: { email: 'slow@example.com' } });
    const code = /is ([0-9]{6})\./.exec((await smtp.waitFor('slow@example.com')).text)![1]!;
    clock.advance(ADDRESS_CODE_TTL_MS);
    expect((await browser.request('POST', '/dashboard/v1/signup/email/verify', { json: { code } })).json().code).toBe(
      'link_expired',
    );
    clock.advance(SIGNUP_TTL_MS - ADDRESS_CODE_TTL_MS);
    const gone = await browser.request('POST', '/dashboard/v1/signup/email', { json: { email: 'slow@example.com' } });
    expect(gone.status).toBe(401);
  });

  it('asks a person whose address has a login to sign in, then accept; the membership takes the invitation’s kind', async () => {
    await joinAsMember(server, smtp, token, 'both@example.com', { name: 'Bo' });
    const other = await server.enroll({ project_name: 'Airport' });
    const before = smtp.to('both@example.com').length;
    const screen = await pairPendingScreen(server, other.token);
    const res = await invite(
      { kind: 'ad_buyer', emails: ['both@example.com'], advertising: { screens: [screen.id] } },
      randomKey(),
      other.token,
    );
    expect(res.status).toBe(201);
    const link = linkToken(await nextMail('both@example.com', before), 'invite');
    const browser = new DashboardBrowser(server);
    expect((await claim(browser, link)).json().next).toBe('sign_in');
    expect(
      (
        await browser.request('POST', '/dashboard/v1/signup/password', {
          json: { display_name: 'Bo2', password: TEST_PASSWORD },
        })
      ).json().code,
    ).toBe('resource_conflict');
    await browser.signIn('both@example.com', TEST_PASSWORD);
    const accepted = await browser.request('POST', '/dashboard/v1/invitations/accept');
    expect(accepted.status).toBe(200);
    expect(accepted.json().project).toEqual({ id: other.projectId, name: 'Airport', membership: 'ad_buyer' });
    const projects = (await browser.request('GET', '/dashboard/v1/projects')).json().items;
    expect(projects.map((p: any) => p.id).sort()).toEqual([projectId, other.projectId].sort());
    // A signed-in person who opens a link is offered to accept.
    const link2 = (await invite({ kind: 'project_member', delivery: 'link' }, randomKey(), other.token))
      .json()
      .link_url.split('#invite=')[1];
    expect((await claim(browser, link2)).json().next).toBe('accept');
  });

  it('leaves an invitation open when a signed-in member of its project opens its link and accepts', async () => {
    const member = await joinAsMember(server, smtp, token, 'colleague@example.com', { name: 'Col' });
    const before = smtp.to('newcomer@example.com').length;
    const item = await inviteByEmail(server, token, 'newcomer@example.com');
    const link = linkToken(await nextMail('newcomer@example.com', before), 'invite');
    // The colleague's browser opens the newcomer's link (a shared computer, a forwarded mail).
    expect((await claim(member, link)).json().next).toBe('accept');
    await member.request('GET', '/dashboard/v1/session'); // the session's CSRF token, as the page does
    const refused = await member.request('POST', '/dashboard/v1/invitations/accept');
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'resource_conflict' });
    expect(refused.json().detail).toContain('member of this project already');
    const listed = (await server.request('GET', '/api/v1/invitations?status=outstanding', { token })).json().items;
    expect(listed.find((i: any) => i.id === item.id)).toMatchObject({ status: 'outstanding' });
    // The person it was sent to still joins with it.
    const newcomer = new DashboardBrowser(server);
    expect((await claim(newcomer, link)).json().next).toBe('create_credential');
    const joined = await newcomer.request('POST', '/dashboard/v1/signup/password', {
      json: { display_name: 'New', password: TEST_PASSWORD },
    });
    expect(joined.status, joined.text).toBe(200);
  });
});

describe('requests arriving together', () => {
  it('make one outstanding invitation of an address, reused by the others', async () => {
    const other = await server.enroll({ project_name: 'Four doors' });
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        invite({ kind: 'project_member', emails: ['together@example.com'] }, randomKey(), other.token),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(answers.map((a) => a.json().items[0].reused).sort()).toEqual([false, true, true, true]);
    const listed = (
      await server.request('GET', '/api/v1/invitations?status=outstanding', { token: other.token })
    ).json().items;
    expect(listed.filter((i: any) => i.email === 'together@example.com')).toHaveLength(1);
  });

  it('make one membership of a person accepting two invitations of a project; the other stays outstanding', async () => {
    await joinAsMember(server, smtp, token, 'twice@example.com', { name: 'Twi' });
    const other = await server.enroll({ project_name: 'Two links' });
    const links: string[] = [];
    for (let i = 0; i < 2; i++)
      links.push(
        (await invite({ kind: 'project_member', delivery: 'link' }, randomKey(), other.token))
          .json()
          .link_url.split('#invite=')[1],
      );
    const browsers = [new DashboardBrowser(server), new DashboardBrowser(server)];
    for (const [i, browser] of browsers.entries()) {
      await browser.signIn('twice@example.com', TEST_PASSWORD);
      expect((await claim(browser, links[i]!)).json().next).toBe('accept');
      await browser.request('GET', '/dashboard/v1/session'); // the session's CSRF token, as the page does
    }
    const answers = await Promise.all(browsers.map((b) => b.request('POST', '/dashboard/v1/invitations/accept')));
    expect(answers.map((a) => (a.status === 200 ? 'joined' : a.json().code)).sort()).toEqual([
      'joined',
      'resource_conflict',
    ]);
    const listed = (await server.request('GET', '/api/v1/invitations', { token: other.token })).json().items;
    expect(listed.map((i: any) => i.status).sort()).toEqual(['accepted', 'outstanding']);
  });

  it('mail at most three codes to a signup', async () => {
    clock.advance(60 * 60_000); // a fresh hour of the per-address code budget
    const link = (await invite({ kind: 'project_member', delivery: 'link' })).json().link_url.split('#invite=')[1];
    const browser = new DashboardBrowser(server);
    await claim(browser, link);
    const answers = await Promise.all(
      Array.from({ length: ADDRESS_CODES_PER_SIGNUP + 3 }, () =>
        browser.request('POST', '/dashboard/v1/signup/email', { json: { email: 'eager@example.com' } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 202, 429, 429, 429]);
    await smtp.waitFor('eager@example.com', () => smtp.to('eager@example.com').length >= ADDRESS_CODES_PER_SIGNUP);
    expect(smtp.to('eager@example.com')).toHaveLength(ADDRESS_CODES_PER_SIGNUP);
  });
});
