// An uploaded SDK application on glass: the kv-counter example reads and writes its count in KV
// through the bridge and asks for the next page long before the page's backstop.
import { expect, test } from '../support/fixtures';
import { canvas, fullRect, imagePage } from '../support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('the application counts in KV through the bridge and asks for the next page', async ({
  page,
  player,
  pairedScreen: screen,
  project,
  library,
}) => {
  const playlist = await project.createPlaylist({
    name: 'Counter loop',
    pages: [
      {
        id: 'counter',
        canvas: canvas('#10161DFF'),
        transition: { type: 'swipe-up', duration_ms: 300 },
        advance: { mode: 'application', max_ms: 20_000 },
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
      imagePage('menu', library.media.menu, 1500),
    ],
  });
  await project.patchScreen(screen.id, { playlist_id: playlist.id });

  await player.waitForLivePage('counter', 30_000);
  const app = page.frameLocator('[data-placement-id="board"] iframe');
  await expect(app.locator('#counter')).toHaveAttribute('data-state', 'counted', { timeout: 10_000 });
  const first = Number(await app.locator('#count').innerText());
  expect(first).toBeGreaterThanOrEqual(1);
  await player.screenshot('playing-counter.png');
  // page.advance after 4 s, long before the 20 s backstop.
  const shownAt = Date.now();
  await player.waitForLivePage('menu', 12_000);
  expect(Date.now() - shownAt).toBeLessThan(10_000);
  // The next turn reads the value written last time and writes one more.
  await player.waitForLivePage('counter', 30_000);
  await expect.poll(async () => Number(await app.locator('#count').innerText()), { timeout: 10_000 }).toBe(first + 1);
});
