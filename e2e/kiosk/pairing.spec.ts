// A kiosk pairs with its own key: the code the agent got from the native flow is on glass, an
// owner claims it, and the screen plays what it is assigned, from the agent's loopback origin.
import { expect, test } from '../support/fixtures';
import { imagePage } from '../support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('a kiosk shows its native pairing code, is claimed, and puts its content on glass', async ({
  player,
  kiosk,
  project,
  library,
}) => {
  await player.open(`${kiosk.origin}/`);
  // A native code lives 72 hours: the screen says so in days, not in thousands of minutes.
  await expect(player.pairingExpiry).toHaveText('This code is replaced in about 3 days.');
  await player.screenshot('kiosk-pairing.png');
  const claim = await project.pair(await player.code(), 'Kiosk');
  await expect(player.pairingScreen).toBeHidden({ timeout: 15_000 });
  expect(await kiosk.status()).toMatchObject({ paired: true });
  // The screen is bound to the kiosk's key: it can be archived, not deleted.
  const refused = await project.request('DELETE', `/api/v1/screens/${claim.screen.id}`);
  expect([refused.status, refused.body.code]).toEqual([409, 'screen_archive_required']);

  const playlist = await project.createPlaylist({
    name: 'Kiosk loop',
    pages: [imagePage('welcome', library.media.welcome, 2000), imagePage('menu', library.media.menu, 2000)],
  });
  await project.patchScreen(claim.screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('welcome', 30_000);
  await expect(player.livePage().locator(`img[data-media-id="${library.media.welcome}"]`)).toBeVisible();
  await player.waitForLivePage('menu', 10_000);
  await player.screenshot('kiosk-playing.png');
});
