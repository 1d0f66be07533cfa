// Page object for the dashboard app on the dashboard origin: signing in, moving between pages, and
// what a person does on each, read and driven through roles and labels as a screen reader would.
// It also checks a page with axe-core and saves screenshots at the two sizes the dashboard is
// designed for.
import fs from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, type Locator, type Page } from '@playwright/test';
import { ARTIFACTS } from './player-page';

export const DESKTOP = { width: 1440, height: 900 };
export const PHONE = { width: 390, height: 844 };
/** A phone as a browser context sees it: its size, a touch screen (a coarse pointer), zoomed out to fit. */
export const PHONE_TOUCH = { viewport: PHONE, isMobile: true, hasTouch: true };

export class DashboardPage {
  readonly heading: Locator;
  readonly nav: Locator;

  constructor(
    readonly page: Page,
    readonly origin: string,
  ) {
    this.heading = page.getByRole('heading', { level: 1 });
    this.nav = page.getByRole('navigation', { name: 'Sections' });
  }

  async open(pathname = '/'): Promise<void> {
    const response = await this.page.goto(new URL(pathname, this.origin).href);
    expect(response?.status()).toBe(200);
  }

  async signIn(email: string, password: string): Promise<void> {
    await expect(this.heading).toHaveText('Sign in');
    await this.page.getByLabel('Email address').fill(email);
    await this.page.getByLabel('Password').fill(password);
    await this.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Signed in, or told why not. Checking a password is a memory-hard hash: seconds on a loaded
    // machine (a wait, widened).
    await expect(this.nav.or(this.page.locator('.notice-line:not(:empty)'))).toBeVisible({ timeout: 30_000 });
  }

  async expectSignedIn(name: string): Promise<void> {
    // Checking a password is a memory-hard hash: seconds on a loaded machine (a wait, widened).
    await expect(this.nav).toBeVisible({ timeout: 30_000 });
    await expect(this.page.getByRole('banner')).toContainText(name);
  }

  async go(section: 'Screens' | 'Playlists' | 'Media' | 'Events' | 'Members' | 'Billing'): Promise<void> {
    await this.nav.getByRole('link', { name: section }).click();
    await expect(this.heading).toHaveText(section);
  }

  // ---- Screens

  async pair(code: string, name: string): Promise<void> {
    await this.page.getByLabel('Pairing code').fill(code);
    await this.page.getByLabel(/^Name/).fill(name);
    await this.page.getByRole('button', { name: 'Pair screen' }).click();
    await expect(this.page.getByRole('status').filter({ hasText: `Paired “${name}”` })).toBeVisible();
  }

  screenCard(name: string): Locator {
    return this.page.getByTestId('screen-card').filter({ has: this.page.getByRole('heading', { name }) });
  }

  async openScreen(name: string): Promise<void> {
    await this.screenCard(name).getByRole('link', { name }).click();
    await expect(this.heading).toHaveText(name);
  }

  async assignPlaylist(playlist: string): Promise<void> {
    await this.page.getByLabel('Playlist to play').selectOption({ label: playlist });
    await this.page.getByRole('button', { name: 'Assign' }).click();
    await expect(this.page.getByRole('status').filter({ hasText: 'Assign the playlist: done.' })).toBeVisible();
  }

  /** The page's status line (role status or alert) saying `text`. */
  said(text: string | RegExp): Locator {
    return this.page.locator('[role=status], [role=alert]').filter({ hasText: text });
  }

  // ---- A screen's fleet controls

  async startTakeover(playlist: string, reason: string): Promise<void> {
    const panel = this.page.getByRole('form', { name: 'Takeover' });
    await panel.getByLabel('Takeover playlist').selectOption({ label: playlist });
    await panel.getByLabel('Reason').fill(reason);
    await panel.getByRole('button', { name: 'Start takeover' }).click();
    await expect(this.said('The takeover is on.')).toBeVisible();
  }

  async endTakeover(): Promise<void> {
    await this.page.getByRole('button', { name: 'End takeover now' }).click();
    await expect(this.said('The takeover ended')).toBeVisible();
  }

  /** The schedule editor's form. */
  get schedule(): Locator {
    return this.page.getByRole('form', { name: 'Schedule' });
  }

  scheduleEntry(n: number): Locator {
    return this.schedule.getByTestId('schedule-entry').nth(n - 1);
  }

  async saveSchedule(): Promise<void> {
    await this.schedule.getByRole('button', { name: 'Save schedule' }).click();
  }

  // ---- Fleet actions from the grid

  async selectScreen(name: string): Promise<void> {
    await this.screenCard(name).getByLabel(`Select ${name}`).check();
  }

  get fleetPanel(): Locator {
    return this.page.getByRole('form', { name: 'Fleet action' });
  }

  /** Opens the fleet action form without ticking a screen (to act by tag). */
  async openFleetAction(): Promise<void> {
    await this.page.getByRole('button', { name: 'Act on many screens…' }).click();
    await expect(this.fleetPanel).toBeVisible();
  }

  /** Each screen's outcome of the last fleet action. */
  get fleetResults(): Locator {
    return this.fleetPanel.getByTestId('fleet-result');
  }

  async takeoverByTag(tag: string, playlist: string, reason: string): Promise<void> {
    await this.openFleetAction();
    const panel = this.fleetPanel;
    await panel.getByLabel('Tag', { exact: true }).fill(tag);
    // A wrapping label's name includes the chosen option's text: match its start.
    await panel.getByRole('combobox', { name: /^Action/ }).selectOption({ label: 'Take over with a playlist' });
    await panel.getByRole('combobox', { name: /^Playlist/ }).selectOption({ label: playlist });
    await panel.getByLabel('Reason').fill(reason);
    await panel.getByRole('button', { name: 'Run on the screens' }).click();
  }

  // ---- Media

  async upload(files: { name: string; mimeType: string; buffer: Buffer }[]): Promise<void> {
    await this.page.getByLabel('Choose files').setInputFiles(files);
  }

  uploadRow(name: string): Locator {
    return this.page.getByTestId('upload').filter({ hasText: name });
  }

  // ---- A playlist's page

  /** The playlist's page rows, in order. */
  get playlistPages(): Locator {
    return this.page.getByTestId('page-row');
  }

  playlistPage(n: number): Locator {
    return this.playlistPages.nth(n - 1);
  }

  /** The page ids in the order the editor lists them. */
  async playlistPageIds(): Promise<string[]> {
    return this.playlistPages.evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.pageId ?? ''));
  }

  /** Moves page `n` one place with its Move button, from the keyboard. */
  async movePageWithKeyboard(n: number, direction: 'up' | 'down'): Promise<void> {
    const button = this.playlistPage(n).getByRole('button', { name: new RegExp(`^Move ${direction}: page ${n}, `) });
    await button.focus();
    await this.page.keyboard.press('Enter');
  }

  /** Drags page `from` by its grip onto page `to`. */
  async dragPage(from: number, to: number): Promise<void> {
    await this.playlistPage(from).locator('.grip').dragTo(this.playlistPage(to));
  }

  /** The media each placement of page `n`'s to-scale drawing shows. */
  async drawnMedia(n: number): Promise<string[]> {
    return this.playlistPage(n)
      .getByTestId('canvas-preview')
      .locator('.placement-box')
      .evaluateAll((boxes) => boxes.map((b) => (b as HTMLElement).dataset.mediaId ?? ''));
  }

  /** Page `n`'s to-scale drawing: its size on screen and each placement's box in it (and paint order). */
  async canvasDrawing(n: number): Promise<{
    width: number;
    height: number;
    placements: { x: number; y: number; width: number; height: number; z: number }[];
  }> {
    return this.playlistPage(n)
      .locator('.canvas-box')
      .evaluate((box) => {
        // The placements are laid out in the box's padding box (inside its border).
        const at = box.getBoundingClientRect();
        const left = at.x + box.clientLeft;
        const top = at.y + box.clientTop;
        return {
          width: box.clientWidth,
          height: box.clientHeight,
          placements: [...box.querySelectorAll<HTMLElement>('.placement-box')].map((p) => {
            const r = p.getBoundingClientRect();
            return {
              x: r.x - left,
              y: r.y - top,
              width: r.width,
              height: r.height,
              z: Number(getComputedStyle(p).zIndex),
            };
          }),
        };
      });
  }

  /** The live preview's caption, which names the page on glass in `data-page-id`. */
  get livePreviewPage(): Locator {
    return this.page.getByTestId('live-page');
  }

  // ---- Quality

  /** axe-core over the page as it is: no serious or critical violation. */
  async expectAccessible(): Promise<void> {
    const results = await new AxeBuilder({ page: this.page }).analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(
      bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    ).toEqual([]);
  }

  /**
   * Nothing wider than the viewport the context was made with. (A mobile browser widens its layout
   * viewport to fit what overflows, so innerWidth grows with the page: the configured width is the
   * measure.)
   */
  async expectNoSidewaysScroll(): Promise<void> {
    const width = this.page.viewportSize()?.width ?? 0;
    expect(await this.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  }

  /**
   * The controls of the page smaller than a fingertip (smallTouchTargets below), counting the links
   * that open a card or a table's row (their name) with the navigation's.
   */
  async smallTouchTargets(): Promise<string[]> {
    return smallTouchTargets(this.page, 'nav a, .card-title a, .table td a');
  }

  async screenshot(name: string): Promise<string> {
    const dir = path.join(ARTIFACTS, 'dashboard');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    await this.page.screenshot({ path: file, fullPage: true });
    return file;
  }
}

/**
 * The controls on a page smaller than a fingertip (44 px, WCAG 2.5.5; 40 allowed for rounding):
 * buttons (and links drawn as buttons), fields, selects, disclosure summaries, the navigation's links
 * and any links `alsoLinks` names; a tick box or radio button counts by its label, which takes the
 * tap. Links inside running text are exempt (2.5.5's inline exception), as are the skip link (shown
 * on keyboard focus only) and a visually hidden file input (its label is the button).
 */
export function smallTouchTargets(page: Page, alsoLinks = 'nav a'): Promise<string[]> {
  return page.evaluate(
    (links) =>
      [...document.querySelectorAll<HTMLElement>(`button, .button, input, select, textarea, summary, nav a, ${links}`)]
        .filter((control) => !control.closest('.visually-hidden'))
        .map((control) => {
          const target =
            control instanceof HTMLInputElement && (control.type === 'checkbox' || control.type === 'radio')
              ? (control.closest('label') ?? control)
              : control;
          const box = target.getBoundingClientRect();
          const name = (control.getAttribute('aria-label') ?? control.textContent ?? control.outerHTML).trim();
          return { box, text: `${control.tagName.toLowerCase()} "${name.slice(0, 40)}" ${Math.round(box.height)} px` };
        })
        .filter(({ box }) => box.width > 0 && box.height > 0 && box.height < 40)
        .map(({ text }) => text),
    alsoLinks,
  );
}
