// A schedule edit: a member adds an entry on the screen's week calendar, is told on the field itself
// what is wrong with it, fixes it, saves, and the player plays the entry's playlist while it holds.
import { DashboardPage, DESKTOP } from '../pages/dashboard-page';
import { imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

test('a schedule entry saved on the week calendar plays on the player; a bad window is named on its field', async ({
  browser,
  marquee,
  member,
  project,
  library,
  player,
  pairedScreen,
}) => {
  // Playlists swap at a page boundary: pages of 2 s. Schedules run in the screen's time zone.
  const lobby = await project.createPlaylist({
    name: 'Lobby loop',
    pages: [imagePage('lobby', library.media.welcome, 2000)],
  });
  await project.createPlaylist({ name: 'Menu', pages: [imagePage('menu', library.media.menu, 2000)] });
  await project.patchScreen(pairedScreen.id, { playlist_id: lobby.id, timezone: 'UTC' });
  await player.waitForLivePage('lobby', 30_000);

  const tab = await browser.newContext({ viewport: DESKTOP });
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  await dashboard.open(`/screens/${pairedScreen.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Lobby');

  await dashboard.schedule.getByRole('button', { name: 'Add an entry' }).click();
  const entry = dashboard.scheduleEntry(1);
  await entry.getByLabel('Playlist').selectOption({ label: 'Menu' });
  // A start without an end: the contract refuses it, and the form says so on that window.
  await entry.getByLabel('To', { exact: true }).fill('');
  await dashboard.saveSchedule();
  const windowProblem = entry.locator('#schedule-entries-0-rule-windows-0-problem');
  await expect(windowProblem).toHaveText(/give both start and end/);

  // All day, every day: the entry holds now.
  await entry.getByLabel('From', { exact: true }).fill('');
  for (const day of ['Sat', 'Sun']) await entry.getByLabel(day).check();
  await dashboard.saveSchedule();
  await expect(dashboard.said('Schedule saved.')).toBeVisible();
  await expect(windowProblem).toBeEmpty();
  await expect(dashboard.page.getByTestId('week-calendar').locator('.week-block')).toHaveCount(7);
  await dashboard.expectAccessible();
  await dashboard.screenshot('schedule-1440.png');
  await player.waitForLivePage('menu', 20_000);

  const saved = await project.request('GET', `/api/v1/screens/${pairedScreen.id}/playlist-schedule`);
  expect(saved.body.entries).toHaveLength(1);
  expect(saved.body.effective_playlist.source).toBe('schedule');
  await tab.close();
});
