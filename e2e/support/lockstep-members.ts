// Browser players as members of a sync group, for the lockstep spec and benchmark: each in a
// browser context of its own whose wall clock is shifted (Date and performance.timeOrigin, as a
// device whose clock is wrong), whose exchanges with the server clock cross a jittery network
// (a random delay each way, added in the page around its fetch, so nothing but the delay is
// added), and which records every page it puts on glass with the true time of the animation frame
// that showed it (all members run on this machine: one true clock).
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
  lockstep: {
    changes: Change[];
    frames: number;
    /** The true time of the navigation that loaded the page. */
    navigationStart: number;
    trueNow(): number;
    clockShiftMs: number;
  };
}

/**
 * Installed before the player's scripts: the shifted clock and the page-change recorder. Plain
 * JavaScript text, so no transpiler (Playwright's, tsx's) can add helpers it would not find there.
 */
const memberScript = (clockShiftMs: number, jitterMs: number) => `(() => {
  const clockShiftMs = ${JSON.stringify(clockShiftMs)};
  const trueOrigin = performance.timeOrigin;
  // The network of the server-clock exchanges: a random delay each way (kept across reloads).
  const JITTER_KEY = 'lockstep.jitterMs';
  if (sessionStorage.getItem(JITTER_KEY) === null) sessionStorage.setItem(JITTER_KEY, ${JSON.stringify(String(jitterMs))});
  const jitter = () => new Promise((r) => setTimeout(r, Math.random() * Number(sessionStorage.getItem(JITTER_KEY))));
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!new URL(url, location.href).pathname.endsWith('/runtime/v1/time')) return realFetch(input, init);
    await jitter();
    const response = await realFetch(input, init);
    const body = await response.arrayBuffer();
    await jitter();
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  const RealDate = Date;
  // A device whose clock is off: every wall-clock reading the page makes is shifted.
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + clockShiftMs);
      else super(...args);
    }
    static now() {
      return RealDate.now() + clockShiftMs;
    }
  }
  window.Date = ShiftedDate;
  Object.defineProperty(performance, 'timeOrigin', { get: () => trueOrigin + clockShiftMs });
  const state = {
    changes: [],
    frames: 0,
    navigationStart: trueOrigin,
    trueNow: () => trueOrigin + performance.now(),
    clockShiftMs,
  };
  window.lockstep = state;
  const byZ = (el) => Number(el.style.zIndex || 0);
  let shown;
  const look = () => {
    const live = [...document.querySelectorAll('.stage .page[data-state="live"]')]
      .sort((a, b) => byZ(a) - byZ(b))
      .at(-1)?.dataset.pageId;
    // The frame the change paints in: a change made in a frame callback is painted in that frame.
    if (live && live !== shown) state.changes.push({ page: live, at: trueOrigin + Number(document.timeline.currentTime) });
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
})();`;

/** A context whose device clock is shifted and whose server-clock exchanges cross a jittery network. */
export async function memberContext(browser: Browser, options: MemberOptions): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 640, height: 360 } });
  await context.addInitScript({ content: memberScript(options.clockShiftMs, options.jitterMs) });
  // Functions a Node caller hands to page.evaluate under tsx keep their names through esbuild's
  // __name helper, which a page does not have: give it one.
  await context.addInitScript({ content: 'window.__name = (target) => target;' });
  return context;
}

/** From now on (and across reloads), each way of the member's server-clock exchanges is delayed by a random 0…jitterMs. */
export async function setJitter(page: Page, jitterMs: number): Promise<void> {
  await page.evaluate((ms) => sessionStorage.setItem('lockstep.jitterMs', String(ms)), jitterMs);
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
