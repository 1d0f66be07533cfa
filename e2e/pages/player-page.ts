// Page object for the web player: what an operator would look at on glass, read through the DOM.
import fs from 'node:fs';
import path from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';
import { MEDIA_CACHE } from '../../player/src/offline/media-cache-policy';

export const ARTIFACTS = path.resolve(import.meta.dirname, '..', 'artifacts');

/** What the player exposes on window for tests and operators. */
interface PlayerWindow {
  /** Set once the player booted (after its offline database opened): absent just after a reload. */
  marqueePlayer?: {
    store: {
      getState(): {
        session: { paired: boolean; publicUrl: string } | null;
        activeRevision: string | null;
        manifest: { manifestRevision: string; upcoming?: { at: string } } | null;
      };
    };
  };
}

export class PlayerPage {
  readonly pairingScreen: Locator;
  readonly pairingCode: Locator;
  /** When the code on glass is replaced, as the screen words it. */
  readonly pairingExpiry: Locator;
  readonly stage: Locator;
  readonly statusMark: Locator;
  readonly startingCard: Locator;
  readonly idleCard: Locator;
  /** The toast on glass (one at a time). */
  readonly toast: Locator;
  /** Black glass while the display is off. */
  readonly displayOff: Locator;
  /** Whether this page was captured before (see screenshot). */
  private captured = false;

  constructor(readonly page: Page) {
    this.pairingScreen = page.getByTestId('pairing-screen');
    this.pairingCode = page.getByTestId('pairing-code');
    this.pairingExpiry = page.locator('.pairing-expiry');
    this.stage = page.getByTestId('stage');
    this.statusMark = page.getByTestId('status-mark');
    this.startingCard = page.getByTestId('starting-card');
    this.idleCard = page.getByTestId('idle-card');
    this.toast = page.getByTestId('toast');
    this.displayOff = page.getByTestId('display-off');
  }

  async open(pathname = '/'): Promise<void> {
    const response = await this.page.goto(pathname);
    expect(response?.status()).toBe(200);
  }

  /** The code on glass, as the API takes it (without the display dash). */
  async code(): Promise<string> {
    await expect(this.pairingCode).toHaveText(/^[2-9A-Z]{3}-[2-9A-Z]{3}$/);
    return (await this.pairingCode.innerText()).replace('-', '');
  }

  livePage(): Locator {
    return this.page.locator('.stage .page[data-state="live"]');
  }

  async livePageId(): Promise<string | null> {
    return this.page.evaluate(() => {
      const live = [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')];
      return live.at(-1)?.dataset.pageId ?? null;
    });
  }

  /** Waits until `pageId` is live, looking every 100 ms (a page may be on glass for a second only). */
  async waitForLivePage(pageId: string, timeout = 20_000): Promise<void> {
    await expect.poll(() => this.livePageId(), { timeout, intervals: [100] }).toBe(pageId);
  }

  /** Page ids seen on glass while `pageChanges` changes happen, sampled every animation frame. */
  async recordPages(pageChanges: number, timeout = 60_000): Promise<string[]> {
    return this.page.evaluate(
      ({ pageChanges, timeout }) =>
        new Promise<string[]>((resolve, reject) => {
          const seen: string[] = [];
          const started = performance.now();
          const tick = () => {
            const live = [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')].at(-1)?.dataset
              .pageId;
            if (live && seen.at(-1) !== live) seen.push(live);
            if (seen.length > pageChanges) return resolve(seen);
            if (performance.now() - started > timeout) return reject(new Error(`only saw ${seen.join(', ')}`));
            requestAnimationFrame(tick);
          };
          tick();
        }),
      { pageChanges, timeout },
    );
  }

  /**
   * The soundtrack's position on every animation frame, and the pages seen meanwhile, until more
   * than `pageChanges` pages were seen. Start it before what it should watch.
   */
  recordSoundtrack(pageChanges: number): Promise<{ times: number[]; pages: string[] }> {
    return this.page.evaluate(
      (pageChanges) =>
        new Promise<{ times: number[]; pages: string[] }>((resolve) => {
          const audio = document.querySelector<HTMLAudioElement>('audio.soundtrack')!;
          const times: number[] = [];
          const pages: string[] = [];
          const tick = () => {
            times.push(audio.currentTime);
            const live = [...document.querySelectorAll<HTMLElement>('.stage .page[data-state="live"]')].at(-1)?.dataset
              .pageId;
            if (live && pages.at(-1) !== live) pages.push(live);
            if (pages.length > pageChanges) return resolve({ times, pages });
            requestAnimationFrame(tick);
          };
          tick();
        }),
      pageChanges,
    );
  }

  soundtrack(): Locator {
    return this.page.locator('audio.soundtrack');
  }

  /** The runtime session the player holds (null before one is open, or before the player booted). */
  session(): Promise<{ paired: boolean; publicUrl: string } | null> {
    return this.page.evaluate(
      () => (window as unknown as PlayerWindow).marqueePlayer?.store.getState().session ?? null,
    );
  }

  /** The manifest revision on glass. */
  activeRevision(): Promise<string | null> {
    return this.page.evaluate(
      () => (window as unknown as PlayerWindow).marqueePlayer?.store.getState().activeRevision ?? null,
    );
  }

  /** The revision of the manifest the player holds (fetched; on glass once activated). */
  heldRevision(): Promise<string | null> {
    return this.page.evaluate(
      () => (window as unknown as PlayerWindow).marqueePlayer?.store.getState().manifest?.manifestRevision ?? null,
    );
  }

  /** When the manifest the player holds switches to its upcoming pages by itself (null: it does not). */
  upcomingAt(): Promise<string | null> {
    return this.page.evaluate(
      () => (window as unknown as PlayerWindow).marqueePlayer?.store.getState().manifest?.upcoming?.at ?? null,
    );
  }

  /** Whether the service worker controls the page and holds every one of these media (offline-ready). */
  holdsForOffline(mediaIds: string[]): Promise<boolean> {
    return this.page.evaluate(
      async ({ mediaIds, cacheName }) => {
        if (!navigator.serviceWorker.controller) return false;
        const cache = await caches.open(cacheName);
        const held = (await cache.keys()).map((request) => new URL(request.url).pathname.split('/').at(-1));
        return mediaIds.every((id) => held.includes(id));
      },
      { mediaIds, cacheName: MEDIA_CACHE },
    );
  }

  async screenshot(name: string): Promise<string> {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, name);
    // Headless Chromium may answer a page's first capture with a frame composited long before (seen:
    // the idle card, seconds after an application page came on glass); later captures are current.
    if (!this.captured) await this.page.screenshot();
    this.captured = true;
    await this.page.screenshot({ path: file });
    return file;
  }
}
