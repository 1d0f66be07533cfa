// A revoked session: a member revokes the dashboard session of another browser of theirs; that
// browser's live stream ends and the dashboard asks it to sign in again.
import { DashboardPage } from '../pages/dashboard-page';
import { expect, test } from './dashboard-fixtures';

test('a session revoked elsewhere sends the dashboard back to sign-in', async ({ dashboard, member, browser }) => {
  await dashboard.open('/events');
  await dashboard.signIn(member.email, member.password);
  await dashboard.expectSignedIn(member.name);
  await expect(dashboard.page.getByTestId('live-mark')).toHaveText('Live');

  // A second browser of the same person revokes the first one's session from its session list.
  const other = await browser.newContext();
  const second = new DashboardPage(await other.newPage(), dashboard.origin);
  await second.open('/');
  await second.signIn(member.email, member.password);
  await second.expectSignedIn(member.name);
  const revoked = await second.page.evaluate(async () => {
    const session = await (await fetch('/dashboard/v1/session')).json();
    const sessions = await (await fetch('/dashboard/v1/sessions')).json();
    const target = sessions.items.find((s: { current: boolean }) => !s.current);
    const res = await fetch(`/dashboard/v1/sessions/${target.id}/revoke`, {
      method: 'POST',
      headers: { 'Marquee-CSRF-Token': session.csrf_token },
    });
    return res.status;
  });
  expect(revoked).toBe(204);

  await expect(dashboard.heading).toHaveText('Sign in', { timeout: 15_000 });
  await expect(dashboard.page.getByText('Your session ended. Sign in again.')).toBeVisible();
  await other.close();
});
