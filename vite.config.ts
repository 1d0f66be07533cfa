// Builds the player (player/) for the browser into dist/player, served by the runtime plane.
// `--mode service-worker` builds the player's service worker on its own into dist/player/sw.js
// (one classic script at the root, so its scope is the whole player). `--mode dashboard` builds the
// dashboard (dashboard/) into dist/dashboard, served on the dashboard origin.
import path from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig(({ mode }) => {
  if (mode === 'service-worker') {
    return {
      publicDir: false,
      build: {
        outDir: 'dist/player',
        emptyOutDir: false,
        sourcemap: true,
        target: 'es2022',
        lib: {
          entry: path.resolve(import.meta.dirname, 'player/src/offline/service-worker.ts'),
          formats: ['iife'],
          name: 'marqueeServiceWorker',
          fileName: () => 'sw.js',
        },
      },
    };
  }
  if (mode === 'dashboard') {
    return {
      root: 'dashboard',
      base: '/',
      publicDir: false,
      build: {
        outDir: '../dist/dashboard',
        emptyOutDir: true,
        sourcemap: true,
        target: 'es2022',
      },
    };
  }
  return {
    root: 'player',
    base: '/',
    build: {
      outDir: '../dist/player',
      emptyOutDir: true,
      sourcemap: true,
      target: 'es2022',
    },
  };
});
