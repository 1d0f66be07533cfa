// Debian's Chromium for every browser test, e2e spec and benchmark: one path, one set of flags.
// Nothing downloads a browser; CHROMIUM_PATH points at another binary when needed.
import { chromium, type Browser } from 'playwright-core';

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
