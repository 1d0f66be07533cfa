// Bundles the `marquee` command (sdk/cli/main.ts) with everything it imports, its npm dependencies
// included, into one ES module with no imports but Node's own: dist/cli/marquee.mjs, what a
// published package ships and what the tests run (a process starts in about a third of the time
// tsx takes to compile the sources). Beside it, marquee.inputs.json lists the files it was built
// from, so the bin and the tests can tell a stale build (sdk/cli/bin/cli-bundle.js).
// The app bridge is looked up at ../../dist/sdk/marquee-app.js from the bundle as from
// sdk/pack/pack.ts: both sit two folders deep, so `app pack --runtime` finds the same file.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { defineConfig, type Plugin } from 'vite';

const repository = path.resolve(import.meta.dirname, '../..');
const outDir = path.join(repository, 'dist/cli');

/** Writes marquee.inputs.json: the repository's bundled sources, the lock file and this config. */
function recordInputs(): Plugin {
  return {
    name: 'marquee-cli-inputs',
    writeBundle() {
      const sources = [...this.getModuleIds()]
        .filter((id) => path.isAbsolute(id) && !id.includes(`${path.sep}node_modules${path.sep}`))
        .map((id) => path.relative(repository, id.split('?')[0]!))
        .filter((file) => !file.startsWith('..'));
      const inputs = [...new Set([...sources, 'package-lock.json', 'sdk/cli/vite.config.ts'])].sort();
      fs.writeFileSync(path.join(outDir, 'marquee.inputs.json'), `${JSON.stringify({ inputs }, null, 2)}\n`);
    },
  };
}

export default defineConfig({
  ssr: { noExternal: true },
  logLevel: 'warn',
  plugins: [recordInputs()],
  build: {
    outDir,
    emptyOutDir: true,
    target: 'node20',
    minify: true,
    ssr: path.resolve(import.meta.dirname, 'main.ts'),
    rollupOptions: {
      external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
      // One file: the human-output module the runner loads lazily is inlined, not a chunk.
      output: { format: 'es', entryFileNames: 'marquee.mjs', codeSplitting: false },
    },
  },
});
