// An application page plays offline from its package: with the server gone, a fresh renderer of
// the kiosk launches the release from the agent's local release origin (a ticket the agent mints),
// and the app reads and writes its key/value entries through the agent.
import { PlayerPage } from '../pages/player-page';
import { expect, test } from '../support/fixtures';
import { canvas, fullRect } from '../support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('an application page plays offline from its package on the kiosk', async ({
  browser,
  player,
  kiosk,
  marquee,
  project,
  library,
}) => {
  test.setTimeout(120_000);
  await player.open(`${kiosk.origin}/`);
  const claim = await project.pair(await player.code(), 'Kiosk');
  const playlist = await project.createPlaylist({
    name: 'Counter',
    pages: [
      {
        id: 'counter',
        canvas: canvas('#10161DFF'),
        transition: { type: 'crossfade', duration_ms: 200 },
        advance: { mode: 'application', max_ms: 60_000 },
        placements: [
          {
            id: 'board',
            content: { type: 'application', release_id: library.releaseId },
            rect: fullRect,
            layer: 0,
            content_fit: 'fill',
            controller: true,
          },
        ],
      },
    ],
  });
  await project.patchScreen(claim.screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('counter', 30_000);
  const online = player.page.frameLocator('[data-placement-id="board"] iframe');
  await expect(online.locator('#counter')).toHaveAttribute('data-state', 'counted', { timeout: 15_000 });
  const frameUrl = await player.page.locator('[data-placement-id="board"] iframe').getAttribute('src');
  expect(frameUrl).toMatch(/^http:\/\/[a-f0-9]{40}\.release\.localhost:\d+\//);

  await marquee.kill();
  await expect.poll(async () => (await kiosk.status()).online, { timeout: 20_000 }).toBe(false);
  const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } });
  const offline = new PlayerPage(await context.newPage());
  await offline.open(`${kiosk.origin}/`);
  await offline.waitForLivePage('counter', 20_000);
  const app = offline.page.frameLocator('[data-placement-id="board"] iframe');
  await expect(app.locator('#counter')).toHaveAttribute('data-state', 'counted', { timeout: 15_000 });
  await offline.screenshot('kiosk-application-offline.png');
  await context.close();
  await marquee.start();
});
