// Browser players as members of a sync group, for the lockstep spec and benchmark: each in a
// browser context of its own whose wall clock is shifted (Date and performance.timeOrigin, as a
// device whose clock is wrong), whose exchanges with the server clock cross a jittery network
// (a random delay each way), and which records every page it puts on glass with the true time of
// the animation frame that showed it (all members run on this machine: one true clock).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ControlApi } from './control-api';

export interface MemberOptions {
  /** How far this device's wall clock is off (ms). */
  clockShiftMs: number;
  /** Each way of every server-clock exchange is delayed by a random 0…jitterMs. */
  jitterMs: number;
  viewport?: { width: number; height: number };
}

/** A page the member put on glass, and the true time (ms since the epoch) of the frame that showed it. */
export interface Change {
  page: string;
  at: number;
}

export interface LockstepWindow {
  lockstep: { changes: Change[]; frames: number; trueNow(): number; clockShiftMs: number };
}

/** Installed before the player's scripts: the shifted clock and the page-change recorder. */
const MEMBER_SCRIPT = (clockShiftMs: number) => {
  const trueOrigin = performance.timeOrigin;
  const RealDate = Date;
  // A device whose clock is off: every wall-clock reading the page makes is shifted.
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + clockShiftMs);
      else super(...(args as [number]));
    }
    static override now(): number {
      return RealDate.now() + clockShiftMs;
    }
  }
  (window as unknown as { Date: DateConstructor }).Date = ShiftedDate as unknown as DateConstructor;
  Object.defineProperty(performance, 'timeOrigin', { get: () => trueOrigin + clockShiftMs });
  const state = {
    changes: [] as Array<{ page: string; at: number }>,
    frames: 0,
    trueNow: () => trueOrigin + performance.now(),
    clockShiftMs,
  };
  (window as unknown as { lockstep: typeof state }).lockstep = state;
  const byZ = (el: HTMLElement) => Number(el.style.zIndex || 0);
  let shown: string | undefined;
  const look = () => {
    const live = [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')]
      .sort((a, b) => byZ(a) - byZ(b))
      .at(-1)?.dataset.pageId;
    if (live && live !== shown) {
      // The frame the change paints in: a change made in a frame callback is painted in that frame.
      state.changes.push({ page: live, at: trueOrigin + Number(document.timeline.currentTime) });
    }
    shown = live;
  };
  const observe = () =>
    new MutationObserver(look).observe(document.documentElement, {
      subtree: true,
      attributes: true,
      attributeFilter: ['data-state', 'style'],
    });
  if (document.documentElement) observe();
  else document.addEventListener('DOMContentLoaded', observe);
  const frame = () => {
    state.frames++;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A context whose device clock is shifted and whose server-clock exchanges cross a jittery network. */
export async function memberContext(browser: Browser, options: MemberOptions): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 640, height: 360 } });
  await context.addInitScript(MEMBER_SCRIPT, options.clockShiftMs);
  if (options.jitterMs > 0) {
    await context.route('**/runtime/v1/time', async (route) => {
      await sleep(Math.random() * options.jitterMs);
      const response = await route.fetch();
      await sleep(Math.random() * options.jitterMs);
      await route.fulfill({ response });
    });
  }
  return context;
}

/** Opens the player in `context`, pairs it through the API, and waits until it leaves the pairing screen. */
export async function pairMember(
  context: BrowserContext,
  origin: string,
  api: ControlApi,
  label: string,
): Promise<{ page: Page; screenId: string }> {
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  const code = page.getByTestId('pairing-code').filter({ hasText: /^[2-9A-Z]{3}-[2-9A-Z]{3}$/ });
  await code.waitFor({ timeout: 20_000 });
  const claim = await api.pair((await code.innerText()).replace('-', ''), label);
  await page.getByTestId('pairing-screen').waitFor({ state: 'hidden', timeout: 20_000 });
  return { page, screenId: claim.screen.id };
}

export function changesOf(page: Page): Promise<Change[]> {
  return page.evaluate(() => (window as unknown as LockstepWindow).lockstep.changes);
}

/** The true time in the member's page (the machine's clock, whatever the page's Date says). */
export function trueNowOf(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as LockstepWindow).lockstep.trueNow());
}

/**
 * Each group page change that every member showed, with its spread: for each change of the first
 * member after `from`, the same page's change on every other member within `windowMs`; the skew is
 * the latest minus the earliest. A change some member missed is returned with a skew of Infinity.
 */
export function changeSkews(
  members: Change[][],
  from: number,
  windowMs: number,
): Array<{ page: string; skew: number }> {
  const [first, ...others] = members;
  return first!
    .filter((c) => c.at >= from)
    .map((c) => {
      const times = [c.at];
      for (const other of others) {
        const match = other.find((o) => o.page === c.page && Math.abs(o.at - c.at) < windowMs);
        if (!match) return { page: c.page, skew: Infinity };
        times.push(match.at);
      }
      return { page: c.page, skew: Math.max(...times) - Math.min(...times) };
    });
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
