// Where a person is signed in: the access page lists their sessions, signs out one of them, or every
// one but this browser's; a browser signed out that way is asked to sign in again.
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { PHONE_TOUCH, smallTouchTargets } from '../pages/dashboard-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

const PASSWORD = 'a long enough passphrase';

test('a person signs out their other sessions from the access page', async ({ browser, marquee, mailbox }) => {
  const agent = new ControlApi(marquee.origin);
  await agent.enroll();
  await agent.request('POST', '/api/v1/invitations', { json: { kind: 'project_member', emails: ['sol@example.com'] } });
  const laptop = new AccessPage(await browser.newPage(), marquee.dashboardOrigin);
  await laptop.openLink(
    `${marquee.dashboardOrigin}/#invite=${linkToken(await mailbox.waitFor('sol@example.com'), 'invite')}`,
  );
  await laptop.signUpWithPassword('Sol', PASSWORD);
  await laptop.expectSignedIn('Sol');

  const phone = new AccessPage(await (await browser.newContext(PHONE_TOUCH)).newPage(), marquee.dashboardOrigin);
  const kiosk = new AccessPage(await browser.newPage(), marquee.dashboardOrigin);
  for (const other of [phone, kiosk]) {
    await other.open();
    await other.signInWithPassword('sol@example.com', PASSWORD);
    await other.expectSignedIn('Sol');
  }
  // On the phone (a touch screen) each control, "Sign it out" and "Open the dashboard" among them, is
  // a fingertip's target.
  await expect(phone.page.getByRole('button', { name: 'Sign it out' }).first()).toBeVisible();
  expect(await smallTouchTargets(phone.page, '#view-home p > a')).toEqual([]);

  // From the dashboard, the person's name leads to this page.
  await kiosk.open('/screens');
  await kiosk.page.getByRole('link', { name: 'Sol' }).click();
  await kiosk.expectSignedIn('Sol');
  const sessions = kiosk.page.locator('#sessions li');
  await expect(sessions).toHaveCount(3);
  await expect(sessions.first()).toContainText('This browser: signed in with a password');
  await expect(sessions.nth(2)).toContainText('Signed in on joining a project');
  // The newest other session is the phone's: sign it out alone.
  await sessions.nth(1).getByRole('button', { name: 'Sign it out' }).click();
  await expect(kiosk.status).toHaveText('That session is signed out.');
  await expect(sessions).toHaveCount(2);
  await phone.page.reload();
  await expect(phone.heading).toHaveText('Sign in');
  await laptop.page.reload();
  await laptop.expectSignedIn('Sol');

  await kiosk.page.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await expect(kiosk.status).toHaveText('Signed out everywhere else (one session).');
  await expect(sessions).toHaveCount(1);
  await expect(kiosk.page.getByRole('button', { name: 'Sign out everywhere else' })).toBeHidden();
  await laptop.page.reload();
  await expect(laptop.heading).toHaveText('Sign in');
  await kiosk.page.reload();
  await kiosk.expectSignedIn('Sol');
});
