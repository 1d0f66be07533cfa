// Web player benchmark in headless Debian Chromium against a real server: long frames (> 50 ms)
// per 100 page transitions at 1920×1080 (baseline: the same page held still for as long), time
// from start to the first content frame with a warm cache (baseline: the shell's first paint),
// and the JS heap and DOM counters after 500 page cycles against after 50.
import type { Page } from 'playwright-core';
import { ControlApi } from '../e2e/support/control-api';
import { MarqueeServer } from '../e2e/support/marquee-server';
import { titledPng } from '../e2e/support/media-fixtures';
import { launchChromium } from '../sdk/testing/chromium';

const PORT = Number(process.env.MARQUEE_BENCH_PORT ?? 18799);
const TRANSITIONS = 100;
const LONG_FRAME_MS = 50;

/** Installed before the player's scripts: counts long frames and page changes, notes the first content frame. */
const PROBE = () => {
  const w = window as unknown as { bench: { longFrames: number; changes: number; firstContent: number | null } };
  w.bench = { longFrames: 0, changes: 0, firstContent: null };
  const type = PerformanceObserver.supportedEntryTypes.includes('long-animation-frame')
    ? 'long-animation-frame'
    : 'longtask';
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.duration > 50) w.bench.longFrames++;
  }).observe({ type, buffered: false });
  let last: string | undefined;
  new MutationObserver(() => {
    const live = [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')].at(-1)?.dataset.pageId;
    if (live && live !== last) {
      last = live;
      w.bench.changes++;
      if (w.bench.firstContent === null) requestAnimationFrame(() => (w.bench.firstContent ??= performance.now()));
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
};

async function counters(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  const dom = (await cdp.send('Memory.getDOMCounters')) as {
    nodes: number;
    jsEventListeners: number;
    documents: number;
  };
  await cdp.detach();
  return { heapBytes: heap.usedSize, nodes: dom.nodes, listeners: dom.jsEventListeners, documents: dom.documents };
}

async function waitForChanges(page: Page, count: number, timeoutMs: number): Promise<void> {
  await page.waitForFunction((n) => (window as unknown as { bench: { changes: number } }).bench.changes >= n, count, {
    timeout: timeoutMs,
    polling: 100,
  });
}

export async function playerPlayback(): Promise<void> {
  const server = new MarqueeServer(PORT);
  await server.start();
  const browser = await launchChromium();
  try {
    const api = new ControlApi(server.origin);
    await api.enroll();
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } });
    const page = await context.newPage();
    await page.addInitScript(PROBE);
    await page.goto(`${server.origin}/`);
    // The code, not the placeholder shown until the pairing session answers.
    const code = page.getByTestId('pairing-code');
    await code.filter({ hasText: /^[2-9A-Z]{3}-[2-9A-Z]{3}$/ }).waitFor({ timeout: 15_000 });
    const codeText = await code.innerText();
    const claim = await api.pair(codeText.replace('-', ''), 'Bench');
    const colors = ['#1b4d7a', '#7a3b1b', '#1b7a4d', '#5b1b7a'];
    const mediaIds: string[] = [];
    for (const [i, color] of colors.entries())
      mediaIds.push(
        await api.uploadMedia(
          await titledPng(1920, 1080, color, `Page ${i + 1}`, 'benchmark'),
          'image/png',
          `p${i}.png`,
        ),
      );
    const transitions = ['crossfade', 'swipe-left', 'swipe-up', 'crossfade'] as const;
    const playlist = await api.createPlaylist({
      name: 'Bench loop',
      pages: mediaIds.map((mediaId, i) => ({
        id: `p${i}`,
        canvas: { width: 1920, height: 1080, background: '#000000FF' },
        transition: { type: transitions[i], duration_ms: 200 },
        advance: { mode: 'duration', after_ms: 1000 },
        placements: [
          {
            id: 'hero',
            content: { type: 'image', selector: { by: 'id', media_id: mediaId } },
            rect: { x: 0, y: 0, width: 1920, height: 1080 },
            layer: 0,
            content_fit: 'cover',
            enter: { type: 'fade-up' },
          },
        ],
      })),
    });
    await api.patchScreen(claim.screen.id, { playlist_id: playlist.id });
    await waitForChanges(page, 2, 30_000);

    // Long frames: 100 transitions, then the same time with one page held still.
    await page.evaluate(
      () => ((window as unknown as { bench: { longFrames: number; changes: number } }).bench.longFrames = 0),
    );
    const start = await page.evaluate(() => (window as unknown as { bench: { changes: number } }).bench.changes);
    const began = Date.now();
    await waitForChanges(page, start + TRANSITIONS, TRANSITIONS * 3000);
    const duringTransitions = await page.evaluate(
      () => (window as unknown as { bench: { longFrames: number } }).bench.longFrames,
    );
    const elapsed = Date.now() - began;
    const still = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    await still.setContent(
      `<img src="data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1080"><rect width="100%" height="100%" fill="#1b4d7a"/></svg>')}" style="width:100vw;height:100vh">`,
    );
    await still.evaluate(PROBE);
    await still.waitForTimeout(Math.min(elapsed, 60_000));
    const stillFrames = await still.evaluate(
      () => (window as unknown as { bench: { longFrames: number } }).bench.longFrames,
    );
    await still.close();
    console.log(
      `long frames (> ${LONG_FRAME_MS} ms) per ${TRANSITIONS} transitions at 1920x1080: ${duringTransitions} (a still page over ${Math.min(elapsed, 60_000)} ms: ${stillFrames})`,
    );

    // First content frame with a warm cache: service worker, media cache and device cookie in place.
    const reloads: Array<{ content: number; shell: number }> = [];
    for (let i = 0; i < 3; i++) {
      await page.reload();
      await page.waitForFunction(
        () => (window as unknown as { bench: { firstContent: number | null } }).bench.firstContent !== null,
        undefined,
        { timeout: 30_000 },
      );
      reloads.push(
        await page.evaluate(() => ({
          content: (window as unknown as { bench: { firstContent: number } }).bench.firstContent,
          shell: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
        })),
      );
    }
    const best = reloads.reduce((a, b) => (b.content < a.content ? b : a));
    console.log(
      `first content frame with a warm cache: ${best.content.toFixed(0)} ms from navigation (shell first paint ${best.shell.toFixed(0)} ms; ratio ${(best.content / best.shell).toFixed(2)})`,
    );

    // Heap and DOM after 500 cycles against after 50, on a fast-forwarded clock.
    const fast = await context.newPage();
    await fast.clock.install();
    await fast.addInitScript(PROBE);
    await fast.goto(`${server.origin}/`);
    const runUntil = async (changes: number) => {
      const deadline = Date.now() + 30 * 60_000; // about a second of real time per page cycle
      for (;;) {
        const seen = await fast.evaluate(() => (window as unknown as { bench: { changes: number } }).bench.changes);
        if (seen >= changes) return;
        if (Date.now() > deadline) throw new Error(`only ${seen} page cycles on the fast clock`);
        // One page's time per step, then a moment of real time for decoding and fetches.
        await fast.clock.runFor(1_250);
        await fast.waitForTimeout(20);
      }
    };
    await runUntil(50);
    const at50 = await counters(fast);
    await runUntil(500);
    const at500 = await counters(fast);
    const ratio = (a: number, b: number) => (b === 0 ? 'n/a' : (a / b).toFixed(3));
    console.log(
      `after 50 page cycles:  heap ${(at50.heapBytes / 1e6).toFixed(2)} MB, ${at50.nodes} DOM nodes, ${at50.listeners} listeners, ${at50.documents} documents`,
    );
    console.log(
      `after 500 page cycles: heap ${(at500.heapBytes / 1e6).toFixed(2)} MB, ${at500.nodes} DOM nodes, ${at500.listeners} listeners, ${at500.documents} documents`,
    );
    console.log(
      `ratio 500/50: heap ${ratio(at500.heapBytes, at50.heapBytes)}, nodes ${ratio(at500.nodes, at50.nodes)}, listeners ${ratio(at500.listeners, at50.listeners)}`,
    );
  } finally {
    await browser.close();
    await server.stop();
  }
}
