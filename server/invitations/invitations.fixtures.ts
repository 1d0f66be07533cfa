// Tests' way to a member: an agent invites an address, the mail arrives over SMTP, and a browser
// opens its link and signs up with a password.
import { expect } from 'vitest';
import { linkToken, type SmtpCapture } from '../mail/mail.fixtures';
import { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { randomKey, type TestServer } from '../testing/harness';

export const TEST_PASSWORD = 'correct horse battery staple';

/** A cheap scrypt cost for tests that sign in often (one test checks the default cost). */
export const TEST_PASSWORD_COST = { N: 1024, r: 8, p: 1 };

export async function inviteByEmail(server: TestServer, token: string, email: string, kind = 'project_member') {
  const res = await server.request('POST', '/api/v1/invitations', {
    token,
    idempotencyKey: randomKey(),
    json: { kind, emails: [email] },
  });
  expect(res.status, res.text).toBe(201);
  return res.json().items[0] as { id: string; status: string; expires_at: string };
}

/** Invites `email` into the project and signs it up with a password; the browser leaves signed in. */
export async function joinAsMember(
  server: TestServer,
  smtp: SmtpCapture,
  token: string,
  email: string,
  options: { name?: string; password?: string } = {},
): Promise<DashboardBrowser> {
  const before = smtp.to(email).length;
  await inviteByEmail(server, token, email);
  const mail = await smtp.waitFor(email, (m) => smtp.to(email).indexOf(m) >= before && m.text.includes('#invite='));
  const browser = new DashboardBrowser(server);
  const claim = await browser.request('POST', '/dashboard/v1/invitations/claim', {
    json: { token: linkToken(mail, 'invite') },
  });
  expect(claim.status, claim.text).toBe(200);
  const joined = await browser.request('POST', '/dashboard/v1/signup/password', {
    json: { display_name: options.name ?? 'Ada Member', password: options.password ?? TEST_PASSWORD },
  });
  expect(joined.status, joined.text).toBe(200);
  return browser;
}
