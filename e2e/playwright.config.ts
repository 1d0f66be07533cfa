// End-to-end: the real server (npm start's entry) + the built player + Debian's Chromium. Each
// worker runs a server of its own (e2e/support/fixtures.ts), so a spec may kill it and start it again.
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../sdk/testing/chromium';
import { newsSiteChromiumArgs } from './support/news-site';
import { NEWS_PORT } from './support/ports';

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../test-results',
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  reporter: [['list']],
  use: {
    viewport: { width: 1280, height: 720 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...newsSiteChromiumArgs(NEWS_PORT)] },
  },
});
