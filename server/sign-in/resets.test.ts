// Sign-in resets (spec Authentication rule 5; Limits / Time windows): mailbox-only, one hour, the
// same acknowledgment for every address, rate-limited; completion replaces every sign-in
// credential of the person and revokes their other sessions. And the contact-address rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { CONTACT_REISSUE_MAX_PROJECTS } from '../invitations/contact-address';
import { joinAsMember, TEST_PASSWORD, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { linkToken, SmtpCapture, type CapturedMail } from '../mail/mail.fixtures';
import { SoftAuthenticator } from '../members/passkey.fixtures';
import { TestServer, randomKey } from '../testing/harness';
import { DashboardBrowser } from './dashboard.fixtures';
import { requestReset as issueReset, SIGN_IN_RESET_TTL_MS } from './resets';

let smtp: SmtpCapture;
let server: TestServer;
let clock: TestClock;
let token: string;

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  clock = new TestClock('2026-11-25T12:00:00Z');
  server = await TestServer.start({
    clock,
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  ({ token } = await server.enroll({ email: 'contact@example.com' }));
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

const requestReset = (email: string) =>
  server.request('POST', '/api/v1/sign-in-resets', { idempotencyKey: randomKey(), json: { email } });

async function resetMail(email: string): Promise<CapturedMail> {
  const before = smtp.to(email).length;
  const res = await requestReset(email);
  expect(res.status, res.text).toBe(202);
  return smtp.waitFor(email, (m) => smtp.to(email).indexOf(m) >= before);
}

/** Opens the reset link in a new browser (the signup cookie of purpose reset). */
async function openReset(mail: CapturedMail): Promise<DashboardBrowser> {
  const browser = new DashboardBrowser(server);
  const claim = await browser.request('POST', '/dashboard/v1/sign-in-resets/claim', {
    json: { token: linkToken(mail, 'reset') },
  });
  expect(claim.status, claim.text).toBe(200);
  return browser;
}

describe('asking for a reset', () => {
  it('acknowledges every address alike and mails only an address that has a login', async () => {
    await joinAsMember(server, smtp, token, 'kim@example.com');
    const known = await requestReset('kim@example.com');
    const unknown = await requestReset('nobody-here@example.com');
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(known.json()).toEqual({ status: 'accepted', expires_in_seconds: 3600 });
    expect(unknown.json()).toEqual(known.json());
    expect(unknown.headers['content-length']).toBe(known.headers['content-length']);
    const mail = await smtp.waitFor('kim@example.com', (m) => m.text.includes('#reset='));
    expect(mail.text).toContain(`${server.config.dashboardOrigin}/#reset=`);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.to('nobody-here@example.com')).toEqual([]);
  });

  it('limits requests per address (counting unknown addresses too) with 429 and RateLimit headers', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await requestReset('budget@example.com');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
    expect(last!.headers['retry-after']).toBeDefined();
    expect(last!.headers['ratelimit-policy']).toContain('sign-in-reset-email');
  });
});

describe('finishing a reset', () => {
  it('replaces the password, revokes every other session, and signs this browser in', async () => {
    const member = await joinAsMember(server, smtp, token, 'lee@example.com', { name: 'Lee' });
    const other = new DashboardBrowser(server);
    await other.signIn('lee@example.com', TEST_PASSWORD);
    const browser = await openReset(await resetMail('lee@example.com'));
    const res = await browser.request('POST', '/dashboard/v1/sign-in-resets/password', {
      json: { password: 'a brand new passphrase' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({ email: 'lee@example.com', method: 'reset' });
    expect((await member.request('GET', '/dashboard/v1/session')).status).toBe(401);
    expect((await other.request('GET', '/dashboard/v1/session')).status).toBe(401);
    expect((await browser.request('GET', '/dashboard/v1/session')).status).toBe(200);
    const old = await new DashboardBrowser(server).request('POST', '/dashboard/v1/sign-in', {
      json: { email: 'lee@example.com', password: TEST_PASSWORD },
    });
    expect(old.status).toBe(401);
    await new DashboardBrowser(server).signIn('lee@example.com', 'a brand new passphrase');
    const events = (await server.request('GET', '/api/v1/events', { token })).json().items.map((e: any) => e.type);
    expect(events).toContain('member.credentials_reset');
  });

  it('replaces passkeys and the password with a new passkey', async () => {
    const member = await joinAsMember(server, smtp, token, 'max@example.com');
    const start = (await member.request('POST', '/dashboard/v1/webauthn/registrations')).json();
    const old = new SoftAuthenticator();
    await member.request('POST', '/dashboard/v1/webauthn/registrations/complete', {
      json: { ceremony_id: start.ceremony_id, credential: old.register(start.creation_options, member.origin) },
    });
    const browser = await openReset(await resetMail('max@example.com'));
    const begin = (await browser.request('POST', '/dashboard/v1/webauthn/registrations')).json();
    const fresh = new SoftAuthenticator();
    const done = await browser.request('POST', '/dashboard/v1/webauthn/registrations/complete', {
      json: { ceremony_id: begin.ceremony_id, credential: fresh.register(begin.creation_options, browser.origin) },
    });
    expect(done.status, done.text).toBe(200);
    expect(done.json().method).toBe('reset');
    const withOld = new DashboardBrowser(server);
    const a = (await withOld.request('POST', '/dashboard/v1/webauthn/assertions')).json();
    const refused = await withOld.request('POST', '/dashboard/v1/webauthn/assertions/complete', {
      json: { ceremony_id: a.ceremony_id, credential: old.assert(a.request_options, withOld.origin) },
    });
    expect(refused.json().code).toBe('passkey_invalid');
    const password = await new DashboardBrowser(server).request('POST', '/dashboard/v1/sign-in', {
      json: { email: 'max@example.com', password: TEST_PASSWORD },
    });
    expect(password.status).toBe(401);
    const b = (await withOld.request('POST', '/dashboard/v1/webauthn/assertions')).json();
    const ok = await withOld.request('POST', '/dashboard/v1/webauthn/assertions/complete', {
      json: { ceremony_id: b.ceremony_id, credential: fresh.assert(b.request_options, withOld.origin) },
    });
    expect(ok.json().email).toBe('max@example.com');
  });

  it('expires after one hour', async () => {
    await joinAsMember(server, smtp, token, 'old@example.com');
    const mail = await resetMail('old@example.com');
    clock.advance(SIGN_IN_RESET_TTL_MS);
    const res = await new DashboardBrowser(server).request('POST', '/dashboard/v1/sign-in-resets/claim', {
      json: { token: linkToken(mail, 'reset') },
    });
    expect(res.status).toBe(410);
    expect(res.json().code).toBe('link_expired');
  });

  it('works once, and only the newest link of a person works', async () => {
    await joinAsMember(server, smtp, token, 'once@example.com');
    const first = await resetMail('once@example.com');
    const second = await resetMail('once@example.com');
    const stale = await new DashboardBrowser(server).request('POST', '/dashboard/v1/sign-in-resets/claim', {
      json: { token: linkToken(first, 'reset') },
    });
    expect(stale.json().code).toBe('link_invalid');
    const browser = await openReset(second);
    expect(
      (
        await browser.request('POST', '/dashboard/v1/sign-in-resets/password', {
          json: { password: 'the second passphrase' },
        })
      ).status,
    ).toBe(200);
    const again = await new DashboardBrowser(server).request('POST', '/dashboard/v1/sign-in-resets/claim', {
      json: { token: linkToken(second, 'reset') },
    });
    expect(again.json().code).toBe('link_invalid');
  });

  it('leaves one link of a person working when a request arrives while another is under way', async () => {
    await joinAsMember(server, smtp, token, 'together@example.com');
    const before = smtp.to('together@example.com').length;
    let second: Promise<{ status: number }> | undefined;
    await server.services.store.transaction(async (work) => {
      await issueReset(server.services, work, { email: 'together@example.com' }, clock.now());
      // The second request runs while the first's transaction is still open.
      second = requestReset('together@example.com');
      await new Promise((r) => setTimeout(r, 300));
    });
    expect((await second!).status).toBe(202);
    await smtp.waitFor('together@example.com', () => smtp.to('together@example.com').length >= before + 2);
    const claims = await Promise.all(
      smtp
        .to('together@example.com')
        .slice(before)
        .map((mail) =>
          new DashboardBrowser(server).request('POST', '/dashboard/v1/sign-in-resets/claim', {
            json: { token: linkToken(mail, 'reset') },
          }),
        ),
    );
    expect(claims.map((c) => (c.status === 200 ? 'claimed' : c.json().code)).sort()).toEqual([
      'claimed',
      'link_invalid',
    ]);
  });

  it('takes the reset step only with a reset’s signup cookie, not an invitation’s', async () => {
    const browser = new DashboardBrowser(server);
    const link = (
      await server.request('POST', '/api/v1/invitations', {
        token,
        idempotencyKey: randomKey(),
        json: { kind: 'project_member', delivery: 'link' },
      })
    )
      .json()
      .link_url.split('#invite=')[1];
    await browser.request('POST', '/dashboard/v1/invitations/claim', { json: { token: link } });
    const res = await browser.request('POST', '/dashboard/v1/sign-in-resets/password', {
      json: { password: 'whatever passphrase' },
    });
    expect(res.status).toBe(403);
  });
});

describe('the contact-address rule', () => {
  it('mails invitations to the projects enrolled with the address that nobody joined, at most ten, the newest', async () => {
    const address = 'owner@example.com';
    const enrolled: string[] = [];
    for (let i = 0; i < CONTACT_REISSUE_MAX_PROJECTS + 2; i++) {
      enrolled.push((await server.enroll({ email: address, project_name: `Site ${i}` })).projectId);
      clock.advance(1000);
    }
    // The newest has a member already: it is not offered.
    const joined = await server.enroll({ email: address, project_name: 'Joined site' });
    await joinAsMember(server, smtp, joined.token, 'someone@example.com');
    const mail = await resetMail(address);
    expect(mail.text).not.toContain('#reset='); // the address has no login
    const offered = [...mail.text.matchAll(/"(Site \d+)"/g)].map((m) => m[1]);
    expect(offered).toHaveLength(CONTACT_REISSUE_MAX_PROJECTS);
    expect(offered).toEqual(
      Array.from({ length: CONTACT_REISSUE_MAX_PROJECTS }, (_, i) => `Site ${CONTACT_REISSUE_MAX_PROJECTS + 1 - i}`),
    );
    expect(mail.text).not.toContain('Joined site');
    // The link joins the person to that project, as its first member.
    const browser = new DashboardBrowser(server);
    const claim = await browser.request('POST', '/dashboard/v1/invitations/claim', {
      json: { token: linkToken(mail, 'invite') },
    });
    expect(claim.json()).toMatchObject({
      next: 'create_credential',
      invitation: { project_name: `Site ${CONTACT_REISSUE_MAX_PROJECTS + 1}`, email: address },
    });
    const done = await browser.request('POST', '/dashboard/v1/signup/password', {
      json: { display_name: 'Owner', password: TEST_PASSWORD },
    });
    expect(done.json().project.id).toBe(enrolled.at(-1));
    // Asking again: that project has a member now, so an older one takes its place; the rest are reused.
    clock.advance(SIGN_IN_RESET_TTL_MS);
    const next = await resetMail(address);
    expect(next.text).toContain('#reset=');
    expect([...next.text.matchAll(/"(Site \d+)"/g)].map((m) => m[1])).toContain('Site 1');
  });
});
