// The player on glass against the real server: a paired screen plays a playlist of images, a
// video, an iframe, an uploaded SDK application (KV write/read, page.advance), a soundtrack and a
// visibility rule; keeps playing when the server dies and recovers when it returns; and swaps to
// a changed playlist at a page boundary, reporting manifest.activated.
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { packApplication, defaultRuntimeScript } from '../sdk/pack/pack';
import { PlayerPage } from './pages/player-page';
import { CHROMIUM_ARGS, CHROMIUM_PATH, E2E_PORT } from './playwright.config';
import { ControlApi } from './support/control-api';
import { MarqueeServer } from './support/marquee-server';
import { silentMp3, titledPng, webmClip } from './support/media-fixtures';
import { NEWS_URL, newsSite, UNREACHABLE_URL } from './support/news-site';

const news = newsSite(E2E_PORT + 2);
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...news.chromiumArgs] } });

const server = new MarqueeServer(E2E_PORT + 1);
test.beforeAll(async () => {
  await Promise.all([server.start(), news.start()]);
});
test.afterAll(async () => {
  await Promise.all([server.stop(), news.stop()]);
});

const canvas = (background: unknown) => ({ width: 1920, height: 1080, viewport_fit: 'contain', background });
const fullRect = { x: 0, y: 0, width: 1920, height: 1080 };
const image = (id: string, mediaId: string, extra: Record<string, unknown> = {}) => ({
  id,
  content: { type: 'image', selector: { by: 'id', media_id: mediaId }, alt: id },
  rect: fullRect,
  layer: 0,
  content_fit: 'cover',
  ...extra,
});

test('a paired screen plays every kind of content, survives the server going away, and swaps playlists', async ({
  page,
  browser,
}) => {
  test.setTimeout(240_000);
  const api = new ControlApi(server.origin);
  const player = new PlayerPage(page);
  await page.setViewportSize({ width: 1920, height: 1080 });

  let screenId = '';
  await test.step('pair the screen through the API', async () => {
    await api.enroll();
    await player.open(`${server.origin}/`);
    const claim = await api.pair(await player.code(), 'Lobby');
    screenId = claim.screen.id;
    await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
  });

  const media: Record<string, string> = {};
  let releaseId = '';
  await test.step('upload media and the kv-counter application', async () => {
    const [welcome, menu, evening, quiet, clip] = await Promise.all([
      titledPng(1920, 1080, '#1b4d7a', 'Welcome', 'to the lobby'),
      titledPng(1920, 1080, '#7a3b1b', 'Menu', 'soup of the day'),
      titledPng(1920, 1080, '#3b1b7a', 'Evening', 'never shown: its rule is disabled'),
      titledPng(1920, 1080, '#1b7a4d', 'Quiet', 'second playlist'),
      webmClip(browser, server.origin, { seconds: 3, width: 640, height: 360, color: '#2a7ab0' }),
    ]);
    media.welcome = await api.uploadMedia(welcome, 'image/png', 'welcome.png');
    media.menu = await api.uploadMedia(menu, 'image/png', 'menu.png');
    media.evening = await api.uploadMedia(evening, 'image/png', 'evening.png');
    media.quiet = await api.uploadMedia(quiet, 'image/png', 'quiet.png');
    media.clip = await api.uploadMedia(clip, 'video/webm', 'clip.webm');
    media.music = await api.uploadMedia(silentMp3(240), 'audio/mpeg', 'music.mp3');

    const packed = await packApplication(path.resolve(import.meta.dirname, '../sdk/examples/kv-counter'), {
      runtime: await defaultRuntimeScript(),
      name: 'KV counter',
    });
    const uploaded = await api.request('POST', '/api/v1/applications', {
      body: packed.archive,
      headers: { ...packed.headers, 'Content-Type': 'application/gzip' },
    });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(202);
    const op = await api.waitForOperation(uploaded.body.operation_id, 60_000);
    expect(op.state, JSON.stringify(op)).toBe('succeeded');
    releaseId = uploaded.body.release_id;
  });

  let playlistId = '';
  await test.step('assign a playlist with images, a video, an iframe, the application, a soundtrack and a visibility rule', async () => {
    const playlist = await api.createPlaylist({
      name: 'Lobby loop',
      audio: { tracks: [{ media_id: media.music }] },
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
            image('hero', media.welcome!),
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
        {
          id: 'counter',
          canvas: canvas('#10161DFF'),
          transition: { type: 'swipe-up', duration_ms: 300 },
          advance: { mode: 'application', max_ms: 20_000 },
          placements: [
            {
              id: 'board',
              content: { type: 'application', release_id: releaseId },
              rect: fullRect,
              layer: 0,
              content_fit: 'fill',
              controller: true,
            },
          ],
        },
        {
          id: 'menu',
          canvas: canvas('#000000FF'),
          transition: { type: 'crossfade', duration_ms: 300 },
          advance: { mode: 'duration', after_ms: 1500 },
          visibility: { enabled: true, windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] }] },
          placements: [image('menu', media.menu!)],
        },
        {
          id: 'evening',
          canvas: canvas('#000000FF'),
          transition: { type: 'crossfade', duration_ms: 300 },
          advance: { mode: 'duration', after_ms: 1500 },
          visibility: { enabled: false },
          placements: [image('evening', media.evening!)],
        },
      ],
    });
    playlistId = playlist.id;
    await api.patchScreen(screenId, { playlist_id: playlistId, timezone: 'Europe/Berlin' });
  });

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
  });

  await test.step('the application counts in KV through the bridge and asks for the next page', async () => {
    await player.waitForLivePage('counter', 15_000);
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

  await test.step('the visibility rule: the disabled page never plays, the all-week page does', async () => {
    const seen = await player.recordPages(5, 60_000);
    expect(seen).toContain('menu');
    expect(seen).not.toContain('evening');
  });

  await test.step('the soundtrack plays above the pages', async () => {
    const audio = player.soundtrack();
    await expect.poll(() => audio.evaluate((a: HTMLAudioElement) => !a.paused && a.currentTime > 0)).toBe(true);
  });

  await test.step('with the server killed, playback continues from what is cached', async () => {
    await server.kill();
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
    await server.start();
    await expect(player.statusMark).toBeHidden({ timeout: 60_000 });
  });

  await test.step('a changed playlist is swapped in at a page boundary and reported as activated', async () => {
    const audio = player.soundtrack();
    const before = (await api.screen(screenId)).manifest_revision;
    await api.replacePlaylist(playlistId, {
      name: 'Quiet loop',
      audio: { tracks: [{ media_id: media.music }] },
      pages: ['one', 'two', 'three'].map((id, i) => ({
        id,
        canvas: canvas('#000000FF'),
        transition: { type: (['crossfade', 'swipe-right', 'swipe-down'] as const)[i], duration_ms: 200 },
        advance: { mode: 'duration', after_ms: 1000 },
        placements: [image('hero', i === 0 ? media.quiet! : i === 1 ? media.menu! : media.welcome!)],
      })),
    });
    expect((await api.screen(screenId)).manifest_revision).toBeGreaterThan(before);
    // Sample the soundtrack on every frame while the swap and 20 page changes happen.
    const samples = page.evaluate(
      () =>
        new Promise<{ times: number[]; pages: string[] }>((resolve) => {
          const audio = document.querySelector<HTMLAudioElement>('audio.soundtrack')!;
          const times: number[] = [];
          const pages: string[] = [];
          const tick = () => {
            times.push(audio.currentTime);
            const live = [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')].at(-1)?.dataset
              .pageId;
            if (live && pages.at(-1) !== live) pages.push(live);
            if (pages.length > 21) return resolve({ times, pages });
            requestAnimationFrame(tick);
          };
          tick();
        }),
    );
    await player.waitForLivePage('one', 30_000);
    const { times, pages } = await samples;
    expect(pages.slice(-20).every((p) => ['one', 'two', 'three'].includes(p))).toBe(true);
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThanOrEqual(times[i - 1]!);
    expect(await audio.evaluate((a: HTMLAudioElement) => a.paused)).toBe(false);
    await player.waitForLivePage('two', 10_000);
    await page.waitForTimeout(500); // past the transition: the page fills the viewport
    await player.screenshot('playing-after-swap.png');

    const revision = await page.evaluate(
      () =>
        (
          window as unknown as { marqueePlayer: { store: { getState(): { activeRevision: string } } } }
        ).marqueePlayer.store.getState().activeRevision,
    );
    await expect
      .poll(
        async () =>
          (await api.events())
            .filter((e) => e.type === 'manifest.activated')
            .map((e) => JSON.stringify(e))
            .join('\n'),
        { timeout: 10_000 },
      )
      .toContain(revision);
  });
});
