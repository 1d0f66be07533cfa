// Page object for the web player: what an operator would look at on glass, read through the DOM.
import fs from 'node:fs';
import path from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';

export const ARTIFACTS = path.resolve(import.meta.dirname, '..', 'artifacts');

export class PlayerPage {
  readonly pairingScreen: Locator;
  readonly pairingCode: Locator;
  readonly stage: Locator;
  readonly statusMark: Locator;
  readonly startingCard: Locator;
  readonly idleCard: Locator;

  constructor(readonly page: Page) {
    this.pairingScreen = page.getByTestId('pairing-screen');
    this.pairingCode = page.getByTestId('pairing-code');
    this.stage = page.getByTestId('stage');
    this.statusMark = page.getByTestId('status-mark');
    this.startingCard = page.getByTestId('starting-card');
    this.idleCard = page.getByTestId('idle-card');
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

  async waitForLivePage(pageId: string, timeout = 20_000): Promise<void> {
    await expect.poll(() => this.livePageId(), { timeout }).toBe(pageId);
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

  soundtrack(): Locator {
    return this.page.locator('audio.soundtrack');
  }

  async screenshot(name: string): Promise<string> {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, name);
    await this.page.screenshot({ path: file });
    return file;
  }
}
