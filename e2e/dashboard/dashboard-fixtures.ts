// The dashboard specs' fixtures: a member of the worker's project, made the way a person gets a
// login on a fresh install (the project's agent invites an address, the mail's link is opened on
// the access page, a password is chosen), in a browser context of its own (joinByInvitation, for a
// project of the spec's own too); and the test's page as the dashboard page object.
import crypto from 'node:crypto';
import type { Browser } from '@playwright/test';
import { linkToken, type SmtpCapture } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { DashboardPage } from '../pages/dashboard-page';
import type { ControlApi } from '../support/control-api';
import { expect, test as base } from '../support/fixtures';

export interface Member {
  email: string;
  password: string;
  name: string;
}

/**
 * A person who joins `project` by the invitation its agent sends to a new address, in a browser
 * context of their own that is closed again (the specs sign in where they need to).
 */
export async function joinByInvitation(
  browser: Browser,
  project: ControlApi,
  mailbox: SmtpCapture,
  dashboardOrigin: string,
): Promise<Member> {
  const tag = crypto.randomBytes(4).toString('hex');
  const member = { email: `dana-${tag}@example.com`, password: `a passphrase ${tag}`, name: `Dana ${tag}` };
  const invited = await project.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: [member.email] },
  });
  if (invited.status !== 201) throw new Error(`invitation failed: ${JSON.stringify(invited.body)}`);
  const mail = await mailbox.waitFor(member.email);
  const context = await browser.newContext();
  const access = new AccessPage(await context.newPage(), dashboardOrigin);
  await access.openLink(`${dashboardOrigin}/#invite=${linkToken(mail, 'invite')}`);
  await access.signUpWithPassword(member.name, member.password);
  // Hashing a new password (scrypt, 64 MiB) takes seconds on a loaded machine: a wait, widened.
  await expect(access.heading).toHaveText('Signed in', { timeout: 30_000 });
  await access.expectSignedIn(member.name);
  await context.close();
  return member;
}

export const test = base.extend<{ member: Member; dashboard: DashboardPage }>({
  member: async ({ browser, project, mailbox, marquee }, use) =>
    use(await joinByInvitation(browser, project, mailbox, marquee.dashboardOrigin)),
  dashboard: async ({ page, marquee }, use) => use(new DashboardPage(page, marquee.dashboardOrigin)),
});

/**
 * `test` with one member for all the tests of the spec file that calls this (once, at its top):
 * joining hashes a new password (seconds on a loaded machine), and the tests of such a file only
 * sign in as that member, each in a browser context of its own. A file whose tests change the
 * member (its sessions, its password) keeps `test`, one member per test. The member lives as long
 * as the worker's project (a failed test gets a new worker, and so a new project and member); it
 * is never shared between files, so no file comes near the sign-ins allowed per address.
 */
export function withOneMemberPerFile(): typeof test {
  let member: Member | undefined;
  return test.extend<{ member: Member }>({
    member: async ({ browser, project, mailbox, marquee }, use) =>
      use((member ??= await joinByInvitation(browser, project, mailbox, marquee.dashboardOrigin))),
  });
}

export { expect };
