// Debian's Chromium for every browser test, e2e spec and benchmark: one path, one set of flags.
// Nothing downloads a browser; CHROMIUM_PATH points at another binary when needed.
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Headless on a shared machine, with media allowed to play unmuted without a gesture (soundtracks). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

/** A headless Chromium with the project's flags and any `extraArgs` (e.g. host resolver rules). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });
}

/** Wall-clock time of day with milliseconds, to line up a page's console with a server's log. */
export function timeOfDay(): string {
  return new Date().toISOString().slice(11, 23);
}

/**
 * What `page` and its frames log from now on, one line each (time, the host that logged, kind,
 * text), uncaught errors included: printed when a test fails, to read rather than guess at.
 */
export function recordConsole(page: Page): string[] {
  const lines: string[] = [];
  page.on('console', (message) => {
    const where = message.location().url ? new URL(message.location().url).host : '?';
    lines.push(`${timeOfDay()} ${where} ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => lines.push(`${timeOfDay()} pageerror: ${error.message}`));
  return lines;
}
