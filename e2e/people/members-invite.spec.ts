// The dashboard's Members page invites by email; a member's own address is not invited again (as
// the CLI does), since accepting it would be refused: the person is in the project already.
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

test('a member invites a newcomer from the dashboard, and not a member again', async ({ page, marquee, mailbox }) => {
  const agent = new ControlApi(marquee.origin);
  await agent.enroll();
  await agent.request('POST', '/api/v1/invitations', { json: { kind: 'project_member', emails: ['ivo@example.com'] } });
  const access = new AccessPage(page, marquee.dashboardOrigin);
  await access.openLink(
    `${marquee.dashboardOrigin}/#invite=${linkToken(await mailbox.waitFor('ivo@example.com'), 'invite')}`,
  );
  await access.signUpWithPassword('Ivo', 'a long enough passphrase');
  await access.expectSignedIn('Ivo');

  await access.open('/members');
  await expect(page.getByRole('cell', { name: 'ivo@example.com' })).toBeVisible();
  const address = page.getByLabel('Their email address');
  await address.fill('IVO@example.com');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await expect(page.getByText('Ivo (ivo@example.com) is a member already: not invited again.')).toBeVisible();
  const outstanding = await agent.request('GET', '/api/v1/invitations?status=outstanding');
  expect(outstanding.body.items).toEqual([]);

  await address.fill('lena@example.com');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await expect(page.getByText('Invitation mailed to lena@example.com.')).toBeVisible();
  await mailbox.waitFor('lena@example.com');
});
