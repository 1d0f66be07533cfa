// End-to-end: the real server (npm start's entry) + the built player + Debian's Chromium.
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../sdk/testing/chromium';

export { CHROMIUM_ARGS, CHROMIUM_PATH };

export const E2E_PORT = Number(process.env.MARQUEE_E2E_PORT ?? 18765);
const dataDir = path.join(os.tmpdir(), `marquee-e2e-${process.pid}`);

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../test-results',
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${E2E_PORT}`,
    viewport: { width: 1280, height: 720 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
  },
  webServer: {
    command: `node --import tsx server/main.ts`,
    cwd: path.resolve(import.meta.dirname, '..'),
    url: `http://127.0.0.1:${E2E_PORT}/.health`,
    reuseExistingServer: false,
    timeout: 30_000,
    env: {
      PORT: String(E2E_PORT),
      MARQUEE_DATA_DIR: dataDir,
      MARQUEE_LOG_LEVEL: 'warn',
      MARQUEE_ENROLLMENTS_PER_IP_PER_HOUR: '10000',
    },
  },
});
