// The dashboard on a phone (390×844, a touch screen), as a person meets it after scanning a
// player's QR code: no page scrolls sideways, even with the longest names the API allows, and every
// control is big enough for a fingertip.
import type { Browser, BrowserContext } from '@playwright/test';
import { DashboardPage, PHONE_TOUCH } from '../pages/dashboard-page';
import { imagePage } from '../support/playlist-documents';
import { expect, withOneMemberPerFile } from './dashboard-fixtures';

// Its tests only sign in as the member: one for the file (withOneMemberPerFile).
const test = withOneMemberPerFile();

const LONGEST = 120;
const longName = (start: string) => `${start} ${'with a long name that goes on '.repeat(5)}`.slice(0, LONGEST);

/** A touch phone's own browser context, signed in as `member` on the dashboard page at `path`. */
async function signedInOnPhone(
  browser: Browser,
  dashboardOrigin: string,
  member: { email: string; password: string },
  path: string,
): Promise<{ phone: BrowserContext; dashboard: DashboardPage }> {
  const phone = await browser.newContext(PHONE_TOUCH);
  const dashboard = new DashboardPage(await phone.newPage(), dashboardOrigin);
  await dashboard.open(path);
  await dashboard.signIn(member.email, member.password);
  return { phone, dashboard };
}

test('a 120-character playlist or screen name does not push a phone page sideways', async ({
  browser,
  marquee,
  member,
  project,
  library,
  pairedScreen,
}) => {
  await project.createPlaylist({
    name: longName('Fire drill announcement'),
    pages: [imagePage('drill', library.media.welcome, 8000)],
  });
  await project.patchScreen(pairedScreen.id, { name: longName('Lobby screen') });
  const { phone, dashboard } = await signedInOnPhone(
    browser,
    marquee.dashboardOrigin,
    member,
    `/screens/${pairedScreen.id}`,
  );
  await expect(dashboard.heading).toHaveText(longName('Lobby screen'));
  await dashboard.expectNoSidewaysScroll();

  // A schedule entry's playlist select lists the long name.
  await dashboard.schedule.getByRole('button', { name: 'Add an entry' }).click();
  await expect(dashboard.scheduleEntry(1).getByLabel('Playlist')).toBeVisible();
  await dashboard.screenshot('phone-schedule-entry-long-name.png');
  await dashboard.expectNoSidewaysScroll();

  // So does the fleet action form's.
  await dashboard.open('/screens');
  await dashboard.page.getByRole('button', { name: 'Act on many screens…' }).click();
  await expect(dashboard.page.getByRole('button', { name: 'Run on the screens' })).toBeVisible();
  await dashboard.expectNoSidewaysScroll();

  // Proof of play's screen select lists the long screen name.
  await dashboard.open('/proof-of-play');
  await expect(dashboard.page.getByRole('combobox', { name: /^Screen/ })).toBeVisible();
  await dashboard.expectNoSidewaysScroll();
  await phone.close();
});

test('on a touch screen every control of the screens, screen, playlists, playlist and proof pages is 40 px or more', async ({
  browser,
  marquee,
  member,
  project,
  library,
  pairedScreen,
}) => {
  const playlist = await project.createPlaylist({
    name: 'Lobby loop',
    pages: [imagePage('lobby', library.media.welcome, 8000)],
  });
  await project.patchScreen(pairedScreen.id, { playlist_id: playlist.id });
  const { phone, dashboard } = await signedInOnPhone(browser, marquee.dashboardOrigin, member, '/screens');
  await dashboard.expectSignedIn(member.name);
  await expect(dashboard.page.getByTestId('screen-card').first()).toBeVisible();
  expect(await dashboard.smallTouchTargets()).toEqual([]);

  await dashboard.open(`/screens/${pairedScreen.id}`);
  await expect(dashboard.heading).toHaveText('Lobby');
  await dashboard.schedule.getByRole('button', { name: 'Add an entry' }).click();
  await expect(dashboard.scheduleEntry(1).getByLabel('Mon')).toBeVisible();
  expect(await dashboard.smallTouchTargets()).toEqual([]);
  await dashboard.screenshot('phone-touch-screen-page.png');

  await dashboard.open('/playlists');
  await expect(dashboard.page.getByRole('link', { name: 'Lobby loop' })).toBeVisible();
  expect(await dashboard.smallTouchTargets()).toEqual([]);

  await dashboard.open(`/playlists/${playlist.id}`);
  await expect(dashboard.heading).toHaveText('Lobby loop');
  expect(await dashboard.smallTouchTargets()).toEqual([]);

  await dashboard.open('/proof-of-play');
  await expect(dashboard.page.getByRole('link', { name: 'Download CSV' })).toBeVisible();
  expect(await dashboard.smallTouchTargets()).toEqual([]);
  await phone.close();
});

test('on a phone an upload’s long file name wraps instead of being cut off', async ({ browser, marquee, member }) => {
  const { phone, dashboard } = await signedInOnPhone(browser, marquee.dashboardOrigin, member, '/media');
  await expect(dashboard.heading).toHaveText('Media');
  // Nothing to drag files from on a phone: the upload area offers its button alone.
  const dropZone = dashboard.page.getByTestId('drop-zone');
  await expect(dropZone.getByText(/^Drop images/)).toHaveCount(1); // there, and
  await expect(dropZone.getByText(/^Drop images/)).toBeHidden();
  await expect(dropZone.getByText(/^Images \(PNG/)).toBeVisible();
  // Refused before upload (not media): its row stays, saying why, under its name.
  const name = `${longName('Quarterly figures')}.txt`;
  await dashboard.upload([{ name, mimeType: 'text/plain', buffer: Buffer.from('not media') }]);
  const row = dashboard.uploadRow(name);
  await expect(row).toContainText('Failed');
  await dashboard.screenshot('phone-upload-long-name.png');
  expect(await row.locator('.upload-name').evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
  await dashboard.expectNoSidewaysScroll();
  await phone.close();
});

test('on a phone, where a table’s header row is hidden, each cell names its column', async ({
  browser,
  marquee,
  member,
}) => {
  const { phone, dashboard } = await signedInOnPhone(browser, marquee.dashboardOrigin, member, '/members');
  await expect(dashboard.heading).toHaveText('Members');
  const row = dashboard.page.getByRole('row').filter({ hasText: member.email });
  await expect(row).toBeVisible();
  await expect(dashboard.page.getByRole('columnheader', { name: 'Joined' })).toBeHidden();
  // What is drawn before each cell's value (a bare "password" or "2 min ago" said nothing).
  const named = await row
    .locator('td')
    .evaluateAll((cells) => cells.map((cell) => getComputedStyle(cell, '::before').content));
  expect(named).toEqual(['"Email: "', '"Signs in with: "', '"Joined: "']);
  await phone.close();
});
