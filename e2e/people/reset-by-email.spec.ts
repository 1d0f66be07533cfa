// Reset by email: a member who forgot their password asks for a link on the sign-in page, opens the
// mailed link, makes a new password, and is signed in; the old password no longer works.
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

test('a member resets their sign-in by email', async ({ browser, marquee, mailbox }) => {
  const agent = new ControlApi(marquee.origin);
  await agent.enroll();
  await agent.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: ['rosa@example.com'] },
  });
  const invitation = await mailbox.waitFor('rosa@example.com', (m) => m.text.includes('#invite='));
  const first = new AccessPage(await browser.newPage(), marquee.dashboardOrigin);
  await first.openLink(`${marquee.dashboardOrigin}/#invite=${linkToken(invitation, 'invite')}`);
  await first.signUpWithPassword('Rosa', 'the first passphrase');
  await first.expectSignedIn('Rosa');

  const other = new AccessPage(await browser.newPage(), marquee.dashboardOrigin);
  await other.open();
  await other.askForSignInLink('rosa@example.com');
  const reset = await mailbox.waitFor('rosa@example.com', (m) => m.text.includes('#reset='));
  await other.openLink(`${marquee.dashboardOrigin}/#reset=${linkToken(reset, 'reset')}`);
  await other.setNewPassword('the second passphrase');
  await other.expectSignedIn('Rosa');
  await expect(other.status).toContainText('every other session is signed out');
  // The link is spent: opened again, it says so in words over Rosa's page.
  await other.openLink(`${marquee.dashboardOrigin}/#reset=${linkToken(reset, 'reset')}`);
  await expect(other.status).toHaveText(
    'This sign-in link does not work: it was used already, or a newer one replaced it. If you still need one, ask for a new one under “Forgot how you sign in” on the sign-in page.',
  );
  await other.expectSignedIn('Rosa');

  // The first browser's session was revoked by the reset.
  await first.page.reload();
  await expect(first.heading).toHaveText('Sign in');
  await first.signInWithPassword('rosa@example.com', 'the first passphrase');
  await expect(first.status).toContainText('not right');
  await first.signInWithPassword('rosa@example.com', 'the second passphrase');
  await first.expectSignedIn('Rosa');
});
