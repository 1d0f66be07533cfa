// Passkeys (WebAuthn through @simplewebauthn/server), answered by a software authenticator: signup
// by invitation with a passkey, usernameless sign-in, and the rules of ceremonies (single use, five
// minutes, bound to their cookie, the dashboard's origin and relying party, user verification, a
// signature counter that never moves backwards).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { inviteByEmail, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { linkToken, SmtpCapture } from '../mail/mail.fixtures';
import { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { TestServer } from '../testing/harness';
import { SoftAuthenticator } from './passkey.fixtures';
import { CEREMONY_TTL_MS } from './passkeys';

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

/** Opens an invitation for `email` in a new browser (its signup cookie set). */
async function invitedBrowser(email: string): Promise<DashboardBrowser> {
  const before = smtp.to(email).length;
  await inviteByEmail(server, token, email);
  const mail = await smtp.waitFor(email, (m) => smtp.to(email).indexOf(m) >= before);
  const browser = new DashboardBrowser(server);
  const claim = await browser.request('POST', '/dashboard/v1/invitations/claim', {
    json: { token: linkToken(mail, 'invite') },
  });
  expect(claim.status, claim.text).toBe(200);
  return browser;
}

/** Signs up through an invitation with a new passkey on `authenticator`. */
async function signUpWithPasskey(email: string, authenticator: SoftAuthenticator) {
  const browser = await invitedBrowser(email);
  const start = await browser.request('POST', '/dashboard/v1/webauthn/registrations', {
    json: { display_name: 'Pia' },
  });
  expect(start.status, start.text).toBe(201);
  const { ceremony_id, creation_options } = start.json();
  const credential = authenticator.register(creation_options, browser.origin);
  const done = await browser.request('POST', '/dashboard/v1/webauthn/registrations/complete', {
    json: { ceremony_id, credential },
  });
  return { browser, done, options: creation_options };
}

async function startAssertion(browser: DashboardBrowser) {
  const res = await browser.request('POST', '/dashboard/v1/webauthn/assertions');
  expect(res.status, res.text).toBe(201);
  return res.json() as { ceremony_id: string; request_options: any };
}

describe('signing up and in with a passkey', () => {
  it('makes a member with a discoverable, user-verified passkey on the dashboard host; no password', async () => {
    const authenticator = new SoftAuthenticator();
    const { browser, done, options } = await signUpWithPasskey('pia@example.com', authenticator);
    expect(options).toMatchObject({
      rp: { id: 'dashboard.localhost', name: 'Marquee' },
      user: { name: 'pia@example.com', displayName: 'Pia' },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    expect(done.status, done.text).toBe(200);
    expect(done.json()).toMatchObject({
      display_name: 'Pia',
      email: 'pia@example.com',
      method: 'signup',
      project: { id: projectId },
    });
    const members = (await browser.request('GET', '/dashboard/v1/members')).json().items;
    expect(members.find((m: any) => m.email === 'pia@example.com')).toMatchObject({ password: false, passkeys: 1 });
  });

  it('signs in without naming anyone: no allowCredentials, the passkey says who', async () => {
    const authenticator = new SoftAuthenticator();
    await signUpWithPasskey('quinn@example.com', authenticator);
    const browser = new DashboardBrowser(server);
    const { ceremony_id, request_options } = await startAssertion(browser);
    expect(request_options.allowCredentials ?? []).toEqual([]);
    expect(request_options).toMatchObject({ rpId: 'dashboard.localhost', userVerification: 'required' });
    const credential = authenticator.assert(request_options, browser.origin);
    const res = await browser.request('POST', '/dashboard/v1/webauthn/assertions/complete', {
      json: { ceremony_id, credential },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({ email: 'quinn@example.com', method: 'passkey', project: { id: projectId } });
    expect(browser.sessionCookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('lets a signed-in person add another passkey (and refuses a new name for them)', async () => {
    const first = new SoftAuthenticator();
    const { browser } = await signUpWithPasskey('rae@example.com', first);
    expect(
      (await browser.request('POST', '/dashboard/v1/webauthn/registrations', { json: { display_name: 'X' } })).status,
    ).toBe(400);
    const start = (await browser.request('POST', '/dashboard/v1/webauthn/registrations')).json();
    expect(start.creation_options.excludeCredentials).toHaveLength(1);
    const second = new SoftAuthenticator();
    const added = await browser.request('POST', '/dashboard/v1/webauthn/registrations/complete', {
      json: { ceremony_id: start.ceremony_id, credential: second.register(start.creation_options, browser.origin) },
    });
    expect(added.status, added.text).toBe(200);
    expect(added.headers['set-cookie']).toBeUndefined();
    const signIn = new DashboardBrowser(server);
    const { ceremony_id, request_options } = await startAssertion(signIn);
    const res = await signIn.request('POST', '/dashboard/v1/webauthn/assertions/complete', {
      json: { ceremony_id, credential: second.assert(request_options, signIn.origin) },
    });
    expect(res.json().email).toBe('rae@example.com');
  });
});

describe('ceremony rules', () => {
  const authenticator = new SoftAuthenticator();
  beforeAll(async () => {
    await signUpWithPasskey('sam@example.com', authenticator);
  });

  async function complete(browser: DashboardBrowser, ceremony_id: string, credential: unknown) {
    return browser.request('POST', '/dashboard/v1/webauthn/assertions/complete', { json: { ceremony_id, credential } });
  }

  it('uses a ceremony once', async () => {
    const browser = new DashboardBrowser(server);
    const { ceremony_id, request_options } = await startAssertion(browser);
    const credential = authenticator.assert(request_options, browser.origin);
    expect((await complete(browser, ceremony_id, credential)).status).toBe(200);
    const again = await complete(
      new DashboardBrowser(server),
      ceremony_id,
      authenticator.assert(request_options, browser.origin),
    );
    expect(again.status).toBe(400);
    expect(again.json().code).toBe('passkey_invalid');
  });

  it('ends a ceremony after five minutes', async () => {
    const browser = new DashboardBrowser(server);
    const { ceremony_id, request_options } = await startAssertion(browser);
    clock.advance(CEREMONY_TTL_MS);
    const res = await complete(browser, ceremony_id, authenticator.assert(request_options, browser.origin));
    expect(res.json().code).toBe('passkey_invalid');
  });

  it('refuses an assertion made for another origin', async () => {
    const browser = new DashboardBrowser(server);
    const { ceremony_id, request_options } = await startAssertion(browser);
    const res = await complete(browser, ceremony_id, authenticator.assert(request_options, server.origin));
    expect(res.json().code).toBe('passkey_invalid');
    expect(browser.sessionCookie).toBeUndefined();
  });

  it('refuses a signature counter that moves backwards (a cloned authenticator)', async () => {
    const browser = new DashboardBrowser(server);
    const first = await startAssertion(browser);
    expect(
      (
        await complete(
          browser,
          first.ceremony_id,
          authenticator.assert(first.request_options, browser.origin, { counter: 10 }),
        )
      ).status,
    ).toBe(200);
    const second = await startAssertion(browser);
    const res = await complete(
      browser,
      second.ceremony_id,
      authenticator.assert(second.request_options, browser.origin, { counter: 5 }),
    );
    expect(res.json().code).toBe('passkey_invalid');
  });

  it('requires user verification', async () => {
    const browser = new DashboardBrowser(server);
    const { ceremony_id, request_options } = await startAssertion(browser);
    const res = await complete(
      browser,
      ceremony_id,
      authenticator.assert(request_options, browser.origin, { userVerified: false }),
    );
    expect(res.json().code).toBe('passkey_invalid');
  });

  it('binds a registration to the cookie that began it', async () => {
    const owner = await invitedBrowser('tess@example.com');
    const start = (
      await owner.request('POST', '/dashboard/v1/webauthn/registrations', { json: { display_name: 'Tess' } })
    ).json();
    const thief = await invitedBrowser('uma@example.com');
    const credential = new SoftAuthenticator().register(start.creation_options, owner.origin);
    const res = await thief.request('POST', '/dashboard/v1/webauthn/registrations/complete', {
      json: { ceremony_id: start.ceremony_id, credential },
    });
    expect(res.json().code).toBe('passkey_invalid');
    const ok = await owner.request('POST', '/dashboard/v1/webauthn/registrations/complete', {
      json: { ceremony_id: start.ceremony_id, credential },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('refuses a registration before a link invitation’s address is proven, and without a name', async () => {
    const link = (
      await server.request('POST', '/api/v1/invitations', {
        token,
        idempotencyKey: 'passkey-link-00001',
        json: { kind: 'project_member', delivery: 'link' },
      })
    )
      .json()
      .link_url.split('#invite=')[1];
    const browser = new DashboardBrowser(server);
    await browser.request('POST', '/dashboard/v1/invitations/claim', { json: { token: link } });
    expect(
      (await browser.request('POST', '/dashboard/v1/webauthn/registrations', { json: { display_name: 'V' } })).status,
    ).toBe(409);
    const invited = await invitedBrowser('wes@example.com');
    expect((await invited.request('POST', '/dashboard/v1/webauthn/registrations')).status).toBe(400);
  });
});
