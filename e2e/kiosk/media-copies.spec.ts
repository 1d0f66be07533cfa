// A kiosk keeps its media once: in the agent's mirror, within its disk budget. The renderer's
// service worker keeps the player shell, but no second copy of the media outside that budget (D-411).
import { expect, test } from '../support/fixtures';
import { imagePage } from '../support/playlist-documents';

test.use({ viewport: { width: 1280, height: 720 } });

test("a kiosk's renderer plays its media from the agent and keeps no copy of its own", async ({
  player,
  kiosk,
  project,
  library,
}) => {
  await player.open(`${kiosk.origin}/`);
  const claim = await project.pair(await player.code(), 'Kiosk');
  const playlist = await project.createPlaylist({
    name: 'Kiosk loop',
    pages: [imagePage('welcome', library.media.welcome, 1500), imagePage('menu', library.media.menu, 1500)],
  });
  await project.patchScreen(claim.screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('welcome', 30_000);
  await player.waitForLivePage('menu', 10_000);
  await player.waitForLivePage('welcome', 10_000);
  await expect(player.livePage().locator(`img[data-media-id="${library.media.welcome}"]`)).toBeVisible();
  // The service worker runs (it holds the shell) and has had every chance to keep the media.
  const held = await player.page.evaluate(async () => {
    const shell = await (await caches.open('marquee-shell-v1')).keys();
    const media = await (await caches.open('marquee-media-v1')).keys();
    return { controlled: navigator.serviceWorker.controller !== null, shell: shell.length, media: media.length };
  });
  expect(held).toMatchObject({ controlled: true, media: 0 });
  expect(held.shell).toBeGreaterThan(0);
});
