// Application placements in the engine, in Chromium: real frames on a release host speaking the SDK
// bridge (the classic runtime built from source), a fake launch route that numbers each launch, and
// what is on glass sampled every frame.
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import { titledPng } from '../../../e2e/support/media-fixtures';
import {
  application as applicationPlacement,
  images,
  manifest,
  page,
  PlayerFixture,
  type EngineTestWindow,
} from '../testing/player-fixture';

const fixture = new PlayerFixture();
fixture.reportFailures();
beforeAll(async () => {
  await fixture.start();
  fixture.media.set('med_imga', { body: await titledPng(320, 180, '#1b4d7a', 'Image'), type: 'image/png' });
}, 60_000);
afterAll(() => fixture.stop());

type TestWindow = EngineTestWindow;

const application = (id: string, options: { grantId?: string; controller?: boolean } = {}) =>
  applicationPlacement(id, fixture.releaseOrigin, {
    grantId: options.grantId,
    controller: options.controller ?? true,
    capabilityExpiresAt: '2026-03-02T11:05:00Z',
  });

const play = (m: RuntimeManifest, start?: number) => fixture.play(m, start);
const samples = (p: Page) => fixture.samples(p);
const records = (p: Page) => fixture.records(p);

function launchFrame(p: Page, launch: number): Frame | undefined {
  return p.frames().find((f) => f.url().includes(`launch=${launch}`));
}

describe('page.advance', () => {
  it('ends only the page on glass: a late advance from the outgoing page does not cut the incoming one short', async () => {
    const p = await play(
      manifest([
        page('one', [application('board')], { advance: { mode: 'application', maxMs: 1200 } }),
        page('two', [application('board')], {
          transition: { type: 'crossfade', durationMs: 1000 },
          advance: { mode: 'application', maxMs: 2500 },
        }),
      ]),
    );
    // Page one ends by its backstop (its app never asked); during the crossfade to page two, page
    // one's app asks for the next page.
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'two'),
      undefined,
      { timeout: 30_000 },
    );
    const outgoing = launchFrame(p, 1)!;
    await outgoing.evaluate(() =>
      (window as unknown as { marquee: { page: { advance(): Promise<void> } } }).marquee.page.advance(),
    );
    await p.waitForFunction(
      () =>
        (window as unknown as TestWindow).m.samples.some(
          (s, i, all) => s.page === 'one' && all.slice(0, i).some((e) => e.page === 'two'),
        ),
      undefined,
      { timeout: 30_000 },
    );
    const all = await samples(p);
    const twoFrom = all.find((s) => s.page === 'two')!.t;
    const twoUntil = all.find((s) => s.t > twoFrom && s.page === 'one')!.t;
    // Two runs its whole turn: 1000 ms transition + 2500 ms backstop.
    expect(twoUntil - twoFrom).toBeGreaterThan(3400);
    await p.context().close();
    // The waits above allow a slow first launch of each frame (a loaded machine); the turn's length is what is asserted.
  }, 90_000);

  it('ends the page on glass when its controller asks', async () => {
    const p = await play(
      manifest([
        page('one', [application('board')], { advance: { mode: 'application', maxMs: 60_000 } }),
        page('two', [application('other')], { advance: { mode: 'duration', afterMs: 60_000 } }),
      ]),
    );
    await p.waitForFunction(
      () =>
        (window as unknown as TestWindow).m.samples.some(
          (s) => s.page === 'one' && s.shown.board?.startsWith('launch:'),
        ),
      undefined,
      { timeout: 30_000 },
    );
    await launchFrame(p, 1)!.evaluate(() =>
      (window as unknown as { marquee: { page: { advance(): Promise<void> } } }).marquee.page.advance(),
    );
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'two'),
      undefined,
      { timeout: 5_000 },
    );
    await p.context().close();
  });
});

describe('an application that does not start', () => {
  it('is skipped, and the log says where its launch stopped', async () => {
    const p = await fixture.play(
      manifest([
        page('app', [application('board')], { advance: { mode: 'application', maxMs: 5000 } }),
        page('img', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 2000 } }),
      ]),
      undefined,
      '/never.html',
    );
    // The release page never arrives: after the launch's 15 s the loop plays on.
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'img'),
      undefined,
      { timeout: 40_000 },
    );
    const { logs } = await records(p);
    expect(logs).toContainEqual(
      expect.stringMatching(
        /^page app: placement board is not ready: TimeoutError: application launch \(waiting for the frame loading\) did not finish within 15000 ms$/,
      ),
    );
    expect((await samples(p)).filter((s) => s.page === 'app')).toEqual([]);
    await p.context().close();
  }, 90_000);
});

describe('an application without the SDK bridge', () => {
  it('plays once its page has loaded, as any page would, and the log says it has no bridge', async () => {
    const p = await fixture.play(
      manifest([
        page('app', [application('board')], { advance: { mode: 'application', maxMs: 3000 } }),
        page('img', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 2000 } }),
      ]),
      undefined,
      '/silent.html',
    );
    // Its page loads and never answers the handshake: it comes on glass after the bridge's grace,
    // plays to its page's maximum (no page.advance without a bridge), and the loop goes on.
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'img'),
      undefined,
      { timeout: 30_000 },
    );
    const shown = (await samples(p)).filter((s) => s.page === 'app');
    expect(shown.length).toBeGreaterThan(0);
    const { logs } = await records(p);
    expect(logs).toContainEqual(
      expect.stringMatching(/its release did not answer the SDK bridge; it plays without one/),
    );
    expect(logs.filter((l) => l.includes('is not ready'))).toEqual([]);
    await p.context().close();
  }, 60_000);
});

describe('application relaunch', () => {
  const appPage = (grantId: string, maxMs: number) =>
    page('app', [application('board', { grantId })], { advance: { mode: 'application', maxMs } });

  it('relaunches a frame whose grant changed: the new frame warms behind and takes over at the next turn', async () => {
    const first = manifest([
      appPage('gr_first', 700),
      page('img', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 500 } }),
    ]);
    const p = await play(first);
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'img'),
      undefined,
      { timeout: 30_000 },
    );
    // A rotation: the same revision, a new grant and content generation.
    const second = manifest(
      [
        appPage('gr_second', 700),
        page('img', [images('hero', ['med_imga'])], { advance: { mode: 'duration', afterMs: 500 } }),
      ],
      { grantId: 'gr_second', contentGeneration: 2 },
    );
    await p.evaluate((m) => (window as unknown as TestWindow).m.engine.setManifest(m), second);
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.shown.board === 'launch:2'),
      undefined,
      { timeout: 30_000 },
    );
    await p.waitForTimeout(1500);
    expect((await records(p)).launches).toHaveLength(2);
    const all = await samples(p);
    // The new frame came on glass with its page (a turn start), never in the middle of a turn.
    const swap = all.findIndex((s) => s.shown.board === 'launch:2');
    expect(all[swap - 1]!.page).toBe('img');
    // Never an application page without its frame on glass.
    expect(all.filter((s) => s.page === 'app' && (s.shown.board === null || !s.painted))).toEqual([]);
    // The old frame is gone.
    expect(p.frames().filter((f) => f.url().includes('launch=1'))).toEqual([]);
    await p.context().close();
  });

  it('relaunches a frame well before its grant lapses, on a page that only comes round again', async () => {
    const p = await play(manifest([appPage('gr_first', 500)]));
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.shown.board === 'launch:1'),
      undefined,
      { timeout: 30_000 },
    );
    await p.waitForTimeout(1200);
    expect((await records(p)).launches).toHaveLength(1);
    // Thirteen hours later (the grant lasts 24): relaunched at a turn, with no gap on glass.
    await p.evaluate(() => (window as unknown as TestWindow).m.clock.shift(13 * 3600_000));
    await p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.shown.board === 'launch:2'),
      undefined,
      { timeout: 30_000 },
    );
    await p.waitForTimeout(1200);
    expect((await records(p)).launches).toHaveLength(2);
    const all = await samples(p);
    expect(all.filter((s) => s.page !== null && (s.shown.board === null || !s.painted))).toEqual([]);
    await fixture.screenshot(p, 'engine-application-relaunched.png');
    await p.context().close();
  });
});

describe('viewport changes', () => {
  type AppWindow = { contexts: number[]; viewports: unknown[] };
  const onGlass = (p: Page) =>
    p.waitForFunction(
      () => (window as unknown as TestWindow).m.samples.some((s) => s.shown.board === 'launch:1'),
      undefined,
      { timeout: 30_000 },
    );

  it('reach the app on glass as soon as the player resizes', async () => {
    const p = await play(
      manifest([page('app', [application('board')], { advance: { mode: 'application', maxMs: 60_000 } })]),
    );
    await onGlass(p);
    const frame = launchFrame(p, 1)!;
    await p.setViewportSize({ width: 800, height: 450 });
    await frame.waitForFunction(() => (window as unknown as AppWindow).viewports.length > 0, undefined, {
      timeout: 5_000,
    });
    expect(await frame.evaluate(() => (window as unknown as AppWindow).viewports)).toEqual([
      { viewport: { width: 800, height: 450 }, placement: { width: 1920, height: 1080 } },
    ]);
    // Still the first activation: the page did not have to come round again for the app to hear it.
    expect(await frame.evaluate(() => (window as unknown as AppWindow).contexts)).toEqual([1]);
    await p.context().close();
  }, 60_000);

  it('are not reported when nothing changed size, however often the page comes round', async () => {
    const p = await play(
      manifest([page('app', [application('board')], { advance: { mode: 'application', maxMs: 500 } })]),
    );
    await onGlass(p);
    const frame = launchFrame(p, 1)!;
    await frame.waitForFunction(() => (window as unknown as AppWindow).contexts.length >= 3, undefined, {
      timeout: 10_000,
    });
    expect(await frame.evaluate(() => (window as unknown as AppWindow).viewports)).toEqual([]);
    await p.context().close();
  }, 60_000);
});
