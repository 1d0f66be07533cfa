// Assigning from the dashboard: the agent wrote a playlist; a member picks it for a screen on the
// screen's page, and the player shows its page.
import { DashboardPage } from '../pages/dashboard-page';
import { imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

test('assigning a playlist on a screen’s page puts it on the player', async ({
  browser,
  marquee,
  member,
  project,
  library,
  player,
  pairedScreen,
}) => {
  await project.createPlaylist({
    name: 'Dashboard welcome',
    pages: [imagePage('dash-welcome', library.media.welcome, 60_000)],
  });

  const tab = await browser.newContext();
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  await dashboard.open(`/screens/${pairedScreen.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Lobby');
  await dashboard.assignPlaylist('Dashboard welcome');
  await expect(dashboard.page.getByRole('link', { name: 'Dashboard welcome' })).toBeVisible();

  await player.waitForLivePage('dash-welcome', 20_000);
  await tab.close();
});
