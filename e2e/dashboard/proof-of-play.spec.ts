// Proof of play on the dashboard: a real player plays a two-image loop and uploads what went on
// glass; the dashboard's charts show those plays for the screen and each image, the total is what
// GET /api/v1/playback answers, and the CSV download is the API's export of the same selection.
import fs from 'node:fs';
import { DashboardAppsPage } from '../pages/dashboard-apps-page';
import { DESKTOP, PHONE } from '../pages/dashboard-page';
import { titledPng } from '../support/media-fixtures';
import { imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

async function playsSoFar(project: { request: (m: string, p: string) => Promise<{ body: any }> }): Promise<number> {
  const res = await project.request('GET', '/api/v1/playback?limit=200');
  return (res.body.items as { play_count: number }[]).reduce((sum, r) => sum + r.play_count, 0);
}

test('plays a player recorded are charted by day, screen and media, and download as CSV', async ({
  dashboard,
  member,
  project,
  pairedScreen,
  player,
  page,
}) => {
  test.setTimeout(180_000);
  const [sunrise, sunset] = await Promise.all([
    titledPng(1280, 720, '#1b4d7a', 'Sunrise', 'proof'),
    titledPng(1280, 720, '#7a3b1b', 'Sunset', 'proof'),
  ]);
  const media = {
    sunrise: await project.uploadMedia(sunrise, 'image/png', 'sunrise.png'),
    sunset: await project.uploadMedia(sunset, 'image/png', 'sunset.png'),
  };
  const playlist = await project.createPlaylist({
    name: 'Proof loop',
    pages: [imagePage('sunrise', media.sunrise, 1500), imagePage('sunset', media.sunset, 1500)],
  });
  await project.patchScreen(pairedScreen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('sunrise', 30_000);
  // Three showings closed (sunrise, sunset, sunrise) once the second sunset is on glass.
  for (const pageId of ['sunset', 'sunrise', 'sunset']) await player.waitForLivePage(pageId, 10_000);
  // A running player looks at its queue every 30 s; one starting up sends what it queued as soon as
  // it has its session again (PlaybackUploader, adopt's nudge). Reloaded now, it uploads these plays
  // in a second or two instead of at its first 30 s look, which is all this spec would wait for.
  await player.page.reload();
  await expect.poll(() => playsSoFar(project), { timeout: 90_000 }).toBeGreaterThan(2);

  // The dashboard takes the tab over from the player: what it counted is final now.
  const apps = new DashboardAppsPage(dashboard);
  await dashboard.open('/proof-of-play');
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Proof of play');
  const total = await playsSoFar(project);
  await page.getByRole('button', { name: 'Show' }).click();
  await expect(dashboard.said(new RegExp(`: ${total} plays,`))).toBeVisible();

  await expect(apps.chart('By screen')).toContainText('Lobby');
  const byMedia = apps.chart('By media and application');
  await expect(byMedia).toContainText('sunrise.png');
  await expect(byMedia).toContainText('sunset.png');
  const today = new Date().toISOString().slice(0, 10);
  await apps.chart('By day').getByText('Figures').click();
  await expect(apps.chart('By day').getByRole('row', { name: new RegExp(today) })).toContainText(String(total));

  await page.setViewportSize(DESKTOP);
  await dashboard.screenshot('proof-of-play-plays-1440.png');
  await page.setViewportSize(PHONE);
  await dashboard.screenshot('proof-of-play-plays-390.png');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download CSV' }).click(),
  ]);
  const csv = fs.readFileSync((await download.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toMatch(/^day,screen_id,media_id,/);
  expect(csv).toContain(pairedScreen.id);
  expect(csv).toContain('sunset.png');
});
