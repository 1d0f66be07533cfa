// Browser setup without the pairing screen: a TV's browser opens /setup, asks for a code (a plain
// form post), the agent claims it, and the page moves on by itself to the player, which provisions
// the screen and plays what is assigned.
import { expect, test } from './support/fixtures';
import { imagePage } from './support/playlist-documents';

test('a browser shows a setup code, is claimed by the agent, and becomes a playing screen', async ({
  page,
  player,
  marquee,
  project: api,
  library,
}) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(`${marquee.origin}/setup`);
  await player.screenshot('browser-link-start.png');
  await page.getByRole('button', { name: 'Show a setup code' }).click();
  const code = (await page.locator('.code').textContent())!;
  expect(code).toMatch(/^[2-9A-HJKMNP-Z]{3}-[2-9A-HJKMNP-Z]{3}$/);
  await player.screenshot('browser-link-code.png');

  const claim = await api.request('POST', '/api/v1/account/browser-links/claim', { json: { code, label: 'Lobby TV' } });
  expect(claim.status, JSON.stringify(claim.body)).toBe(201);
  const screenId = claim.body.screen.id as string;
  // The page refreshes itself (every 5 s, no script) and continues to the player's provisioning link.
  await page.waitForURL(/\/s\/[^#]+$/, { timeout: 30_000 });
  await expect.poll(async () => (await api.screen(screenId)).state, { timeout: 20_000 }).toBe('active');

  const loop = await api.createPlaylist({
    name: 'Lobby',
    pages: [imagePage('welcome', library.media.welcome, 60_000)],
  });
  await api.patchScreen(screenId, { playlist_id: loop.id });
  await player.waitForLivePage('welcome', 30_000);
  await page.waitForTimeout(1500); // the crossfade over the idle screen, for the screenshot only
  await player.screenshot('browser-link-playing.png');
});
