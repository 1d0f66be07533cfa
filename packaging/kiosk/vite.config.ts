// Bundles the kiosk agent's command (packaging/kiosk/main.ts) into dist/kiosk/main.mjs, which
// marquee-kiosk runs: it starts in a fraction of the time tsx takes to compile the sources, and a
// kiosk restarted by its supervisor is back on glass sooner. Runtime dependencies stay in node_modules.
import { builtinModules } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vite';
import pkg from '../../package.json' with { type: 'json' };

export default defineConfig({
  build: {
    outDir: path.resolve(import.meta.dirname, '../../dist/kiosk'),
    emptyOutDir: true,
    target: 'node20',
    ssr: path.resolve(import.meta.dirname, 'main.ts'),
    rollupOptions: {
      external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`), ...Object.keys(pkg.dependencies)],
      output: { format: 'es', entryFileNames: 'main.mjs' },
    },
  },
});
