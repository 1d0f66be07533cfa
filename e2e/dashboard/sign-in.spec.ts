// Signing in: a member of the project opens the dashboard, signs in with a password and lands on
// the project's screens. A mistyped address is the app's own "No such page", answered 404.
import { expect, withOneMemberPerFile } from './dashboard-fixtures';

// Its tests only sign in as the member: one for the file (withOneMemberPerFile).
const test = withOneMemberPerFile();

test('a member signs in with a password and sees the project’s screens', async ({ dashboard, member, page }) => {
  await dashboard.open('/');
  await dashboard.signIn(member.email, 'not the passphrase');
  await expect(page.getByRole('status').first()).toContainText(/not right|unknown|password/i);
  await dashboard.signIn(member.email, member.password);
  await dashboard.expectSignedIn(member.name);
  await expect(dashboard.heading).toHaveText('Screens');
  expect(new URL(page.url()).pathname).toBe('/screens');
});

test('a mistyped address shows the app’s not-found page with status 404', async ({ dashboard, member, page }) => {
  await dashboard.open('/');
  await dashboard.signIn(member.email, member.password);
  await dashboard.expectSignedIn(member.name);
  const response = await page.goto(new URL('/no-such-page', dashboard.origin).href);
  expect(response?.status()).toBe(404);
  await expect(dashboard.heading).toHaveText('No such page');
  await page.getByRole('link', { name: 'the screens' }).click();
  await expect(dashboard.heading).toHaveText('Screens');
  // The shell names its icon (a browser then asks for no /favicon.ico), and the icon is served.
  const icon = await page.locator('link[rel=icon]').getAttribute('href');
  expect(icon).toMatch(/^\/assets\/favicon-/);
  expect(await page.evaluate(async (href) => (await fetch(href)).status, icon!)).toBe(200);
});
