// Sign-up by invitation: an agent invites an address, the mail arrives over SMTP, the person opens
// its link on the dashboard origin, makes a password and is a member, signed in to the project.
import path from 'node:path';
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { ARTIFACTS } from '../pages/player-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

test('a person joins a project through an emailed invitation and a password', async ({ page, marquee, mailbox }) => {
  const agent = new ControlApi(marquee.origin);
  await agent.enroll();
  const invited = await agent.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: ['ines@example.com'] },
  });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);

  const mail = await mailbox.waitFor('ines@example.com');
  const link = `${marquee.dashboardOrigin}/#invite=${linkToken(mail, 'invite')}`;
  expect(mail.text).toContain(link);

  const access = new AccessPage(page, marquee.dashboardOrigin);
  await access.openLink(link);
  await expect(page.locator('#invitation-summary')).toContainText('as a member (ines@example.com)');
  await access.signUpWithPassword('Inès', 'a long enough passphrase');
  await access.expectSignedIn('Inès');
  await expect(page.getByRole('list', { name: 'Members' })).toContainText('Inès (ines@example.com)');
  await page.screenshot({ path: path.join(ARTIFACTS, 'people-signed-up.png') });

  const cookies = await page.context().cookies(marquee.dashboardOrigin);
  const session = cookies.find((c) => c.name === '__Host-marquee-dashboard')!;
  expect(session).toMatchObject({
    domain: `dashboard.localhost`,
    path: '/',
    secure: true,
    httpOnly: true,
    sameSite: 'Strict',
  });
  // Host-only: the control and player origin never receives it.
  expect((await page.context().cookies(marquee.origin)).map((c) => c.name)).not.toContain('__Host-marquee-dashboard');

  const self = await agent.request('GET', '/api/v1/agents/self');
  expect(self.body.connection_ready).toBe(true);
});
