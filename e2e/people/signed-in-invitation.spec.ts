// Links opened by someone already signed in: a member accepts an agent's dashboard link into a second
// project; the used link then says so in words (no page stuck on "Loading…"); a colleague who opens
// a newcomer's invitation sees whose login would join, and signs out to let the newcomer join.
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

test('a signed-in person accepts a link, reopens it, and signs out for a newcomer', async ({
  page,
  marquee,
  mailbox,
}) => {
  const lobby = new ControlApi(marquee.origin);
  await lobby.enroll();
  await lobby.request('POST', '/api/v1/invitations', { json: { kind: 'project_member', emails: ['uma@example.com'] } });
  const access = new AccessPage(page, marquee.dashboardOrigin);
  await access.openLink(
    `${marquee.dashboardOrigin}/#invite=${linkToken(await mailbox.waitFor('uma@example.com'), 'invite')}`,
  );
  await access.signUpWithPassword('Uma', 'a long enough passphrase');
  await access.expectSignedIn('Uma');

  // An agent of another project hands Uma a dashboard link; she is signed in and accepts it.
  const airport = new ControlApi(marquee.origin);
  await airport.enroll();
  const minted = await airport.request('POST', '/api/v1/account/dashboard-links');
  expect(minted.status).toBe(201);
  await access.openLink(minted.body.url);
  await expect(page.locator('#accept-who')).toHaveText(
    'You are signed in as Uma (uma@example.com): joining adds this login to the project.',
  );
  await page.getByRole('button', { name: 'Join the project' }).click();
  await expect(access.status).toContainText('You joined');
  await access.expectSignedIn('Uma');

  // The link was single use: opened again, it says so and leaves her on her own page.
  await access.openLink(minted.body.url);
  await expect(access.status).toHaveText(
    'This invitation was accepted already. If that was you, sign in; otherwise ask whoever invited you for a new one.',
  );
  await access.expectSignedIn('Uma');

  // A newcomer's invitation opened in Uma's browser: Uma is a member already and cannot spend it.
  await lobby.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: ['noor@example.com'] },
  });
  await access.openLink(
    `${marquee.dashboardOrigin}/#invite=${linkToken(await mailbox.waitFor('noor@example.com'), 'invite')}`,
  );
  await page.getByRole('button', { name: 'Join the project' }).click();
  await expect(access.status).toContainText('you are a member of this project already');
  await page.getByRole('button', { name: 'Not you? Sign out' }).click();
  await access.signUpWithPassword('Noor', 'another long passphrase');
  await access.expectSignedIn('Noor');
  await expect(page.getByRole('list', { name: 'Members' })).toContainText('Uma (uma@example.com)');
});
