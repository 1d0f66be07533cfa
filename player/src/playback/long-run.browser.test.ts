// A screen plays for months: whatever the engine holds (DOM, media elements, frames, timers,
// listeners, animations) must not grow with page turns or manifest changes. Pages turn fast here
// for a few hundred turns; the counts after are compared with the counts after the first ones.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { titledPng, webmClip } from '../../../e2e/support/media-fixtures';
import {
  application as applicationPlacement,
  images,
  manifest,
  page,
  PlayerFixture,
  videos,
  type EngineTestWindow,
} from '../testing/player-fixture';

const fixture = new PlayerFixture();
fixture.reportFailures();

beforeAll(async () => {
  await fixture.start();
  for (const [i, color] of ['#1b4d7a', '#7a3b1b', '#1b7a4d'].entries())
    fixture.media.set(`med_img${'abc'[i]}`, { body: await titledPng(320, 180, color, 'abc'[i]!), type: 'image/png' });
  fixture.media.set('med_vida', {
    body: await webmClip(fixture.chromium, fixture.origin, { seconds: 0.3, width: 160, height: 90, color: '#5b1b7a' }),
    type: 'video/webm',
  });
}, 60_000);

afterAll(() => fixture.stop());

interface Counts {
  elements: number;
  videos: number;
  iframes: number;
  timers: number;
  listeners: number;
  animations: number;
  turns: number;
  listenersByType: Record<string, number>;
}

/** Counts live timers and listeners from here on (the engine looks the globals up at each call). */
async function instrument(p: Page): Promise<void> {
  await p.evaluate(() => {
    const w = window as unknown as { live: { timers: Set<unknown>; listeners: Map<string, number> } };
    const timers = new Set<unknown>();
    const listeners = new Map<string, number>();
    w.live = { timers, listeners };
    const { setTimeout: st, clearTimeout: ct, setInterval: si, clearInterval: ci } = window;
    window.setTimeout = ((fn: () => void, ms?: number, ...rest: unknown[]) => {
      const id = st(() => {
        timers.delete(id);
        fn(...(rest as []));
      }, ms);
      timers.add(id);
      return id;
    }) as typeof window.setTimeout;
    window.clearTimeout = (id) => {
      timers.delete(id);
      ct(id);
    };
    window.setInterval = ((fn: () => void, ms?: number) => {
      const id = si(fn, ms);
      timers.add(id);
      return id;
    }) as typeof window.setInterval;
    window.clearInterval = (id) => {
      timers.delete(id);
      ci(id);
    };
    const key = (target: EventTarget, type: string) => `${target.constructor.name} ${type}`;
    const add = EventTarget.prototype.addEventListener;
    const remove = EventTarget.prototype.removeEventListener;
    const held = new WeakMap<object, Set<string>>();
    EventTarget.prototype.addEventListener = function (type, listener, options) {
      // A once listener removes itself: counted only while it is not yet called.
      if (listener && !(typeof options === 'object' && options.once)) {
        const set = held.get(listener) ?? new Set<string>();
        const k = `${key(this, type)}`;
        held.set(listener, set);
        set.add(k);
        listeners.set(k, (listeners.get(k) ?? 0) + 1);
      }
      return add.call(this, type, listener, options);
    };
    EventTarget.prototype.removeEventListener = function (type, listener, options) {
      const k = key(this, type);
      const set = listener ? held.get(listener) : undefined;
      if (set?.has(k)) listeners.set(k, (listeners.get(k) ?? 0) - 1);
      return remove.call(this, type, listener, options);
    };
  });
}

async function counts(p: Page): Promise<Counts> {
  return p.evaluate(() => {
    const w = window as unknown as EngineTestWindow & {
      live: { timers: Set<unknown>; listeners: Map<string, number> };
    };
    return {
      elements: document.querySelectorAll('*').length,
      videos: document.querySelectorAll('video').length,
      iframes: document.querySelectorAll('iframe').length,
      timers: w.live.timers.size,
      listeners: [...w.live.listeners.values()].reduce((a, b) => a + b, 0),
      animations: document.getAnimations().length,
      turns: w.m.changes.length,
      listenersByType: Object.fromEntries([...w.live.listeners].filter(([, n]) => n !== 0)),
    };
  });
}

/** At most a frame's worth more of anything (a timer or an animation caught mid-turn). */
function expectNoGrowth(before: Counts, after: Counts): void {
  for (const k of ['elements', 'videos', 'iframes', 'timers', 'listeners', 'animations'] as const)
    expect(after[k], `${k}: ${JSON.stringify(after.listenersByType)}`).toBeLessThanOrEqual(before[k] + 2);
}

async function waitForTurns(p: Page, turns: number): Promise<void> {
  await p.waitForFunction((n) => (window as unknown as EngineTestWindow).m.changes.length >= n, turns, {
    timeout: 20_000,
  });
}

const fast = {
  advance: { mode: 'duration' as const, afterMs: 20 },
  transition: { type: 'crossfade' as const, durationMs: 5 },
};

/** An application on the fixture's release host (a frame speaking the SDK bridge). */
const application = (id: string, revision: string) => applicationPlacement(id, fixture.releaseOrigin, { revision });

function loop(revision: string) {
  return manifest(
    [
      page('a', [images('hero', ['med_imga'], { revision })], fast),
      page('b', [images('hero', ['med_imgb', 'med_imgc'], { oneAtATime: true, revision })], fast),
      page('c', [videos('clip', ['med_vida'], { revision })], fast),
      page('d', [application('board', revision)], fast),
    ],
    { manifestRevision: revision },
  );
}

/** A fresh player page, instrumented, whose engine plays the loop as manifest `id`. */
async function playingLoop(id: string): Promise<Page> {
  const p = await fixture.open();
  await instrument(p);
  await p.evaluate(
    ({ m, releaseOrigin }) => {
      const w = window as unknown as EngineTestWindow;
      w.m = w.t.mountEngine({ start: Date.parse('2026-03-02T11:00:00Z'), releaseOrigin });
      w.m.engine.setManifest(m);
    },
    { m: loop(id), releaseOrigin: fixture.releaseOrigin },
  );
  return p;
}

describe('a screen that plays for months', () => {
  it('holds no more DOM, media elements, timers, listeners or animations after a hundred page turns', async () => {
    const p = await playingLoop('man_test');
    await waitForTurns(p, 15);
    const before = await counts(p);
    await waitForTurns(p, before.turns + 100);
    expectNoGrowth(before, await counts(p));
    // Every page played, the application's too.
    const shown = await p.evaluate(() => (window as unknown as EngineTestWindow).m.changes.map((c) => c.page));
    expect(new Set(shown.slice(before.turns))).toEqual(new Set(['a', 'b', 'c', 'd']));
    await p.close();
  });

  it('holds no more after dozens of manifest changes, each swapped in at a page boundary', async () => {
    const p = await playingLoop('man_0');
    const change = async (i: number) => {
      await p.evaluate((m) => (window as unknown as EngineTestWindow).m.engine.setManifest(m), loop(`man_${i}`));
      await p.waitForFunction(
        (r) => (window as unknown as EngineTestWindow).m.records.activated.includes(r),
        `man_${i}`,
      );
    };
    for (let i = 1; i <= 5; i++) await change(i);
    const before = await counts(p);
    // Changes faster than they can swap in (each replaces the one still preparing), mid-transition too.
    for (let i = 6; i <= 100; i++) {
      await p.evaluate((m) => (window as unknown as EngineTestWindow).m.engine.setManifest(m), loop(`man_${i}`));
      await new Promise((r) => setTimeout(r, i % 7));
    }
    for (let i = 101; i <= 110; i++) await change(i);
    expectNoGrowth(before, await counts(p));
    await p.close();
  });
});
