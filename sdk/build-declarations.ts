// Type declarations beside the built app bridge (run by `npm run build:sdk` after the bundles), so
// an app written in TypeScript types what it uses: `import { connect } from './marquee-app.mjs'`
// finds marquee-app.d.mts, and a page that includes the classic script references
// marquee-app.d.ts for `window.marquee`. The declarations are the compiler's own from
// sdk/bridge/child.ts (under types/), never written by hand, so they cannot drift from the code.
// Usage: node --import tsx sdk/build-declarations.ts [out-dir]   (default dist/sdk)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const MODULE_ENTRY = `// Types of marquee-app.mjs, the app bridge as an ES module.
export * from './types/bridge/child.js';
`;

const CLASSIC_ENTRY = `// Types of marquee-app.js, the classic script (packed as _marquee/runtime.js): it sets a
// read-only window.marquee. Reference this file from the app's sources or its tsconfig.
import type { MarqueeApp } from './types/bridge/child.js';

declare global {
  interface Window {
    readonly marquee: MarqueeApp;
  }
}

export type * from './types/bridge/child.js';
`;

/** The TypeScript compiler's command (its package exports no subpath for it). */
export const TSC = path.join(
  path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
  'bin/tsc',
);

export function buildDeclarations(outDir: string): void {
  const types = path.join(outDir, 'types');
  fs.rmSync(types, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [TSC, '-p', path.join(import.meta.dirname, 'tsconfig.declarations.json'), '--outDir', types],
    { stdio: 'inherit' },
  );
  fs.writeFileSync(path.join(outDir, 'marquee-app.d.mts'), MODULE_ENTRY);
  fs.writeFileSync(path.join(outDir, 'marquee-app.d.ts'), CLASSIC_ENTRY);
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  buildDeclarations(path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '../dist/sdk')));
}
