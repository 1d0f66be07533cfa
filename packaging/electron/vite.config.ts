// Bundles the Electron main process (packaging/electron/main.ts and the kiosk agent it starts)
// into dist/electron/main.mjs; runtime dependencies stay in node_modules (electron-builder ships
// them and rebuilds the native ones for Electron).
import { builtinModules } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vite';
import pkg from '../../package.json' with { type: 'json' };

export default defineConfig({
  build: {
    outDir: path.resolve(import.meta.dirname, '../../dist/electron'),
    emptyOutDir: true,
    target: 'node20',
    ssr: path.resolve(import.meta.dirname, 'main.ts'),
    rollupOptions: {
      external: [
        'electron',
        ...builtinModules,
        ...builtinModules.map((m) => `node:${m}`),
        ...Object.keys(pkg.dependencies),
      ],
      output: { format: 'es', entryFileNames: 'main.mjs' },
    },
  },
});
