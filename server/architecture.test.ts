// The server's layering, held by its imports: no import cycles; the HTTP layer imports no feature;
// feature code outside *.routes.ts never imports express; state beside the services lives only in
// the named caches; nothing here imports the clients (player/, dashboard/, packaging/).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const server = import.meta.dirname;
const repo = path.dirname(server);
const rel = (file: string) => path.relative(server, file);

/** TypeScript files under `dir`: its sources, or (with `tests`) its tests. */
function sources(dir: string, tests = false): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full, tests);
    return /\.tsx?$/.test(e.name) && /\.test\.tsx?$/.test(e.name) === tests ? [full] : [];
  });
}

/** Every module specifier a file names: static imports and re-exports (type-only too), dynamic imports. */
function specifiers(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(([, spec]) => spec!);
}

/** The source file a relative specifier names, if it is one of ours. */
function resolved(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = path.resolve(path.dirname(from), spec);
  return [target, `${target}.ts`, `${target}.tsx`, path.join(target, 'index.ts')].find((f) => fs.existsSync(f));
}

const files = sources(server);
const imports = new Map(files.map((f) => [f, specifiers(f)]));
const edges = new Map(
  files.map((f) => [
    f,
    imports
      .get(f)!
      .flatMap((s) => resolved(f, s) ?? [])
      .filter((t) => t.startsWith(server)),
  ]),
);

/** Strongly connected components with more than one file (or a file importing itself): Tarjan. */
function cycles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(rel(w));
    } while (w !== v);
    if (component.length > 1 || edges.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

/** Folders of server/ that are not features: the HTTP layer itself, and the test harness. */
const NOT_FEATURES = new Set(['http', 'testing']);
/** Root modules that compose the features; the HTTP layer must not reach them either. */
const COMPOSITION = new Set(['app.ts', 'default-services.ts', 'main.ts', 'modules.ts', 'routes.ts', 'serve.ts']);
const folderOf = (file: string) => (rel(file).includes(path.sep) ? rel(file).split(path.sep)[0]! : undefined);

describe('server architecture', () => {
  it('has no import cycles among server sources (type-only imports count too)', () => {
    expect(cycles()).toEqual([]);
  });

  it('keeps the HTTP layer free of features: server/http/ imports only itself, the store and root modules', () => {
    const offenders = files
      .filter((f) => folderOf(f) === 'http')
      .flatMap((f) =>
        edges
          .get(f)!
          .filter((t) => {
            const folder = folderOf(t);
            return folder === undefined ? COMPOSITION.has(rel(t)) : folder !== 'http' && folder !== 'store';
          })
          .map((t) => `${rel(f)} → ${rel(t)}`),
      );
    expect(offenders).toEqual([]);
  });

  it('keeps express out of feature code: only *.routes.ts files of a feature import it', () => {
    const offenders = files.filter((f) => {
      const folder = folderOf(f);
      if (folder === undefined || NOT_FEATURES.has(folder) || f.endsWith('.routes.ts')) return false;
      return imports.get(f)!.some((s) => s === 'express' || s.startsWith('express/'));
    });
    expect(offenders.map(rel)).toEqual([]);
  });

  it('keeps per-server state in Services: a WeakMap appears only in the named caches (caches.ts)', () => {
    // Not per-server state: a memo keyed by the screen object one change returns, read by the same
    // request's answer and gone with that object (D-281).
    const perObject = ['manifests/screen-resolution.ts'];
    const offenders = files.filter(
      (f) =>
        rel(f) !== 'caches.ts' && !perObject.includes(rel(f)) && /\bnew WeakMap\b/.test(fs.readFileSync(f, 'utf8')),
    );
    expect(offenders.map(rel)).toEqual([]);
  });

  it('imports none of the clients: player/, dashboard/, packaging/ (they import sdk/, never the server)', () => {
    const clients = ['player', 'dashboard', 'packaging'].map((d) => path.join(repo, d) + path.sep);
    const offenders = [...sources(server), ...sources(server, true)].filter((f) =>
      specifiers(f).some((s) => {
        if (!s.startsWith('.')) return false;
        const target = path.resolve(path.dirname(f), s);
        return clients.some((c) => target.startsWith(c));
      }),
    );
    expect(offenders.map(rel)).toEqual([]);
  });
});
