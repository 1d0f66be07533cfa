// Pairing from the dashboard: a real player tab shows its code, a member types it on the Screens
// page, and the screen's card goes online as the player connects.
import { PlayerPage } from '../pages/player-page';
import { expect, test } from './dashboard-fixtures';

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
