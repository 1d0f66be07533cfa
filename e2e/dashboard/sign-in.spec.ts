// Signing in: a member of the project opens the dashboard, signs in with a password and lands on
// the project's screens.
import { expect, test } from './dashboard-fixtures';

test('a member signs in with a password and sees the project’s screens', async ({ dashboard, member, page }) => {
  await dashboard.open('/');
  await dashboard.signIn(member.email, 'not the passphrase');
  await expect(page.getByRole('status').first()).toContainText(/not right|unknown|password/i);
  await dashboard.signIn(member.email, member.password);
  await dashboard.expectSignedIn(member.name);
  await expect(dashboard.heading).toHaveText('Screens');
  expect(new URL(page.url()).pathname).toBe('/screens');
});
