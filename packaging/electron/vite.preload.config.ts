// Bundles the Electron preload (packaging/electron/preload.ts) into dist/electron/preload.cjs: a
// sandboxed preload is one CommonJS script that may require `electron` and nothing from disk.
import path from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig({
  build: {
    outDir: path.resolve(import.meta.dirname, '../../dist/electron'),
    emptyOutDir: false,
    target: 'node20',
    ssr: path.resolve(import.meta.dirname, 'preload.ts'),
    rollupOptions: {
      external: ['electron'],
      output: { format: 'cjs', entryFileNames: 'preload.cjs' },
    },
  },
});
