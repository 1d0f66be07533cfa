// Test support: the built `marquee` command every subprocess test runs. Built once per test run (the
// unit project's global setup, and `npm run e2e`), and only when a file it was built from changed.
import path from 'node:path';
import { BUNDLE, REPOSITORY, staleBundleReason } from '../bin/cli-bundle.js';

export { BUNDLE };

/** Builds dist/cli/marquee.mjs unless it is newer than every file it was built from. */
export async function ensureCliBundle(): Promise<void> {
  if (staleBundleReason() === undefined) return;
  const { build } = await import('vite');
  await build({ configFile: path.join(REPOSITORY, 'sdk/cli/vite.config.ts'), logLevel: 'warn' });
  const reason = staleBundleReason();
  if (reason) throw new Error(`the CLI build did not take: ${reason}`);
}

let checked = false;

/** The bundle, refused when stale: a test must never pass against old code. */
export function freshBundle(): string {
  if (!checked) {
    const reason = staleBundleReason();
    if (reason) throw new Error(`the built CLI cannot be used (${reason}): run npm run build:cli`);
    checked = true;
  }
  return BUNDLE;
}
