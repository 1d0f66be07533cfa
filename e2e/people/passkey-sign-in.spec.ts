// Passkeys with Chromium's virtual authenticator: a person joins with a passkey, signs out, and
// signs in again with it, naming nobody (a discoverable credential on the dashboard host).
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

test('a person joins with a passkey and signs in with it again', async ({ page, marquee, mailbox }) => {
  const agent = new ControlApi(marquee.origin);
  await agent.enroll();
  await agent.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: ['pavel@example.com'] },
  });
  const mail = await mailbox.waitFor('pavel@example.com');

  const access = new AccessPage(page, marquee.dashboardOrigin);
  await access.open();
  const { cdp, authenticatorId } = await access.addVirtualAuthenticator();
  // No passkey on this device yet: the browser's refusal is said in words, not in its own wording.
  await access.signInWithPasskey();
  await expect(access.status).toHaveText(
    'No passkey was used: the request was cancelled, timed out, or this device has none for Marquee. Try again, or use a password.',
  );
  await access.openLink(`${marquee.dashboardOrigin}/#invite=${linkToken(mail, 'invite')}`);
  await access.signUpWithPasskey('Pavel');
  await access.expectSignedIn('Pavel');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  expect(credentials).toHaveLength(1);
  expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'dashboard.localhost' });

  await access.signOut();
  await access.signInWithPasskey();
  await access.expectSignedIn('Pavel');
  const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  expect(after.credentials[0]!.signCount).toBeGreaterThan(credentials[0]!.signCount);
});
