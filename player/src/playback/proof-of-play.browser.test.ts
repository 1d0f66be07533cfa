// Proof of play from the engine, in Chromium: every item that comes on glass is reported once as it
// starts, with its page, placement and manifest revision, and ended when it leaves: complete at the
// end of its turn, interrupted when a visibility rule cuts its page short or a clip is cut off.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { titledPng, webmClip } from '../../../e2e/support/media-fixtures';
import { images, manifest, page, PlayerFixture, videos, type EngineTestWindow } from '../testing/player-fixture';

const fixture = new PlayerFixture();
fixture.reportFailures();

beforeAll(async () => {
  await fixture.start();
  const pngs = await Promise.all(['#1b4d7a', '#7a3b1b'].map((c, i) => titledPng(320, 180, c, String(i))));
  fixture.media.set('med_imga', { body: pngs[0]!, type: 'image/png' });
  fixture.media.set('med_imgb', { body: pngs[1]!, type: 'image/png' });
  const clip = await webmClip(fixture.chromium, fixture.origin, {
    seconds: 2,
    width: 160,
    height: 90,
    color: '#2a7ab0',
  });
  fixture.media.set('med_vida', { body: clip, type: 'video/webm' });
}, 60_000);

afterAll(() => fixture.stop());

type Showing = EngineTestWindow['m']['records']['showings'][number];

async function showingsOnce(p: Page, count: number): Promise<Showing[]> {
  await p.waitForFunction(
    (n) => (window as unknown as EngineTestWindow).m.records.showings.filter((s) => s.outcome !== null).length >= n,
    count,
    { timeout: 20_000 },
  );
  return (await fixture.records(p)).showings;
}

describe('proof of play from the engine', () => {
  it('reports each item as it comes on glass and ends it, complete, when its turn ends', async () => {
    const p = await fixture.play(
      manifest([
        page('first', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 600 } }),
        page('second', [images('hero', ['med_imgb'])], { advance: { mode: 'duration', afterMs: 600 } }),
      ]),
    );
    const all = await showingsOnce(p, 3);
    expect(all.slice(0, 3).map((s) => [s.pageId, s.placementId, s.mediaId, s.manifestRevision, s.outcome])).toEqual([
      ['first', 'hero', 'med_imga', 'man_test', 'complete'],
      ['second', 'hero', 'med_imgb', 'man_test', 'complete'],
      ['first', 'hero', 'med_imga', 'man_test', 'complete'],
    ]);
    for (const s of all.slice(0, 3)) {
      // On glass for its turn (600 ms) plus the next page's transition over it.
      expect(s.endedAt! - s.startedAt).toBeGreaterThanOrEqual(550);
      expect(s.endedAt! - s.startedAt).toBeLessThan(2000);
    }
    // Never two showings of one placement at once: each starts after the one before it started.
    for (let i = 1; i < all.length; i++) expect(all[i]!.startedAt).toBeGreaterThan(all[i - 1]!.startedAt);
    await p.context().close();
  });

  it('ends the item of a page a visibility rule cuts short as interrupted', async () => {
    const noon = Date.parse('2026-03-02T11:00:00Z'); // 12:00 in Berlin
    const morning = page('morning', [images('hero', ['med_imga'])], {
      advance: { mode: 'duration', afterMs: 60_000 },
      visibility: {
        enabled: true,
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '12:00' }],
      },
    });
    const always = page('always', [images('hero', ['med_imgb'])], { advance: { mode: 'duration', afterMs: 60_000 } });
    const p = await fixture.play(manifest([morning, always], { timezone: 'Europe/Berlin' }), noon - 2500);
    const [cut] = await showingsOnce(p, 1);
    expect(cut).toMatchObject({ pageId: 'morning', mediaId: 'med_imga', outcome: 'interrupted' });
    expect(cut!.endedAt! - noon).toBeGreaterThanOrEqual(-5);
    await p.context().close();
  });

  it('ends a clip cut off by its page as interrupted, and one that played to its end as complete', async () => {
    const p = await fixture.play(
      manifest([
        page('short', [videos('clip', ['med_vida'])], { advance: { mode: 'duration', afterMs: 700 } }),
        page('whole', [videos('clip', ['med_vida'])], { advance: { mode: 'media_end', maxMs: 10_000 } }),
      ]),
    );
    const all = await showingsOnce(p, 2);
    expect(all.slice(0, 2).map((s) => [s.pageId, s.mediaId, s.outcome])).toEqual([
      ['short', 'med_vida', 'interrupted'],
      ['whole', 'med_vida', 'complete'],
    ]);
    expect(all[1]!.endedAt! - all[1]!.startedAt).toBeGreaterThanOrEqual(1800);
    await p.context().close();
  });
});
