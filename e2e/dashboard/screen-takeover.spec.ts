// A takeover from a screen's page: a member puts another playlist on the glass until an end time,
// the player shows it at once, and ending it early brings the screen's own playlist back. The page
// names what is on glass and, apart, what is assigned; an archived screen offers no live controls.
import { DashboardPage } from '../pages/dashboard-page';
import { ControlApi } from '../support/control-api';
import { imagePage } from '../support/playlist-documents';
import { expect, joinByInvitation, withOneMemberPerFile } from './dashboard-fixtures';

// Its tests only sign in as the member: one for the file (withOneMemberPerFile).
const test = withOneMemberPerFile();

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
  await expect(dashboard.page.getByTestId('screen-last-seen')).toHaveText('now (online)');
  await expect(dashboard.page.getByLabel(/Ends at \(your time, [A-Za-z_/]+\)/)).toBeVisible();

  await dashboard.startTakeover('Fire drill', 'Drill at noon');
  await expect(dashboard.page.getByTestId('takeover-now')).toContainText('Fire drill');
  await player.waitForLivePage('drill', 20_000);
  await dashboard.page.reload();
  await expect(dashboard.page.getByTestId('screen-playing')).toHaveText('Fire drill');
  await expect(dashboard.page.getByTestId('screen-assigned')).toContainText('Lobby loop');

  await dashboard.endTakeover();
  await expect(dashboard.page.getByTestId('takeover-now')).toBeHidden();
  await player.waitForLivePage('lobby', 20_000);

  const archived = await project.request('POST', `/api/v1/screens/${pairedScreen.id}/archive`);
  expect(archived.status, JSON.stringify(archived.body)).toBe(200);
  await dashboard.page.reload();
  await expect(dashboard.page.getByTestId('screen-status')).toHaveText('Archived');
  await expect(dashboard.page.getByTestId('archived-note')).toBeVisible();
  for (const panel of ['Takeover', 'Toast', 'Display'])
    await expect(dashboard.page.getByRole('heading', { name: panel, exact: true })).toBeHidden();
  await expect(dashboard.page.getByRole('button', { name: 'Unarchive' })).toBeVisible();
  await tab.close();
});

test('in a new project with no playlist, the takeover panel says where playlists come from', async ({
  browser,
  marquee,
  mailbox,
  player,
}) => {
  // A project of its own: the worker's project has the other specs' playlists.
  const fresh = new ControlApi(marquee.origin);
  await fresh.enroll();
  await player.open('/');
  const claim = await fresh.pair(await player.code(), 'Lobby');
  const member = await joinByInvitation(browser, fresh, mailbox, marquee.dashboardOrigin);
  const tab = await browser.newContext();
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  await dashboard.open(`/screens/${claim.screen.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Lobby');
  await expect(dashboard.page.getByTestId('takeover-no-playlist')).toContainText('npx marquee playlist create');
  await expect(dashboard.page.getByRole('button', { name: 'Start takeover' })).toBeDisabled();
  await tab.close();
});

test('a screen that is not online says why its screenshot cannot be taken', async ({
  browser,
  marquee,
  member,
  project,
}) => {
  // Provisioned: its browser never opened the link, so it has never been online.
  const provisioned = await project.request('POST', '/api/v1/screens/provision', { json: { label: 'Atrium' } });
  expect(provisioned.status, JSON.stringify(provisioned.body)).toBe(201);
  const tab = await browser.newContext();
  const dashboard = new DashboardPage(await tab.newPage(), marquee.dashboardOrigin);
  await dashboard.open(`/screens/${provisioned.body.screen.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Atrium');
  await expect(dashboard.page.getByRole('button', { name: 'Take a screenshot' })).toBeDisabled();
  await expect(dashboard.page.getByTestId('screenshot-offline')).toHaveText(
    'The screen is offline: take one when it is back online.',
  );
  await tab.close();
});
