// Builds the app bridge that uploaded applications include, in two shapes: an ES module
// (dist/sdk/marquee-app.mjs, `--mode module`) and a classic script that sets a read-only
// window.marquee (dist/sdk/marquee-app.js, `--mode classic`; packed as _marquee/runtime.js).
import path from 'node:path';
import { defineConfig } from 'vite';

const sdk = import.meta.dirname;

export default defineConfig(({ mode }) => ({
  root: sdk,
  publicDir: false,
  build: {
    outDir: path.resolve(sdk, '../dist/sdk'),
    emptyOutDir: false,
    // Signage browsers lag behind; the bridge must run on older Chromium-based TVs.
    target: 'es2019',
    minify: true,
    sourcemap: false,
    lib:
      mode === 'classic'
        ? {
            entry: path.resolve(sdk, 'bridge/child-global.ts'),
            formats: ['iife'],
            name: 'MarqueeAppBridge',
            fileName: () => 'marquee-app.js',
          }
        : { entry: path.resolve(sdk, 'bridge/child.ts'), formats: ['es'], fileName: () => 'marquee-app.mjs' },
  },
}));
