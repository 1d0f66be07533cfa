// A takeover from a screen's page: a member puts another playlist on the glass until an end time,
// the player shows it at once, and ending it early brings the screen's own playlist back.
import { DashboardPage } from '../pages/dashboard-page';
import { imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

test('a takeover started on a screen’s page plays on the player until it is ended', async ({
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
  await project.createPlaylist({ name: 'Fire drill', pages: [imagePage('drill', library.media.menu, 2000)] });
  await project.patchScreen(pairedScreen.id, { playlist_id: lobby.id });
  await player.waitForLivePage('lobby', 30_000);

  const tab = await browser.newContext();
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  await dashboard.open(`/screens/${pairedScreen.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Lobby');

  await dashboard.startTakeover('Fire drill', 'Drill at noon');
  await expect(dashboard.page.getByTestId('takeover-now')).toContainText('Fire drill');
  await player.waitForLivePage('drill', 20_000);

  await dashboard.endTakeover();
  await expect(dashboard.page.getByTestId('takeover-now')).toBeHidden();
  await player.waitForLivePage('lobby', 20_000);
  await tab.close();
});
