// Lockstep across real players: four browser players paired to one project and put in one sync
// group, each on a device clock that is seconds off and behind 20 ms of network jitter on its
// server-clock exchanges, change pages together (the true time of the frame each change painted
// in is recorded on every member); a reloaded member comes back in step; an application page that
// advances on its own moves the group by a barrier, on the same frame everywhere; and a 2×2 video
// wall shows each screen its quarter of one composition, checked by pixel colour.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { expect, test } from './support/fixtures';
import {
  type Change,
  changeSkews,
  changesOf,
  memberContext,
  pairMember,
  percentile,
  trueNowOf,
} from './support/lockstep-members';
import { ARTIFACTS } from './pages/player-page';
import { canvas, fullRect, image } from './support/playlist-documents';

/** The goal for page changes under 20 ms of jitter: p95 within 50 ms across members. */
const SKEW_P95_UNDER_JITTER_MS = 50;
const CLOCK_SHIFTS_MS = [3_200, -7_500, 12_000, -1_400];
/** A page turn: the 200 ms crossfade and 1 s on glass. */
const TURN_MS = 1200;

test('four players of one sync group change pages together, whatever their clocks, and a reload comes back in step', async ({
  browser,
  marquee,
  project,
  library,
}) => {
  test.setTimeout(240_000);
  const contexts = await Promise.all(
    CLOCK_SHIFTS_MS.map((clockShiftMs) => memberContext(browser, { clockShiftMs, jitterMs: 20 })),
  );
  const members: Array<Awaited<ReturnType<typeof pairMember>>> = [];
  for (const [i, context] of contexts.entries())
    members.push(await pairMember(context, marquee.origin, project, `Lobby ${i + 1}`));
  const playlist = await project.createPlaylist({
    name: 'Lobby in lockstep',
    pages: (['welcome', 'menu', 'quiet'] as const).map((id) => ({
      id,
      canvas: canvas('#000000FF'),
      transition: { type: 'crossfade', duration_ms: 200 },
      advance: { mode: 'duration', after_ms: 1000 },
      placements: [image('hero', library.media[id])],
    })),
  });
  for (const m of members) await project.patchScreen(m.screenId, { playlist_id: playlist.id, sync_group: 'lobby' });

  await test.step('every member changes page on the same frame, within the jitter goal', async () => {
    const ready = async () => (await Promise.all(members.map((m) => changesOf(m.page)))).every((c) => c.length >= 2);
    await expect.poll(ready, { timeout: 60_000, intervals: [250] }).toBe(true);
    // Three seconds for the clocks to settle, then twenty page changes.
    const from = (await trueNowOf(members[0]!.page)) + 3000;
    await members[0]!.page.waitForTimeout(3000 + 20 * TURN_MS + 500);
    const all = await Promise.all(members.map((m) => changesOf(m.page)));
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, 'lockstep-changes.json'), JSON.stringify(all, null, 1));
    const skews = changeSkews(all, from, 500);
    expect(skews.length).toBeGreaterThanOrEqual(18);
    expect(
      skews.filter((s) => s.skew === Infinity),
      'changes some member missed',
    ).toEqual([]);
    const ms = skews.map((s) => s.skew);
    test.info().annotations.push({
      type: 'page-change skew',
      description: `p50 ${percentile(ms, 50).toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms over ${ms.length} changes`,
    });
    expect(percentile(ms, 95)).toBeLessThanOrEqual(SKEW_P95_UNDER_JITTER_MS);
    // The loop order is the playlist's on every member.
    const order = all[1]!.filter((c) => c.at >= from).map((c) => c.page);
    for (let i = 1; i < order.length; i++)
      expect(order[i]).toBe({ welcome: 'menu', menu: 'quiet', quiet: 'welcome' }[order[i - 1]!]);
  });

  await test.step('a member that reloads joins the group where it is, and changes with the others', async () => {
    const reloaded = members[2]!.page;
    await reloaded.reload();
    await expect.poll(async () => (await changesOf(reloaded)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    const from = (await trueNowOf(reloaded)) + 2000;
    await reloaded.waitForTimeout(2000 + 8 * TURN_MS + 500);
    const all = await Promise.all(members.map((m) => changesOf(m.page)));
    const skews = changeSkews([all[2]!, all[0]!, all[1]!, all[3]!], from, 500);
    expect(skews.length).toBeGreaterThanOrEqual(7);
    expect(skews.filter((s) => s.skew === Infinity)).toEqual([]);
    expect(
      percentile(
        skews.map((s) => s.skew),
        95,
      ),
    ).toBeLessThanOrEqual(SKEW_P95_UNDER_JITTER_MS);
  });
  await Promise.all(contexts.map((c) => c.close()));
});

test('an application that advances on its own moves the whole group on one frame, through the barrier', async ({
  browser,
  marquee,
  project,
  library,
}) => {
  test.setTimeout(180_000);
  const contexts = await Promise.all(
    [2_500, -4_000].map((clockShiftMs) => memberContext(browser, { clockShiftMs, jitterMs: 20 })),
  );
  const members: Array<Awaited<ReturnType<typeof pairMember>>> = [];
  for (const [i, context] of contexts.entries())
    members.push(await pairMember(context, marquee.origin, project, `Board ${i + 1}`));
  // The counter asks for the next page 4 s after it comes on glass; its backstop is 30 s.
  const BACKSTOP_MS = 30_000;
  const playlist = await project.createPlaylist({
    name: 'Board in lockstep',
    pages: [
      {
        id: 'counter',
        canvas: canvas('#10161DFF'),
        transition: { type: 'crossfade', duration_ms: 200 },
        advance: { mode: 'application', max_ms: BACKSTOP_MS },
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
      {
        id: 'menu',
        canvas: canvas('#000000FF'),
        transition: { type: 'crossfade', duration_ms: 200 },
        advance: { mode: 'duration', after_ms: 2000 },
        placements: [image('hero', library.media.menu)],
      },
    ],
  });
  for (const m of members) await project.patchScreen(m.screenId, { playlist_id: playlist.id, sync_group: 'board' });
  // The barrier every member saw: the first menu after the last member came on glass (a member whose
  // application took long to start joins the group later, on the counter page, and moves with it from then).
  const onGlassFrom = (all: Change[][]) =>
    Math.max(...all.map((c) => c.find((x) => x.page === 'counter')?.at ?? Infinity));
  const menusTogether = (all: Change[][]) => {
    const from = onGlassFrom(all);
    return all.map((c) => c.find((x) => x.page === 'menu' && x.at > from));
  };
  const allChanges = () => Promise.all(members.map((m) => changesOf(m.page)));
  await expect
    .poll(async () => menusTogether(await allChanges()).every((menu) => menu !== undefined), {
      timeout: 90_000,
      intervals: [500],
    })
    .toBe(true);
  const all = await allChanges();
  const from = onGlassFrom(all);
  const menuAt = menusTogether(all).map((menu) => menu!.at);
  const counterAt = all.map((c, i) => c.filter((x) => x.page === 'counter' && x.at < menuAt[i]!).at(-1)!.at);
  test.info().annotations.push({
    type: 'barrier skew',
    description: `${Math.abs(menuAt[0]! - menuAt[1]!).toFixed(1)} ms; the counter held ${(menuAt[0]! - Math.max(...counterAt)).toFixed(0)} ms`,
  });
  // The application moved the page (a group page never ends early on a member's own word) ...
  for (const [i, at] of menuAt.entries()) expect(at - counterAt[i]!).toBeLessThan(BACKSTOP_MS / 2);
  // ... on every member at the barrier's instant. (What each member showed when, should it not.)
  const first = Math.min(...all.map((c) => c[0]?.at ?? from));
  const changes = all.map((c) => c.map((x) => `${x.page} +${(x.at - first).toFixed(0)} ms`).join(', '));
  expect(Math.abs(menuAt[0]! - menuAt[1]!), `pages shown: ${changes.join(' | ')}`).toBeLessThanOrEqual(
    SKEW_P95_UNDER_JITTER_MS,
  );
  await Promise.all(contexts.map((c) => c.close()));
});

test('a 2×2 video wall shows each screen its quarter of one composition', async ({ browser, marquee, project }) => {
  test.setTimeout(180_000);
  const quadrants = [
    { id: 'tl', rgb: [220, 40, 40], x: 0, y: 0 },
    { id: 'tr', rgb: [40, 200, 60], x: 1920, y: 0 },
    { id: 'bl', rgb: [40, 80, 220], x: 0, y: 1080 },
    { id: 'br', rgb: [230, 200, 30], x: 1920, y: 1080 },
  ];
  const mediaIds: string[] = [];
  for (const q of quadrants) {
    const [r, g, b] = q.rgb;
    const png = await sharp({ create: { width: 192, height: 108, channels: 3, background: { r: r!, g: g!, b: b! } } })
      .png()
      .toBuffer();
    mediaIds.push(await project.uploadMedia(png, 'image/png', `${q.id}.png`));
  }
  const playlist = await project.createPlaylist({
    name: 'Wall',
    pages: [
      {
        id: 'composition',
        canvas: { width: 3840, height: 2160, viewport_fit: 'contain', background: '#000000FF' },
        transition: { type: 'crossfade', duration_ms: 200 },
        advance: { mode: 'duration', after_ms: 60_000 },
        placements: quadrants.map((q, i) =>
          image(q.id, mediaIds[i]!, { rect: { x: q.x, y: q.y, width: 1920, height: 1080 }, content_fit: 'fill' }),
        ),
      },
    ],
  });
  const contexts = await Promise.all(
    quadrants.map(() =>
      memberContext(browser, { clockShiftMs: 0, jitterMs: 0, viewport: { width: 480, height: 270 } }),
    ),
  );
  for (const [i, q] of quadrants.entries()) {
    const member = await pairMember(contexts[i]!, marquee.origin, project, `Wall ${q.id}`);
    const screen = await project.patchScreen(member.screenId, {
      playlist_id: playlist.id,
      sync_group: 'wall',
      wall_region: { x: q.x, y: q.y, width: 1920, height: 1080 },
    });
    expect(screen).toMatchObject({ sync_group: 'wall', wall_region: { x: q.x, y: q.y, width: 1920, height: 1080 } });
    await member.page
      .locator('.stage .page[data-state="live"][data-page-id="composition"]')
      .waitFor({ timeout: 60_000 })
      .catch(async (error: Error) => {
        // Say what the player was doing instead.
        const state = await member.page.evaluate(() => ({
          pages: [...document.querySelectorAll<HTMLElement>('.page')].map(
            (p) => `${p.dataset.pageId}:${p.dataset.state}`,
          ),
          cards: [...document.querySelectorAll<HTMLElement>('[data-testid$="-card"]')].map((c) => c.dataset.testid),
        }));
        throw new Error(`${error.message}\nplayer: ${JSON.stringify(state)}`);
      });
    await member.page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('.stage img')].every(
        (img) => img.complete && img.naturalWidth > 0,
      ),
    );
    await member.page.waitForTimeout(400); // past the crossfade
    await member.page.screenshot(); // a first capture may be a stale composite (see PlayerPage.screenshot)
    const shot = await member.page.screenshot({ path: path.join(ARTIFACTS, `lockstep-wall-${q.id}.png`) });
    const { data, info } = await sharp(shot).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    for (const [x, y] of [
      [240, 135],
      [6, 6],
      [473, 6],
      [6, 263],
      [473, 263],
    ] as const) {
      const at = (y * info.width + x) * 3;
      const [r, g, b] = [data[at]!, data[at + 1]!, data[at + 2]!];
      const [er, eg, eb] = q.rgb;
      expect(Math.abs(r - er!) + Math.abs(g - eg!) + Math.abs(b - eb!), `${q.id} at ${x},${y}`).toBeLessThan(24);
    }
  }
  await Promise.all(contexts.map((c) => c.close()));
});
