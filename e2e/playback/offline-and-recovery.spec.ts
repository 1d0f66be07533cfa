// Offline first: with the server killed the player keeps looping what it holds, a reload while the
// server is down starts from the cached shell and manifest, and the player reconnects when the
// server returns. The spec kills the worker's server and starts it again before it ends.
import { expect, test } from '../support/fixtures';
import { imagePage } from '../support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('a screen keeps playing with the server gone, across a reload, and reconnects when it returns', async ({
  page,
  player,
  pairedScreen: screen,
  project,
  library,
  marquee,
}) => {
  test.setTimeout(150_000);
  const { media } = library;
  const playlist = await project.createPlaylist({
    name: 'Lobby loop',
    pages: [imagePage('welcome', media.welcome, 1500), imagePage('menu', media.menu, 1500)],
  });
  await project.patchScreen(screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('welcome', 30_000);
  // Offline-ready: the service worker controls the page and holds the loop's media.
  await expect.poll(() => player.holdsForOffline([media.welcome, media.menu]), { timeout: 30_000 }).toBe(true);

  await test.step('with the server killed, playback continues from what is cached', async () => {
    await marquee.kill();
    await expect(player.statusMark).toBeVisible({ timeout: 20_000 });
    const seen = await player.recordPages(4, 60_000);
    expect(new Set(seen).size).toBeGreaterThan(1);
    await player.screenshot('offline.png');
  });

  await test.step('a reload while the server is down starts from the cached shell and manifest', async () => {
    await page.reload();
    await player.waitForLivePage('welcome', 30_000);
    await expect(player.statusMark).toBeVisible();
    await expect(player.livePage().locator(`img[data-media-id="${media.welcome}"]`)).toBeVisible();
  });

  await test.step('when the server returns the player reconnects', async () => {
    await marquee.start();
    await expect(player.statusMark).toBeHidden({ timeout: 60_000 });
  });
});
