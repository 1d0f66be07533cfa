// Images, iframes and video on glass: a gradient canvas with a full-screen image, a news ticker
// iframe that fades up and an iframe of an unreachable site (hidden, not an error page), then a
// video that plays muted from its start and advances the loop when it ends.
import { expect, test } from '../support/fixtures';
import { NEWS_URL, UNREACHABLE_URL } from '../support/news-site';
import { canvas, fullRect, image } from '../support/playlist-documents';

test.use({ viewport: { width: 1920, height: 1080 } });

test('a paired screen plays images with iframes and their fallback, then a muted video to its end', async ({
  page,
  player,
  pairedScreen: screen,
  project,
  library,
}) => {
  const { media } = library;
  const playlist = await project.createPlaylist({
    name: 'Lobby loop',
    pages: [
      {
        id: 'welcome',
        canvas: canvas({
          type: 'linear',
          stops: [
            { at: 0, color: '#1B2632FF' },
            { at: 1, color: '#000000FF' },
          ],
        }),
        transition: { type: 'crossfade', duration_ms: 300 },
        advance: { mode: 'duration', after_ms: 2500 },
        placements: [
          image('hero', media.welcome),
          {
            id: 'ticker',
            content: { type: 'iframe', src: NEWS_URL, title: 'News ticker' },
            rect: { x: 0, y: 960, width: 1920, height: 120 },
            layer: 2,
            content_fit: 'fill',
            enter: { type: 'fade-up' },
          },
          {
            id: 'gone',
            content: { type: 'iframe', src: UNREACHABLE_URL, title: 'Unreachable' },
            rect: { x: 1520, y: 40, width: 360, height: 200 },
            layer: 1,
            content_fit: 'fill',
          },
        ],
      },
      {
        id: 'clip',
        canvas: canvas('#000000FF'),
        transition: { type: 'swipe-left', duration_ms: 400 },
        advance: { mode: 'media_end' },
        placements: [
          {
            id: 'video',
            content: { type: 'video', selector: { by: 'id', media_id: media.clip } },
            rect: fullRect,
            layer: 0,
            content_fit: 'contain',
          },
        ],
      },
    ],
  });
  await project.patchScreen(screen.id, { playlist_id: playlist.id });

  await test.step('images, the iframe and its fallback, with the gradient canvas', async () => {
    await player.waitForLivePage('welcome', 30_000);
    const live = player.livePage();
    await expect(live.locator(`img[data-media-id="${media.welcome}"]`)).toBeVisible();
    await expect(live.locator('[data-placement-id="ticker"] iframe')).toHaveAttribute('src', NEWS_URL);
    await expect(page.frameLocator('[data-placement-id="ticker"] iframe').locator('#ticker')).toHaveText(
      /lobby loop is live/,
    );
    // The unreachable site is not shown as a browser error page; the rest of the page plays.
    await expect(live.locator('[data-placement-id="gone"]')).toHaveAttribute('data-unavailable', 'true');
    await expect(live.locator('[data-placement-id="gone"] iframe')).toHaveCount(0);
    await page.waitForTimeout(1000); // let the ticker's enter animation finish
    await player.screenshot('playing-welcome.png');
  });

  await test.step('the video plays muted from its start, then advances on its end', async () => {
    await player.waitForLivePage('clip', 15_000);
    const video = player.livePage().locator('video:not([hidden])');
    await expect(video).toHaveJSProperty('muted', true);
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime)).toBeGreaterThan(0.3);
    await player.screenshot('playing-clip.png');
    await player.waitForLivePage('welcome', 15_000);
  });
});
