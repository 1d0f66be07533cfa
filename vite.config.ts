// Builds the player (player/) for the browser into dist/player, served by the runtime plane.
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'player',
  base: '/',
  build: {
    outDir: '../dist/player',
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
  },
});
