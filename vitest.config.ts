import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Two projects, run one after the other by `npm test`: the unit project spreads over the cores; the
// browser project (every `*.browser.test.ts`, each driving Debian's Chromium) runs one file at a
// time, so a page's frame timing never competes with another Chromium or a busy test worker.
const shared = { testTimeout: 20_000, hookTimeout: 20_000, pool: 'forks' } as const;
const roots = ['server', 'sdk', 'player', 'dashboard', 'packaging', 'bench'];
const browser = roots.map((r) => `${r}/**/*.browser.test.{ts,tsx}`);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          // Every core (vitest's default leaves one free, which on a 2-core machine is one worker):
          // many files wait on subprocesses and sockets rather than compute (D-401).
          maxWorkers: os.availableParallelism(),
          // Files share their worker's module cache instead of each importing the server afresh:
          // that import, not the tests, was most of the project's CPU time (D-376). Files that fake
          // timers, stub globals or mock modules restore them in afterEach, as they must anyway.
          isolate: false,
          // Builds dist/cli/marquee.mjs when a file it is made from changed: the CLI's subprocess
          // tests run the built command, as a published package would.
          globalSetup: ['sdk/cli/testing/cli-bundle.global-setup.ts'],
          include: roots.map((r) => `${r}/**/*.test.{ts,tsx}`),
          exclude: ['**/node_modules/**', ...browser],
        },
      },
      {
        // A page's first paint, a frame's first launch or a video's first frame can take seconds on a
        // busy machine; waits inside these tests allow for it, and so does each test's own budget.
        // One file at a time in one process that keeps its module cache from file to file: each file
        // launches and closes its own Chromium, servers and pages, and none mocks a module or fakes
        // timers, so what a file imports (Playwright, Vite, sharp, the server) is imported once, not
        // fifteen times (about a second and a half per file on CI's two cores).
        test: {
          ...shared,
          testTimeout: 90_000,
          name: 'browser',
          include: browser,
          fileParallelism: false,
          isolate: false,
        },
      },
    ],
  },
});
