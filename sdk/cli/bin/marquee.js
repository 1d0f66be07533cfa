#!/usr/bin/env node
// `npx marquee …` from the repository. It runs the built command (dist/cli/marquee.mjs, from
// `npm run build:cli`; every test run builds it) when that is newer than every file it was built
// from: it starts in about a third of the time. Otherwise it runs the TypeScript sources through
// tsx (a dependency), so an edit is never hidden behind an old build.
import { pathToFileURL } from 'node:url';
import { BUNDLE, staleBundleReason } from './cli-bundle.js';

if (staleBundleReason() === undefined) await import(pathToFileURL(BUNDLE).href);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../main.ts');
}
