// The player served from a loopback IP origin, as the kiosk agent serves it (http://127.0.0.1:<port>,
// docs/decisions.md, Kiosk): nothing in it assumes a host name. It pairs with the spec's __Host-
// cookies, plays, and its service worker holds the media for offline starts.
import { expect, test } from './support/fixtures';
import { imagePage } from './support/playlist-documents';

test('a player opened at http://127.0.0.1 pairs with its __Host- cookies, plays, and is ready for offline', async ({
  page,
  player,
  marquee,
  project,
  library,
}) => {
  const origin = `http://127.0.0.1:${marquee.port}`;
  await player.open(`${origin}/`);
  const claim = await project.pair(await player.code(), 'Loopback');
  await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
  const cookies = await page.context().cookies(origin);
  expect(cookies.filter((c) => c.name.startsWith('__Host-marquee-')).map((c) => [c.name, c.domain, c.secure])).toEqual(
    expect.arrayContaining([
      ['__Host-marquee-device', '127.0.0.1', true],
      ['__Host-marquee-runtime', '127.0.0.1', true],
    ]),
  );

  const playlist = await project.createPlaylist({
    name: 'Loopback loop',
    pages: [imagePage('welcome', library.media.welcome, 1500), imagePage('menu', library.media.menu, 1500)],
  });
  await project.patchScreen(claim.screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('welcome', 30_000);
  await expect(player.livePage().locator(`img[data-media-id="${library.media.welcome}"]`)).toBeVisible();
  await expect
    .poll(() => player.holdsForOffline([library.media.welcome, library.media.menu]), { timeout: 30_000 })
    .toBe(true);
});
