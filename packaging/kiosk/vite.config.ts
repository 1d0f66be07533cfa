// Bundles the kiosk agent's command (packaging/kiosk/main.ts) into dist/kiosk/main.mjs, which
// marquee-kiosk runs: it starts in a fraction of the time tsx takes to compile the sources, and a
// kiosk restarted by its supervisor is back on glass sooner. Its pure-JS dependencies are bundled
// too: resolving and reading a few hundred small files of node_modules took about 40 % of the
// agent's start-up CPU (a cold start is a goal, ≤ 3 s on a small box). Native modules stay outside.
import { builtinModules } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vite';

/** Loaded from node_modules at run time: compiled add-ons cannot be bundled. */
const NATIVE = ['better-sqlite3', 'sharp'];

export default defineConfig({
  ssr: { noExternal: true, external: NATIVE },
  build: {
    outDir: path.resolve(import.meta.dirname, '../../dist/kiosk'),
    emptyOutDir: true,
    target: 'node20',
    ssr: path.resolve(import.meta.dirname, 'main.ts'),
    rollupOptions: {
      external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`), ...NATIVE],
      output: { format: 'es', entryFileNames: 'main.mjs' },
    },
  },
});
