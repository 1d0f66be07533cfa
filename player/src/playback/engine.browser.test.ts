// The playback engine in Chromium: pages and placements as DOM, sampled on every animation frame on
// a playback clock the test controls. What is on glass is read the way a viewer sees it: the live
// page on top, and in each placement the topmost visible element and whether it can paint.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import { titledPng, webmClip } from '../../../e2e/support/media-fixtures';
import type { Sample } from '../testing/engine-entry';
import { UPCOMING_GRACE_MS } from './upcoming';
import { images, manifest, page, PlayerFixture, videos, type EngineTestWindow } from '../testing/player-fixture';

const fixture = new PlayerFixture();
fixture.reportFailures();
const COLORS = ['#1b4d7a', '#7a3b1b', '#1b7a4d', '#5b1b7a', '#7a1b5b', '#4d7a1b'];

beforeAll(async () => {
  await fixture.start();
  const pngs = await Promise.all(COLORS.map((color, i) => titledPng(320, 180, color, String.fromCharCode(65 + i))));
  pngs.forEach((body, i) => fixture.media.set(`med_img${String.fromCharCode(97 + i)}`, { body, type: 'image/png' }));
  const clips = await Promise.all(
    COLORS.slice(0, 3).map((color) =>
      webmClip(fixture.chromium, fixture.origin, { seconds: 0.8, width: 160, height: 90, color }),
    ),
  );
  clips.forEach((body, i) => fixture.media.set(`med_vid${String.fromCharCode(97 + i)}`, { body, type: 'video/webm' }));
}, 60_000);

afterAll(() => fixture.stop());

type TestWindow = EngineTestWindow;

const play = (m: RuntimeManifest, start?: number) => fixture.play(m, start);
const samples = (p: Page) => fixture.samples(p);
const records = (p: Page) => fixture.records(p);

/** Consecutive runs of what `key` reads from the samples: [value, first sample of the run]. */
function runs(all: Sample[], key: (s: Sample) => string | null): Array<[string, Sample]> {
  const out: Array<[string, Sample]> = [];
  for (const s of all) {
    const value = key(s);
    if (value !== null && value !== out.at(-1)?.[0]) out.push([value, s]);
  }
  return out;
}

/** Samples from the first frame with a live page on. */
function onGlass(all: Sample[]): Sample[] {
  return all.slice(all.findIndex((s) => s.page !== null));
}

async function waitForRuns(
  p: Page,
  key: (s: Sample) => string | null,
  count: number,
  timeoutMs = 15_000,
): Promise<Sample[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const all = await samples(p);
    if (runs(all, key).length >= count) return all;
    if (Date.now() > deadline)
      throw new Error(
        `only ${runs(all, key)
          .map(([v]) => v)
          .join(' ')}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

const hero = (s: Sample) => s.shown.hero ?? null;

describe('a page that comes round again', () => {
  it('advances a one-at-a-time selector to the next item each turn, each prepared before its boundary', async () => {
    const p = await play(
      manifest([
        page('only', [images('hero', ['med_imga', 'med_imgb', 'med_imgc'], { oneAtATime: true })], {
          advance: { mode: 'duration', afterMs: 400 },
        }),
      ]),
    );
    const all = onGlass(await waitForRuns(p, hero, 7));
    expect(
      runs(all, hero)
        .map(([v]) => v)
        .slice(0, 7),
    ).toEqual(['med_imga', 'med_imgb', 'med_imgc', 'med_imga', 'med_imgb', 'med_imgc', 'med_imga']);
    await fixture.screenshot(p, 'engine-rotation.png');
    // Never a frame without a decoded image: the turn's item was ready before the boundary.
    expect(all.filter((s) => !s.painted)).toEqual([]);
    await p.context().close();
  });

  it('restarts a media_end image sequence from its first image on every turn', async () => {
    const p = await play(
      manifest([
        page('only', [images('hero', ['med_imga', 'med_imgb', 'med_imgc'], { dwellMs: 250 })], {
          advance: { mode: 'media_end', maxMs: 60_000 },
        }),
      ]),
    );
    const all = onGlass(await waitForRuns(p, hero, 7));
    expect(
      runs(all, hero)
        .map(([v]) => v)
        .slice(0, 7),
    ).toEqual(['med_imga', 'med_imgb', 'med_imgc', 'med_imga', 'med_imgb', 'med_imgc', 'med_imga']);
    expect(all.filter((s) => !s.painted)).toEqual([]);
    await p.context().close();
  });

  it('restarts a media_end video sequence from its first clip, with no frame of the last clip over it', async () => {
    const p = await play(
      manifest([
        page('only', [videos('hero', ['med_vida', 'med_vidb', 'med_vidc'])], {
          advance: { mode: 'media_end', maxMs: 60_000 },
        }),
      ]),
    );
    const all = onGlass(await waitForRuns(p, hero, 7, 20_000));
    const seen = runs(all, hero);
    expect(seen.map(([v]) => v).slice(0, 7)).toEqual([
      'med_vida',
      'med_vidb',
      'med_vidc',
      'med_vida',
      'med_vidb',
      'med_vidc',
      'med_vida',
    ]);
    await fixture.screenshot(p, 'engine-video-sequence.png');
    // Each turn's first clip is on top from (nearly) its first frame, and plays from its start.
    for (const [value, first] of seen.slice(3))
      if (value === 'med_vida') expect(first.videoTime.hero).toBeLessThan(0.25);
    expect(all.filter((s) => !s.painted)).toEqual([]);
    await p.context().close();
  });
});

describe('image sequences on the playback clock', () => {
  it('times each image from the fill (not the transition start) and does not drift after a stall', async () => {
    const transition = 400;
    const dwell = 200;
    const ids = ['med_imga', 'med_imgb', 'med_imgc', 'med_imgd', 'med_imge', 'med_imgf'];
    const p = await play(
      manifest([
        page('seq', [images('hero', ids, { dwellMs: dwell })], {
          transition: { type: 'crossfade', durationMs: transition },
          advance: { mode: 'media_end', maxMs: 60_000 },
        }),
        page('after', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 60_000 } }),
      ]),
    );
    // Block the main thread for 350 ms while the third image shows: timers fire late. (Margins
    // below allow for a loaded machine; chained timers would be late by the whole stall.)
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.shown.hero === 'med_imgc'));
    await p.evaluate(() => {
      const until = performance.now() + 350;
      while (performance.now() < until);
    });
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'after'),
      undefined,
      { timeout: 30_000 },
    );
    const all = onGlass(await samples(p));
    const start = all[0]!.t;
    const fill = start + transition;
    const shownAt = new Map(
      runs(
        all.filter((s) => s.page === 'seq'),
        hero,
      ).map(([v, s]) => [v, s.t]),
    );
    // The second image comes dwell_ms after the fill: the first is fully visible for its whole dwell.
    expect(shownAt.get('med_imgb')! - fill).toBeGreaterThanOrEqual(dwell - 20);
    expect(shownAt.get('med_imgb')! - fill).toBeLessThan(dwell + 150);
    // After the stall the sequence is back on its schedule: fill + k * dwell, not pushed back by 350 ms.
    for (const [k, id] of ids.entries()) {
      if (k < 4) continue;
      expect(shownAt.get(id)! - (fill + k * dwell), id).toBeLessThan(150);
    }
    // The page ends when the last image's dwell ends.
    const leftAt = all.find((s) => s.page === 'after')!.t;
    expect(leftAt - (fill + ids.length * dwell)).toBeLessThan(150);
    expect(leftAt - (fill + ids.length * dwell)).toBeGreaterThanOrEqual(-20);
    await p.context().close();
  });
});

describe('visibility boundaries', () => {
  const always = page('always', [images('hero', ['med_imgb'])], { advance: { mode: 'duration', afterMs: 60_000 } });

  /** When `to` first came on glass after `from`, on the playback clock. */
  function switchAt(all: Sample[], from: string, to: string): number {
    const i = all.findIndex((s, k) => k > 0 && s.page === to && all[k - 1]!.page === from);
    expect(i, `${from} → ${to}`).toBeGreaterThan(0);
    return all[i]!.t;
  }

  it('ends a page exactly when its rule stops holding', async () => {
    const noon = Date.parse('2026-03-02T11:00:00Z'); // 12:00 in Berlin (UTC+1)
    const morning = page('morning', [images('hero', ['med_imga'])], {
      advance: { mode: 'duration', afterMs: 60_000 },
      visibility: {
        enabled: true,
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '12:00' }],
      },
    });
    const p = await play(manifest([morning, always], { timezone: 'Europe/Berlin' }), noon - 3000);
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'always'),
      undefined,
      { timeout: 15_000 },
    );
    const at = switchAt(onGlass(await samples(p)), 'morning', 'always');
    expect(at - noon).toBeGreaterThanOrEqual(-5);
    expect(at - noon).toBeLessThan(300);
    await p.context().close();
  });

  it('judges a rule edge at its instant even when its timer fires a little early', async () => {
    const noon = Date.parse('2026-03-02T11:00:00Z'); // 12:00 in Berlin (UTC+1)
    const morning = page('morning', [images('hero', ['med_imga'])], {
      advance: { mode: 'duration', afterMs: 60_000 },
      visibility: {
        enabled: true,
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '12:00' }],
      },
    });
    const p = await fixture.open();
    await p.evaluate(
      ({ m, start, releaseOrigin }) => {
        const w = window as unknown as TestWindow;
        w.m = w.t.mountEngine({ start, releaseOrigin });
        // As on a loaded machine: a timer of a second or more fires 2 ms before its time, and its
        // callback takes 3 ms, so its first reading of the clock is early and the next ones late.
        const clock = w.m.clock;
        const read = clock.now.bind(clock);
        let readsInEarlyTimer: number | null = null;
        clock.now = () => (readsInEarlyTimer === null || readsInEarlyTimer++ === 0 ? read() : read() + 3);
        const setTimer = window.setTimeout.bind(window);
        (window as unknown as { setTimeout: (fn: () => void, ms?: number) => number }).setTimeout = (fn, ms = 0) =>
          ms < 1000
            ? setTimer(fn, ms)
            : setTimer(() => {
                readsInEarlyTimer = 0;
                try {
                  fn();
                } finally {
                  readsInEarlyTimer = null;
                }
              }, ms - 2);
        w.m.engine.setManifest(m);
      },
      {
        m: manifest([morning, always], { timezone: 'Europe/Berlin' }),
        start: noon - 3000,
        releaseOrigin: fixture.releaseOrigin,
      },
    );
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'always'),
      undefined,
      { timeout: 15_000 },
    );
    const at = switchAt(onGlass(await samples(p)), 'morning', 'always');
    expect(at - noon).toBeGreaterThanOrEqual(-5);
    expect(at - noon).toBeLessThan(300);
    await p.context().close();
  });

  it('never starts a page whose rule ended while it was being prepared', async () => {
    const noon = Date.parse('2026-03-02T11:00:00Z'); // 12:00 in Berlin (UTC+1)
    // Picked 100 ms before the edge, its image arrives 300 ms after it: the page is ready only once its rule has ended.
    fixture.media.set('med_late', { ...fixture.media.get('med_imga')!, delayMs: 400 });
    const morning = page('morning', [images('hero', ['med_late'])], {
      advance: { mode: 'duration', afterMs: 60_000 },
      visibility: {
        enabled: true,
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '12:00' }],
      },
    });
    const p = await play(manifest([morning, always], { timezone: 'Europe/Berlin' }), noon - 100);
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'always'),
      undefined,
      { timeout: 15_000 },
    );
    const late = (await samples(p)).filter((s) => s.page === 'morning' && s.t >= noon + 5);
    expect(late).toEqual([]);
    await p.context().close();
  });

  it('sees a rule edge at the instant of a DST change (03:00 in Berlin on 29 March 2026 is 01:00 UTC)', async () => {
    const change = Date.parse('2026-03-29T01:00:00Z'); // 02:00 CET becomes 03:00 CEST
    const everyDay = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
    const night = page('night', [images('hero', ['med_imga'])], {
      advance: { mode: 'duration', afterMs: 60_000 },
      visibility: { enabled: true, windows: [{ days: [...everyDay], start: '00:00', end: '03:00' }] },
    });
    const day = page('day', [images('hero', ['med_imgc'])], {
      advance: { mode: 'duration', afterMs: 60_000 },
      visibility: { enabled: true, windows: [{ days: [...everyDay], start: '03:00', end: '23:00' }] },
    });
    const p = await play(manifest([night, day, always], { timezone: 'Europe/Berlin' }), change - 3000);
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'day'),
      undefined,
      { timeout: 15_000 },
    );
    // Night ends and day (now visible) follows at once: an hour later would mean a fixed UTC+1 reading.
    const at = switchAt(onGlass(await samples(p)), 'night', 'day');
    expect(at - change).toBeGreaterThanOrEqual(-5);
    expect(at - change).toBeLessThan(300);
    await p.context().close();
  });
});

describe('swapping manifests', () => {
  it('swaps to a new manifest at a page boundary once its first page is ready, reporting each on glass once', async () => {
    const segmentMs = 200 + 700;
    const first = manifest(
      [
        page('a1', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 700 } }),
        page('a2', [images('hero', ['med_imgb'])], { advance: { mode: 'duration', afterMs: 700 } }),
      ],
      { manifestRevision: 'man_a' },
    );
    fixture.media.set('med_slow', { body: fixture.media.get('med_imgc')!.body, type: 'image/png', delayMs: 1500 });
    const second = manifest(
      [
        page('b1', [images('hero', ['med_slow'], { revision: 'man_b' })], {
          advance: { mode: 'duration', afterMs: 60_000 },
        }),
      ],
      { manifestRevision: 'man_b' },
    );
    const p = await play(first);
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'a1'));
    await p.waitForTimeout(300);
    const setAt = await p.evaluate((m) => {
      const w = window as unknown as TestWindow;
      w.m.engine.setManifest(m);
      return w.m.clock.now();
    }, second);
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'b1'), undefined, {
      timeout: 30_000,
    });
    await p.waitForTimeout(300);
    const all = onGlass(await samples(p));
    const start = all[0]!.t;
    const b1 = all.find((s) => s.page === 'b1')!;
    // Not before its image arrived, and on a boundary of the old loop.
    expect(b1.t - setAt).toBeGreaterThanOrEqual(1500);
    const phase = (b1.t - start) % segmentMs;
    expect(Math.min(phase, segmentMs - phase)).toBeLessThan(150);
    // The old manifest played on meanwhile: never a frame without content.
    expect(all.filter((s) => !s.painted)).toEqual([]);
    expect((await records(p)).activated).toEqual(['man_a', 'man_b']);
    expect(await p.locator('.loop').count()).toBe(1);
    await p.context().close();
  });

  it('cuts in when a takeover starts, is replaced and ends, without waiting for the long page on glass', async () => {
    const long = { advance: { mode: 'duration' as const, afterMs: 60_000 } };
    const assigned = manifest([page('a1', [images('hero', ['med_imga'])], long)], {
      manifestRevision: 'man_a',
      playlistId: 'pl_lobby',
    });
    const alert = manifest([page('alert', [images('hero', ['med_imgd'], { revision: 'man_t' })], long)], {
      manifestRevision: 'man_t',
      playlistId: 'pl_alert',
      takeover: true,
    });
    // A second takeover replacing the first (a drill, then the real alert).
    const urgent = manifest([page('urgent', [images('hero', ['med_imgb'], { revision: 'man_u' })], long)], {
      manifestRevision: 'man_u',
      playlistId: 'pl_urgent',
      takeover: true,
    });
    const back = manifest([page('b1', [images('hero', ['med_imge'], { revision: 'man_c' })], long)], {
      manifestRevision: 'man_c',
      playlistId: 'pl_lobby',
      playlistRevision: 2,
    });
    const p = await play(assigned);
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'a1'));
    const setManifest = (m: RuntimeManifest) =>
      p.evaluate((next) => {
        const w = window as unknown as TestWindow;
        w.m.engine.setManifest(next);
        return w.m.clock.now();
      }, m);
    const onGlassWithin = async (pageId: string, since: number) => {
      await p.waitForFunction((id) => (window as unknown as TestWindow).m.samples.some((s) => s.page === id), pageId, {
        timeout: 10_000,
      });
      return (await samples(p)).find((s) => s.page === pageId)!.t - since;
    };
    // The takeover replaces a page with 60 s still to play as soon as its image is ready ...
    expect(await onGlassWithin('alert', await setManifest(alert))).toBeLessThan(3000);
    // ... another takeover replacing it cuts in too ...
    expect(await onGlassWithin('urgent', await setManifest(urgent))).toBeLessThan(3000);
    // ... and its end gives the screen back the same way.
    expect(await onGlassWithin('b1', await setManifest(back))).toBeLessThan(3000);
    // Activated once its first page's transition finished.
    await p.waitForFunction(() => (window as unknown as TestWindow).m.records.activated.includes('man_c'));
    const all = onGlass(await samples(p));
    expect(all.filter((s) => !s.painted)).toEqual([]);
    expect((await records(p)).activated).toEqual(['man_a', 'man_t', 'man_u', 'man_c']);
    // The pages cut short are reported as such in proof of play.
    const outcomes = (await records(p)).showings.map((s) => [s.pageId, s.outcome]);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        ['a1', 'interrupted'],
        ['alert', 'interrupted'],
        ['urgent', 'interrupted'],
      ]),
    );
    await p.context().close();
  });

  it('keeps an ordinary change of playlist for the page boundary (no takeover on either side)', async () => {
    const long = { advance: { mode: 'duration' as const, afterMs: 60_000 } };
    const p = await play(
      manifest([page('a1', [images('hero', ['med_imga'])], long)], { manifestRevision: 'man_a', playlistId: 'pl_a' }),
    );
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'a1'));
    const other = manifest([page('b1', [images('hero', ['med_imgb'], { revision: 'man_b' })], long)], {
      manifestRevision: 'man_b',
      playlistId: 'pl_b',
    });
    await p.evaluate((m) => (window as unknown as TestWindow).m.engine.setManifest(m), other);
    await p.waitForTimeout(2500);
    expect((await samples(p)).some((s) => s.page === 'b1')).toBe(false);
    await p.context().close();
  });

  it("plays the upcoming pages from the manifest's boundary, until the reminted revision replaces them", async () => {
    const start = Date.parse('2026-03-02T11:00:00Z');
    const at = new Date(start + 1500).toISOString();
    const short = { advance: { mode: 'duration' as const, afterMs: 300 } };
    const served = manifest([page('a1', [images('hero', ['med_imga'])], short)], {
      manifestRevision: 'man_a',
      nextBoundaryAt: at,
      upcoming: {
        at,
        playlistId: 'pl_next',
        playlistRevision: 3,
        pages: [page('u1', [images('hero', ['med_imgb'], { revision: 'man_a' })], short)],
      },
    });
    const p = await play(served, start);
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'u1'), undefined, {
      timeout: 15_000,
    });
    const all = onGlass(await samples(p));
    const u1 = all.find((s) => s.page === 'u1')!;
    // Not before the boundary, and at the first page boundary after it (a1 turns every 500 ms).
    expect(u1.t).toBeGreaterThanOrEqual(start + 1500 + UPCOMING_GRACE_MS);
    expect(u1.t).toBeLessThan(start + 1500 + UPCOMING_GRACE_MS + 1200);
    expect(all.filter((s) => s.t >= u1.t).every((s) => s.page === 'u1')).toBe(true);
    // The same revision again (a capability refresh, a restart from disk) stays on the derived loop.
    await p.evaluate((m) => (window as unknown as TestWindow).m.engine.setManifest(m), served);
    // The reminted revision replaces it at a page boundary.
    const reminted = manifest([page('b1', [images('hero', ['med_imgc'], { revision: 'man_b' })], short)], {
      manifestRevision: 'man_b',
    });
    await p.evaluate((m) => (window as unknown as TestWindow).m.engine.setManifest(m), reminted);
    // Activated once its first page's transition finished.
    await p.waitForFunction(() => (window as unknown as TestWindow).m.records.activated.includes('man_b'), undefined, {
      timeout: 15_000,
    });
    const recorded = await records(p);
    // The derived loop is told apart (the host reports no activation for it) ...
    expect(recorded.activated).toEqual(['man_a', 'man_a derived', 'man_b']);
    // ... and its proof of play names the real revision whose grant covers its media.
    expect(recorded.showings.find((s) => s.pageId === 'u1')).toMatchObject({
      manifestRevision: 'man_a',
      mediaId: 'med_imgb',
    });
    expect(all.filter((s) => !s.painted)).toEqual([]);
    await p.context().close();
  });

  it('holds the page on glass when the next one cannot get ready (never a blank frame)', async () => {
    const p = await play(
      manifest([
        page('ok', [images('hero', ['med_imga', 'med_imgb'], { oneAtATime: true })], {
          advance: { mode: 'duration', afterMs: 400 },
        }),
        page('broken', [images('hero', ['med_missing'])], { advance: { mode: 'duration', afterMs: 400 } }),
      ]),
    );
    const all = onGlass(await waitForRuns(p, hero, 4));
    expect(all.some((s) => s.page === 'broken')).toBe(false);
    expect(
      runs(all, hero)
        .map(([v]) => v)
        .slice(0, 4),
    ).toEqual(['med_imga', 'med_imgb', 'med_imga', 'med_imgb']);
    expect(all.filter((s) => !s.painted)).toEqual([]);
    await p.context().close();
  });
});

/** MediaError.MEDIA_ERR_SRC_NOT_SUPPORTED: what a clip whose server refused it reads. */
const MEDIA_ERR_SRC_NOT_SUPPORTED = 4;

describe('media that fail for a while', () => {
  const short = { advance: { mode: 'duration' as const, afterMs: 300 } };
  const mediaRequests = (id: string) => fixture.mediaRequests.get(id) ?? 0;

  it('shows an image again once it answers: the failed one is fetched anew, not waited on', async () => {
    const png = fixture.media.get('med_imgb')!;
    fixture.media.set('med_flaky', { ...png, status: 503 });
    const p = await play(
      manifest([
        page('ok', [images('hero', ['med_imga'])], short),
        page('flaky', [images('hero', ['med_flaky'])], short),
      ]),
    );
    await waitForRuns(p, hero, 1);
    await expect.poll(() => mediaRequests('med_flaky')).toBeGreaterThanOrEqual(1);
    // The server answers again; the failed page's retry delay (on the playback clock) passes.
    fixture.media.set('med_flaky', png);
    await p.evaluate(() => (window as unknown as TestWindow).m.clock.shift(31_000));
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.changes.some((c) => c.page === 'flaky'),
      undefined,
      {
        timeout: 10_000,
      },
    );
    expect(mediaRequests('med_flaky')).toBeGreaterThanOrEqual(2);
    await p.context().close();
  });

  it('plays a clip on glass again after its element failed (a one-page loop never cools it)', async () => {
    const clip = fixture.media.get('med_vida')!;
    fixture.media.set('med_flakyclip', clip);
    const p = await play(manifest([page('only', [videos('clip', ['med_flakyclip'])], short)]));
    await p.waitForFunction(() => (window as unknown as TestWindow).m.samples.some((s) => s.painted));
    // The element fetches its bytes again (a browser drops the buffer of a long clip) while the
    // server is away: it fails, with the page still on glass.
    fixture.media.set('med_flakyclip', { ...clip, status: 503 });
    // (Without the cache, as for a clip too long to keep: the browser would answer from memory.)
    const cdp = await p.context().newCDPSession(p);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const failure = await p.evaluate(async () => {
      const video = document.querySelector('video')!;
      video.load();
      await new Promise((resolve) => {
        video.addEventListener('error', resolve, { once: true });
        setTimeout(resolve, 2000);
      });
      return video.error?.code;
    });
    expect(failure).toBe(MEDIA_ERR_SRC_NOT_SUPPORTED);
    fixture.media.set('med_flakyclip', clip);
    const failedAt = await p.evaluate(() => (window as unknown as TestWindow).m.samples.length);
    // The next turns load it again: it plays (paints, and its time moves) within a few turns.
    await p.waitForFunction(
      (from) => {
        const after = (window as unknown as TestWindow).m.samples.slice(from);
        return after.some((s) => s.painted && (s.videoTime.clip ?? 0) > 0.05);
      },
      failedAt,
      { timeout: 10_000 },
    );
    await p.context().close();
  });
});
