// The playlist page: a member reorders a playlist's pages (from the keyboard, then by dragging), the
// to-scale drawing of each position shows the page now there, a problem appears under the field it
// names, and the live preview plays the playlist in the player's engine in the new order, page
// after page. Checked with axe-core and saved as screenshots at both sizes.
import fs from 'node:fs';
import { DESKTOP, PHONE } from '../pages/dashboard-page';
import { silentMp3, titledPng } from '../support/media-fixtures';
import { image, imagePage } from '../support/playlist-documents';
import { expect, test } from './dashboard-fixtures';

test('reordering a playlist redraws its pages and the live preview plays the new order', async ({
  dashboard,
  member,
  project,
  page,
}) => {
  // Three uploads, a sign-in (a memory-hard hash) and axe twice on a loaded machine.
  test.setTimeout(240_000);
  const sunrise = await project.uploadMedia(
    await titledPng(1920, 1080, '#b0641b', 'Sunrise', 'first page'),
    'image/png',
    'sunrise.png',
  );
  const harbour = await project.uploadMedia(
    await titledPng(1920, 1080, '#1b5fb0', 'Harbour', 'second page'),
    'image/png',
    'harbour.png',
  );
  const song = await project.uploadMedia(silentMp3(30), 'audio/mpeg', 'quiet-song.mp3');
  const playlist = await project.createPlaylist({
    name: 'Editor tour',
    pages: [
      imagePage('sunrise', sunrise, 2000),
      imagePage('harbour', harbour, 2000),
      // A portrait picture in picture: the harbour in the lower right, over the sunrise.
      imagePage('inset', sunrise, 2000, {
        canvas: { width: 1080, height: 1920, viewport_fit: 'contain', background: '#000000FF' },
        placements: [
          image('inset-under', sunrise, { rect: { x: 0, y: 0, width: 1080, height: 1920 } }),
          image('inset-over', harbour, { rect: { x: 810, y: 960, width: 270, height: 960 }, layer: 1 }),
        ],
      }),
    ],
    audio: { tracks: [{ media_id: song }] },
  });

  await page.setViewportSize(DESKTOP);
  await dashboard.open(`/playlists/${playlist.id}`);
  await dashboard.signIn(member.email, member.password);
  await expect(dashboard.heading).toHaveText('Editor tour');
  expect(await dashboard.playlistPageIds()).toEqual(['sunrise', 'harbour', 'inset']);
  await expect.poll(() => dashboard.drawnMedia(1)).toEqual([sunrise]);
  // To scale: a portrait drawing, the inset in the right quarter of its width and the lower half of its height, on top.
  await expect.poll(() => dashboard.drawnMedia(3)).toEqual([sunrise, harbour]);
  const drawing = await dashboard.canvasDrawing(3);
  expect(drawing.placements[1]!.x / drawing.width).toBeCloseTo(0.75, 2);
  expect(drawing.placements[1]!.y / drawing.height).toBeCloseTo(0.5, 2);
  expect(drawing.placements[1]!.width / drawing.width).toBeCloseTo(0.25, 2);
  expect(drawing.placements[1]!.height / drawing.height).toBeCloseTo(0.5, 2);
  expect(drawing.width / drawing.height).toBeCloseTo(9 / 16, 1);
  expect(drawing.placements[1]!.z).toBeGreaterThan(drawing.placements[0]!.z);
  await expect(dashboard.page.getByRole('region', { name: 'Soundtrack' }).getByRole('listitem')).toHaveText(
    /quiet-song.mp3/,
  );

  // From the keyboard: page 2 moves up; the drawing in first place is now the harbour, and focus
  // stays with the moved page (its Move up is disabled at the top, so its Move down).
  await dashboard.movePageWithKeyboard(2, 'up');
  expect(await dashboard.playlistPageIds()).toEqual(['harbour', 'sunrise', 'inset']);
  await expect.poll(() => dashboard.drawnMedia(1)).toEqual([harbour]);
  await expect(dashboard.said('Page “harbour” moved to position 1 of 3.')).toBeVisible();
  await expect(dashboard.page.getByRole('button', { name: 'Move down: page 1, harbour' })).toBeFocused();

  // A problem shows under the field it names, and the apply panel waits for it.
  const seconds = dashboard.playlistPage(2).getByLabel('Seconds on glass');
  await seconds.fill('0.5');
  await expect(seconds).toHaveAttribute('aria-invalid', 'true');
  // In the field's own unit, not the schema's milliseconds.
  await expect(dashboard.playlistPage(2).locator('#playlist-pages-1-advance-after_ms-problem')).toHaveText(
    'at least 1 second',
  );
  await expect(dashboard.page.getByRole('alert').filter({ hasText: '1 problem to fix first' })).toBeVisible();
  await expect(dashboard.page.getByTestId('preview-held')).toBeVisible();
  await seconds.fill('2');
  await expect(seconds).not.toHaveAttribute('aria-invalid', 'true');
  await expect(dashboard.page.getByTestId('preview-held')).toBeHidden();
  await expect(dashboard.page.getByRole('link', { name: `Download ${playlist.id}.json` })).toBeVisible();

  // The live preview plays the new order in the player's engine: the harbour first, then the sunrise.
  await dashboard.page.getByRole('button', { name: 'Play the preview' }).click();
  await expect(dashboard.livePreviewPage).toHaveAttribute('data-page-id', 'harbour', { timeout: 20_000 });
  await expect(dashboard.page.getByTestId('live-stage').locator('section.page[data-state="live"] img')).toHaveAttribute(
    'data-media-id',
    harbour,
  );
  await expect(dashboard.livePreviewPage).toHaveAttribute('data-page-id', 'sunrise', { timeout: 15_000 });
  await expect(dashboard.livePreviewPage).toHaveAttribute('data-page-id', 'inset', { timeout: 15_000 });
  await expect(dashboard.livePreviewPage).toHaveAttribute('data-page-id', 'harbour', { timeout: 15_000 });
  await dashboard.expectAccessible();
  await dashboard.screenshot('playlist-editor-1440.png');

  // The download is the document `marquee playlist update` sends: applied (as the CLI would, with
  // If-Match), the page takes the new revision, which is the changes, so nothing is left to apply.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    dashboard.page.getByRole('link', { name: `Download ${playlist.id}.json` }).click(),
  ]);
  const document = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
  const applied = await project.request('PUT', `/api/v1/playlists/${playlist.id}`, {
    json: document,
    headers: { 'If-Match': `"${playlist.revision}"` },
  });
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  expect(applied.body.pages.map((p: { id: string }) => p.id)).toEqual(['harbour', 'sunrise', 'inset']);
  await expect(dashboard.page.getByText(`Revision ${playlist.revision + 1}.`)).toBeVisible({ timeout: 15_000 });
  await expect(dashboard.page.getByRole('heading', { name: 'Apply the changes' })).toBeHidden();
  expect(await dashboard.playlistPageIds()).toEqual(['harbour', 'sunrise', 'inset']);

  // By dragging: the sunrise's grip onto the first row puts it back in first place.
  await dashboard.page.getByRole('button', { name: 'Play the preview' }).click();
  await dashboard.dragPage(2, 1);
  expect(await dashboard.playlistPageIds()).toEqual(['sunrise', 'harbour', 'inset']);
  await expect.poll(() => dashboard.drawnMedia(1)).toEqual([sunrise]);
  await expect(dashboard.livePreviewPage).toHaveAttribute('data-page-id', 'sunrise', { timeout: 20_000 });

  // A visibility rule on page 2: its editor opens; "from" after "until" is named on the rule.
  await dashboard.playlistPage(2).getByLabel('Shown only at some times').check();
  const rule = dashboard.page.getByRole('group', { name: 'When page 2 is shown' });
  await expect(rule.getByRole('group', { name: 'Window 1' })).toBeVisible();
  await rule.getByLabel(/^From date/).fill('2030-05-02T10:00');
  await rule.getByLabel(/^Until date/).fill('2030-05-01T10:00');
  await expect(rule.locator('#playlist-pages-1-visibility-problem')).toHaveText('from must be before until');
  await rule.getByLabel(/^Until date/).fill('2030-05-03T10:00');
  await expect(rule.locator('#playlist-pages-1-visibility-problem')).toBeEmpty();
  await dashboard.expectAccessible();
  await dashboard.screenshot('playlist-editor-rule-1440.png');

  await page.setViewportSize(PHONE);
  await dashboard.expectAccessible();
  await dashboard.screenshot('playlist-editor-390.png');
});
