// Is my screen alive, and what is on it: a real browser player answers a screenshot request with
// a still composed from its own layers, whose centre pixel is the colour on glass; a cross-origin
// frame is a labelled placeholder; the screen view tells the player, its surface and what it plays.
import fs from 'node:fs';
import sharp from 'sharp';
import type { ControlApi } from './support/control-api';
import { expect, test } from './support/fixtures';
import { NEWS_URL } from './support/news-site';
import { canvas, fullRect, imagePage } from './support/playlist-documents';

test.use({ viewport: { width: 1280, height: 720 } });

/** The colour on glass: a full-frame image of one colour (no text, so the centre is exactly it). */
const GLASS = { r: 0x22, g: 0xaa, b: 0x66 };
const PLACEHOLDER_FILL = { r: 0x2b, g: 0x2f, b: 0x36 };
/** WebP at quality 80 moves a flat colour by a few levels at most. */
const TOLERANCE = 12;

async function pixelAt(image: Buffer, fx: number, fy: number) {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const x = Math.floor(info.width * fx);
  const y = Math.floor(info.height * fy);
  const at = (y * info.width + x) * 3;
  return { r: data[at]!, g: data[at + 1]!, b: data[at + 2]!, width: info.width, height: info.height };
}

function expectColour(actual: { r: number; g: number; b: number }, expected: { r: number; g: number; b: number }) {
  for (const channel of ['r', 'g', 'b'] as const)
    expect(
      Math.abs(actual[channel] - expected[channel]),
      `${channel} of ${JSON.stringify(actual)}`,
    ).toBeLessThanOrEqual(TOLERANCE);
}

/** Requests a screenshot, waits for it to be ready, and downloads it (checked against its status). */
async function capture(project: ControlApi, screenId: string) {
  const requested = await project.request('POST', `/api/v1/screens/${screenId}/screenshot`);
  expect(requested.status, JSON.stringify(requested.body)).toBe(202);
  const captureId: string = requested.body.capture_id;
  let status: any;
  await expect
    .poll(
      async () => {
        status = (await project.request('GET', `/api/v1/screens/${screenId}/screenshot/status`)).body;
        return status.state;
      },
      { timeout: 20_000, intervals: [250] },
    )
    .toBe('ready');
  expect(status.capture_id).toBe(captureId);
  const res = await project.bytes(`/api/v1/screens/${screenId}/screenshot?capture_id=${captureId}`, 'image/webp');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/webp');
  const image = res.body;
  expect(image.length).toBe(status.bytes);
  return { image, status };
}

test('a browser player answers a screenshot request with what is on its glass', async ({
  page,
  player,
  pairedScreen: screen,
  project,
}) => {
  test.setTimeout(90_000);
  const solid = await sharp({
    create: { width: 1920, height: 1080, channels: 3, background: GLASS },
  })
    .png()
    .toBuffer();
  const mediaId = await project.uploadMedia(solid, 'image/png', 'solid-green.png');
  const playlist = await project.createPlaylist({
    name: 'Solid colour',
    pages: [imagePage('solid', mediaId, 2000)], // a playlist swaps at a page boundary
  });
  await project.patchScreen(screen.id, { playlist_id: playlist.id });
  await player.waitForLivePage('solid', 30_000);
  await page.waitForTimeout(500); // past the crossfade

  await test.step('the centre pixel of the still is the colour on glass', async () => {
    const onGlass = await pixelAt(await page.screenshot(), 0.5, 0.5);
    expectColour(onGlass, GLASS);
    const { image, status } = await capture(project, screen.id);
    expect(status).toMatchObject({ method: 'composed', width: 640, height: 360 }); // half the viewport each way
    const centre = await pixelAt(image, 0.5, 0.5);
    expectColour(centre, onGlass);
    await player.screenshot('screenshot-glass.png');
  });

  await test.step('the screen view tells the player, its surface and what it plays', async () => {
    const view = (await project.request('GET', `/api/v1/screens/${screen.id}`)).body;
    expect(view.online).toBe(true);
    expect(view.observation.surfaces[0]).toMatchObject({ width: 1280, height: 720, id: 'primary' });
    expect(view.health.player).toEqual({ kind: 'browser', version: expect.any(String) });
    expect(view.health.now_playing.playlist_id).toBe(playlist.id);
    expect(view.health.screenshot.state).toBe('ready');
  });

  await test.step('a cross-origin frame is drawn as a labelled placeholder', async () => {
    const framed = await project.createPlaylist({
      name: 'With a web page',
      pages: [
        {
          id: 'framed',
          canvas: canvas('#000000FF'),
          transition: { type: 'crossfade', duration_ms: 200 },
          advance: { mode: 'duration', after_ms: 60_000 },
          placements: [
            {
              id: 'left',
              content: { type: 'image', selector: { by: 'id', media_id: mediaId }, alt: 'solid' },
              rect: { ...fullRect, width: 960 },
              layer: 0,
              content_fit: 'cover',
            },
            {
              id: 'ticker',
              content: { type: 'iframe', src: NEWS_URL, title: 'News ticker' },
              rect: { ...fullRect, x: 960, width: 960 },
              layer: 1,
              content_fit: 'fill',
            },
          ],
        },
      ],
    });
    await project.patchScreen(screen.id, { playlist_id: framed.id });
    await player.waitForLivePage('framed', 30_000);
    await page.waitForTimeout(500);
    const { image } = await capture(project, screen.id);
    expectColour(await pixelAt(image, 0.25, 0.5), GLASS);
    // The label sits in the middle of the frame's box; a point above it is the placeholder's fill.
    expectColour(await pixelAt(image, 0.75, 0.25), PLACEHOLDER_FILL);
    const glass = await player.screenshot('screenshot-framed-glass.png');
    fs.writeFileSync(glass.replace(/\.png$/, '-still.webp'), image); // to look at beside what was on glass
  });
});
