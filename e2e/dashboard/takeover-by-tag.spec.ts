// A takeover by tag from the screens grid: every active screen with the tag plays the playlist until
// the end time, and the result list names each screen with its outcome.
import { DashboardPage, DESKTOP, PHONE } from '../pages/dashboard-page';
import { imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

test('a takeover by tag from the grid reaches the tagged player and lists each screen’s result', async ({
  browser,
  marquee,
  member,
  project,
  library,
  player,
  pairedScreen,
}) => {
  // Playlists swap at a page boundary: pages of 2 s.
  const lobby = await project.createPlaylist({
    name: 'Lobby loop',
    pages: [imagePage('lobby', library.media.welcome, 2000)],
  });
  await project.createPlaylist({ name: 'Evacuation', pages: [imagePage('evacuate', library.media.quiet, 2000)] });
  await project.patchScreen(pairedScreen.id, { playlist_id: lobby.id, tags: ['foyer'] });
  await player.waitForLivePage('lobby', 30_000);

  const tab = await browser.newContext({ viewport: DESKTOP });
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  await dashboard.open('/screens');
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Screens');

  await dashboard.takeoverByTag('foyer', 'Evacuation', 'Drill');
  await expect(dashboard.fleetPanel.getByRole('heading', { name: '1 done, 0 failed' })).toBeVisible();
  await expect(dashboard.fleetResults).toHaveText(['Lobby: done']);
  await dashboard.expectAccessible();
  await dashboard.screenshot('fleet-action-1440.png');
  await dashboard.page.setViewportSize(PHONE);
  await dashboard.screenshot('fleet-action-390.png');
  await player.waitForLivePage('evacuate', 20_000);
  await tab.close();
});
