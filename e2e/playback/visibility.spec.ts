// Page visibility in the screen's timezone: a page whose rule is disabled never plays; a page
// visible all week does.
import { expect, test } from '../support/fixtures';
import { imagePage } from '../support/playlist-documents';

test('the disabled page never plays, the all-week page does', async ({
  player,
  pairedScreen: screen,
  project,
  library,
}) => {
  const { media } = library;
  const everyDay = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  const playlist = await project.createPlaylist({
    name: 'Visibility loop',
    pages: [
      imagePage('welcome', media.welcome, 1500),
      imagePage('menu', media.menu, 1500, { visibility: { enabled: true, windows: [{ days: everyDay }] } }),
      imagePage('evening', media.evening, 1500, { visibility: { enabled: false } }),
    ],
  });
  await project.patchScreen(screen.id, { playlist_id: playlist.id, timezone: 'Europe/Berlin' });

  await player.waitForLivePage('welcome', 30_000);
  const seen = await player.recordPages(5, 60_000);
  expect(seen).toContain('menu');
  expect(seen).not.toContain('evening');
});
