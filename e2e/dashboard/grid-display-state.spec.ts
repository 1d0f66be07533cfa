// The screens grid follows the event stream: a display switched off by an agent shows on the
// screen's card as the event arrives, with no request for that screen (a grid of 500 cards must not
// read 500 screens when a fleet action switches them all).
import { PlayerPage } from '../pages/player-page';
import { expect, test } from './dashboard-fixtures';

test('a display switched off elsewhere shows on the screen’s card without reading the screen', async ({
  dashboard,
  member,
  browser,
  marquee,
  project,
}) => {
  const screenTab = await browser.newContext({ baseURL: marquee.origin });
  const player = new PlayerPage(await screenTab.newPage());
  await player.open('/');
  const claim = await project.pair(await player.code(), 'Atrium');
  await expect(player.pairingScreen).toBeHidden({ timeout: 15_000 });

  await dashboard.open('/screens');
  await dashboard.signIn(member.email, member.password);
  const card = dashboard.screenCard('Atrium');
  await expect(card).toBeVisible();
  const reads: string[] = [];
  dashboard.page.on('request', (request) => {
    const path = new URL(request.url()).pathname;
    if (path === `/dashboard/v1/screens/${claim.screen.id}`) reads.push(path);
  });
  // The pairing's own events (the player's activation, its presence) may still reach the grid and
  // refetch the screen, as any change should: let them settle before the display is switched off.
  await expect
    .poll(
      async () => {
        const before = reads.length;
        await dashboard.page.waitForTimeout(1500);
        return reads.length === before;
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  reads.length = 0;

  const off = await project.request('POST', `/api/v1/screens/${claim.screen.id}/display`, { json: { power: 'off' } });
  expect(off.status, JSON.stringify(off.body)).toBe(200);
  await expect(card.getByTestId('screen-health')).toContainText('display off', { timeout: 10_000 });
  expect(reads).toEqual([]);
  await screenTab.close();
});
