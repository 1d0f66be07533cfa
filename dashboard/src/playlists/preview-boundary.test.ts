// What the dashboard takes from the player: the playback engine and the soundtrack (live preview) and
// the canvas geometry (the to-scale drawing), nothing of the player's runtime (its session, manifest
// fetch, reports, service worker), so the preview makes no runtime call, only the dashboard's own.
// And the engine is loaded only by the dynamic import in the playlist page: never part of the
// dashboard's first load.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../../..');
const dashboard = path.join(repo, 'dashboard', 'src');
const player = path.join(repo, 'player', 'src') + path.sep;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !/\.fixtures\.ts$/.test(e.name) ? [full] : [];
  });
}

/** Relative module specifiers a file loads at run time (type-only imports are erased). */
function runtimeImports(file: string): { spec: string; dynamic: boolean }[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: { spec: string; dynamic: boolean }[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+['"]([^'"]+)['"]/gms))
    if (!m[2]) found.push({ spec: m[3]!, dynamic: false });
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push({ spec: m[1]!, dynamic: false });
  for (const m of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push({ spec: m[1]!, dynamic: true });
  return found.filter((i) => i.spec.startsWith('.'));
}

function resolve(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')])
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  return null;
}

/** Every player/src file the dashboard reaches at run time, following imports inside the player. */
function playerClosure(): Set<string> {
  const reached = new Set<string>();
  const queue = sources(dashboard).flatMap((file) =>
    runtimeImports(file)
      .map((i) => resolve(file, i.spec))
      .filter((f): f is string => f?.startsWith(player) === true),
  );
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (reached.has(file)) continue;
    reached.add(file);
    for (const i of runtimeImports(file)) {
      const next = resolve(file, i.spec);
      if (next?.startsWith(player)) queue.push(next);
    }
  }
  return reached;
}

describe('the dashboard’s use of the player', () => {
  it('reaches only the playback engine, the soundtrack and the canvas geometry', () => {
    const outside = [...playerClosure()]
      .map((f) => path.relative(repo, f))
      .filter((f) => !/^player\/src\/(playback|soundtrack)\//.test(f));
    expect(outside).toEqual([]);
    expect([...playerClosure()].map((f) => path.relative(repo, f))).toContain('player/src/playback/playback-engine.ts');
  });

  it('loads the live preview (and with it the engine) only by a dynamic import', () => {
    const staticImporters = sources(dashboard).filter((file) =>
      runtimeImports(file).some((i) => !i.dynamic && resolve(file, i.spec)?.endsWith(`${path.sep}LivePreview.tsx`)),
    );
    expect(staticImporters.map((f) => path.relative(repo, f))).toEqual([]);
    const engineImporters = sources(dashboard).filter((file) =>
      runtimeImports(file).some((i) => resolve(file, i.spec)?.endsWith(`${path.sep}playback-engine.ts`)),
    );
    expect(engineImporters.map((f) => path.relative(repo, f))).toEqual(['dashboard/src/playlists/LivePreview.tsx']);
  });
});
