// The screens grid virtualized, in Chromium against a real server and the built dashboard
// (`npm run build:web`), with a project of 120 screens: only the rows near the viewport are drawn,
// a ticked screen stays ticked when its row scrolls away and back, Tab walks from card to card past
// the drawn rows, focus survives its card being scrolled out of view, and the grid is one column on a
// phone. axe-core finds nothing serious or critical while scrolled into the middle of the list.
import fs from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpCapture } from '../../../server/mail/mail.fixtures';
import { TestServer } from '../../../server/testing/harness';
import { launchChromium } from '../../../sdk/testing/chromium';
import { seedProject, SEEDED_PASSWORD_COST, signedIn } from '../../../server/dashboard/seeded-dashboard.fixtures';

const SCREENS = 120;
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const DIST = path.resolve(import.meta.dirname, '..', '..', '..', 'dist', 'dashboard', 'index.html');

let smtp: SmtpCapture;
let server: TestServer;
let browser: Browser;
let email: string;

beforeAll(async () => {
  if (!fs.existsSync(DIST)) throw new Error('dist/dashboard is missing: run npm run build:web');
  smtp = await SmtpCapture.start();
  server = await TestServer.start({
    config: { logLevel: 'silent', smtpUrl: smtp.url },
    tuning: { passwordHash: SEEDED_PASSWORD_COST },
  });
  email = await seedProject(server, smtp, { screens: SCREENS, media: 1 });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await smtp?.stop();
});

const cards = (page: Page) => page.getByTestId('screen-card');
const card = (page: Page, label: string) =>
  cards(page).filter({ has: page.getByRole('heading', { name: label, exact: true }) });
/** Labels sort as text: "Screen 0", "Screen 1", "Screen 10", … "Screen 99" last. */
const LAST = 'Screen 99';

async function screensPage(viewport: { width: number; height: number }): Promise<Page> {
  const page = await signedIn(browser, server.config.dashboardOrigin, email, viewport);
  await page.goto(`${server.config.dashboardOrigin}/screens`);
  await expect.poll(() => cards(page).first().getAttribute('aria-setsize'), { timeout: 30_000 }).toBe(String(SCREENS));
  return page;
}

const scrollTo = async (page: Page, where: 'top' | 'bottom' | number) => {
  await page.evaluate((y) => {
    window.scrollTo(0, y === 'top' ? 0 : y === 'bottom' ? document.documentElement.scrollHeight : y);
  }, where);
};

describe('the screens grid at 120 screens', () => {
  it('draws only the rows near the viewport, each card knowing its place', async () => {
    const page = await screensPage(DESKTOP);
    const drawn = await cards(page).count();
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThan(SCREENS / 2);
    expect(await cards(page).first().getAttribute('aria-posinset')).toBe('1');
    await scrollTo(page, 'bottom');
    await card(page, LAST).waitFor({ state: 'visible' });
    expect(await card(page, LAST).getAttribute('aria-posinset')).toBe(String(SCREENS));
    await card(page, 'Screen 0').waitFor({ state: 'detached' });
    await page.context().close();
  });

  it('keeps a ticked screen ticked when it scrolls away and back', async () => {
    const page = await screensPage(DESKTOP);
    await card(page, 'Screen 0').getByLabel('Select Screen 0').check();
    // Focus would keep the card drawn (the next test): let go of it, so the card really goes.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await scrollTo(page, 'bottom');
    await card(page, 'Screen 0').waitFor({ state: 'detached' });
    await card(page, LAST).getByLabel(`Select ${LAST}`).check();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await scrollTo(page, 'top');
    expect(await card(page, 'Screen 0').getByLabel('Select Screen 0').isChecked()).toBe(true);
    expect(await card(page, 'Screen 1').getByLabel('Select Screen 1').isChecked()).toBe(false);
    // The fleet action form counts both.
    await expect.poll(() => page.getByRole('form', { name: 'Fleet action' }).textContent()).toContain('The 2 selected');
    await page.context().close();
  });

  it('moves focus with Tab from card to card past the rows drawn at first', async () => {
    const page = await screensPage(DESKTOP);
    const drawnAtFirst = await cards(page).count();
    await card(page, 'Screen 0').getByRole('link', { name: 'Screen 0' }).focus();
    let furthest = 1;
    // A card has two stops (its link, its checkbox).
    for (let i = 0; i < (drawnAtFirst + 8) * 2; i++) {
      await page.keyboard.press('Tab');
      const at = await page.evaluate(() =>
        document.activeElement?.closest('[data-testid="screen-card"]')?.getAttribute('aria-posinset'),
      );
      expect(at, `Tab ${i + 1} left the grid`).toBeTruthy();
      expect(Number(at)).toBeGreaterThanOrEqual(furthest);
      furthest = Number(at);
    }
    expect(furthest).toBeGreaterThan(drawnAtFirst);
    await page.context().close();
  });

  it('keeps focus in a card scrolled out of view, and passes axe-core mid-list', async () => {
    const page = await screensPage(DESKTOP);
    const box = card(page, 'Screen 0').getByLabel('Select Screen 0');
    await box.focus();
    await scrollTo(page, 'bottom');
    await card(page, LAST).waitFor({ state: 'visible' });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('type'))).toBe('checkbox');
    expect(await box.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Space');
    await scrollTo(page, 'top');
    expect(await box.isChecked()).toBe(true);

    await scrollTo(page, 4000);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(3000);
    const results = await new AxeBuilder({ page: page as never }).analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    await page.context().close();
  });

  it('is one column of full-width cards on a phone', async () => {
    const page = await screensPage(PHONE);
    const widths = await page.evaluate(() => {
      const list = document.querySelector('ul[aria-label="Screens"]')!.getBoundingClientRect().width;
      const lefts = [...document.querySelectorAll('[data-testid="screen-card"]')].map((c) => c.getBoundingClientRect());
      return {
        list,
        cards: lefts.map((r) => Math.round(r.width)),
        lefts: new Set(lefts.map((r) => Math.round(r.left))).size,
      };
    });
    expect(widths.lefts).toBe(1);
    for (const w of widths.cards) expect(w).toBe(Math.round(widths.list));
    await scrollTo(page, 'bottom');
    await card(page, LAST).waitFor({ state: 'visible' });
    await page.context().close();
  });
});
