// Where the built `marquee` command lives (npm run build:cli) and whether it is still what the
// sources say. The build writes, beside the bundle, the list of files it was made from (the
// repository's sources it bundled, the lock file standing for node_modules, its own config); the
// bundle is fresh when it is newer than every one of them. The bin runs a fresh bundle, and tests
// refuse a stale one rather than test old code.
import fs from 'node:fs';
import path from 'node:path';

export const REPOSITORY = path.resolve(import.meta.dirname, '../../..');
export const BUNDLE = path.join(REPOSITORY, 'dist/cli/marquee.mjs');
/** `{ "inputs": [paths relative to the repository] }`, written by the build. */
export const BUNDLE_INPUTS = path.join(REPOSITORY, 'dist/cli/marquee.inputs.json');

/** Why the bundle cannot be used (missing, or older than one of its inputs); undefined when fresh. */
export function staleBundleReason() {
  let built;
  let inputs;
  try {
    built = fs.statSync(BUNDLE).mtimeMs;
    inputs = JSON.parse(fs.readFileSync(BUNDLE_INPUTS, 'utf8')).inputs;
  } catch {
    return `${path.relative(REPOSITORY, BUNDLE)} is not built`;
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return `${path.relative(REPOSITORY, BUNDLE_INPUTS)} is not a list`;
  for (const input of inputs) {
    let changed;
    try {
      changed = fs.statSync(path.join(REPOSITORY, input)).mtimeMs;
    } catch {
      return `${input} (bundled) is gone`;
    }
    if (changed > built) return `${input} changed after the build`;
  }
  return undefined;
}
