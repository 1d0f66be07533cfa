// Pairing from the dashboard: a real player tab shows its code, a member types it on the Screens
// page, and the screen's card goes online as the player connects.
import { PlayerPage } from '../pages/player-page';
import { expect, withOneMemberPerFile } from './dashboard-fixtures';

// Its tests only sign in as the member: one for the file (withOneMemberPerFile).
const test = withOneMemberPerFile();

test('pairing a player tab by its code shows the screen online', async ({ dashboard, member, browser, marquee }) => {
  const screenTab = await browser.newContext({ baseURL: marquee.origin });
  const player = new PlayerPage(await screenTab.newPage());
  await player.open('/');
  const code = await player.code();

  await dashboard.open('/screens');
  await dashboard.signIn(member.email, member.password);
  await dashboard.pair(`${code.slice(0, 3)}-${code.slice(3)}`.toLowerCase(), 'Front desk');

  await expect(player.pairingScreen).toBeHidden({ timeout: 15_000 });
  const card = dashboard.screenCard('Front desk');
  await expect(card.getByTestId('screen-status')).toHaveText('Online', { timeout: 20_000 });
  await dashboard.screenshot('screens-paired-1440.png');
  await screenTab.close();
});

test("a phone that scans the player's QR code opens the Screens page with the code filled in", async ({
  dashboard,
  member,
  browser,
  marquee,
  page,
}) => {
  const screenTab = await browser.newContext({ baseURL: marquee.origin });
  const player = new PlayerPage(await screenTab.newPage());
  await player.open('/');
  const code = await player.code();
  // What the QR code carries: the shell's pairing link with this code.
  const hint = await player.page.locator('meta[name="marquee:pairing-hint-url"]').getAttribute('content');
  expect(hint).toBe(`${marquee.dashboardOrigin}/screens?pair={code}`);
  await expect(player.page.locator('.pairing-qr')).toContainText('Scan to pair it from your phone');

  await page.goto(hint!.replace('{code}', code));
  await dashboard.signIn(member.email, member.password);
  await expect(page.getByLabel('Pairing code')).toHaveValue(`${code.slice(0, 3)}-${code.slice(3)}`);
  await expect(page.getByLabel(/^Name/)).toBeFocused();
  expect(new URL(page.url()).search).toBe('');
  await page.getByLabel(/^Name/).fill('Scanned');
  await page.getByRole('button', { name: 'Pair screen' }).click();
  await expect(player.pairingScreen).toBeHidden({ timeout: 15_000 });
  await screenTab.close();
});
