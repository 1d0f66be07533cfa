// The dispatcher's index (routes by their first path segments) answers exactly what trying every
// route of the table in order answers: the same route, the same 405 allow list, the same 404.
import { match } from 'path-to-regexp';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { routeTable } from '../routes';
import { canonicalPath, Dispatcher, type Dispatch, type Plane } from './dispatch';

const PLANES: Plane[][] = [['control', 'runtime'], ['control'], ['runtime'], ['dashboard'], ['release']];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

const matchers = new Map<string, ReturnType<typeof match>>();
const matcherOf = (path: string) => {
  let m = matchers.get(path);
  if (!m) matchers.set(path, (m = match(path, { decode: (v) => v })));
  return m;
};

/** Every route tried in table order: what the dispatcher did before it had an index. */
function linear(planes: Plane[], method: string, pathname: string): string {
  const allow = new Set<string>();
  const matches = (path: string) => matcherOf(path)(pathname) !== false;
  for (const plane of planes) {
    for (const entry of routeTable.filter((e) => e.plane === plane)) {
      if (!matches(entry.path)) continue;
      const explicitHead = routeTable.some((e) => e.plane === plane && e.method === 'HEAD' && matches(e.path));
      if (entry.method === method || (method === 'HEAD' && entry.method === 'GET' && !explicitHead))
        return `route ${plane} ${routeTable.indexOf(entry)}`;
      allow.add(entry.method);
      if (entry.method === 'GET') allow.add('HEAD');
    }
  }
  return allow.size > 0 ? `405 ${[...allow].sort().join(',')}` : '404';
}

/** The route's number: the first entry of the table with its handler in its plane (handlers may repeat). */
function shown(d: Dispatch, reference: string): string {
  if (d.kind === 'not_found') return '404';
  if (d.kind === 'method_not_allowed') return `405 ${d.allow.join(',')}`;
  const expected = routeTable[Number(reference.split(' ')[2])];
  const index = expected?.route === d.route && expected.plane === d.plane ? routeTable.indexOf(expected) : -1;
  return `route ${d.plane} ${index}`;
}

/** A path each route matches, and variants that may or may not: upper case, trailing slash, a segment more or less. */
function samplePaths(): string[] {
  const paths = new Set<string>([
    '/',
    '/api',
    '/api/v1',
    '/API/V1/SCREENS',
    '/api//v1/screens',
    '/nothing/here/at/all',
  ]);
  for (const { path } of routeTable) {
    const filled = path
      .replace(/\{\*[a-z_]+\}/g, 'a/b.js')
      .replace(/\*[a-z_]+/g, 'x/y')
      .replace(/:[a-z_]+/g, 'id_1');
    paths.add(filled);
    paths.add(filled.toUpperCase());
    paths.add(`${filled}/`);
    paths.add(`${filled}/extra`);
    paths.add(filled.split('/').slice(0, -1).join('/') || '/');
  }
  return [...paths];
}

describe('Dispatcher', () => {
  it('dispatches every path like trying the whole table in order', () => {
    const dispatcher = new Dispatcher(routeTable, loadConfig({}, []));
    const paths = samplePaths();
    let compared = 0;
    for (const planes of PLANES)
      for (const method of METHODS)
        for (const path of paths) {
          const reference = linear(planes, method, path);
          expect(`${method} ${path} ${shown(dispatcher.dispatch(planes, method, path), reference)}`).toBe(
            `${method} ${path} ${reference}`,
          );
          compared++;
        }
    expect(compared).toBeGreaterThan(10_000);
  });
});

describe('canonicalPath', () => {
  it('spells a matched path as its pattern does, parameters as sent, for every idempotent route of the table', () => {
    expect(canonicalPath('/api/v1/screens/:id/commands', { id: 'scr_AbC' })).toBe('/api/v1/screens/scr_AbC/commands');
    expect(canonicalPath('/*asset_path', { asset_path: 'a/b' })).toBeUndefined();
    const dispatcher = new Dispatcher(routeTable, loadConfig({}));
    for (const entry of routeTable) {
      if (entry.route.policy.idempotency === undefined) continue;
      const path = entry.path.replace(/:(\w+)/g, 'x_Y1');
      const found = dispatcher.dispatch([entry.plane], entry.method, path.toUpperCase());
      if (found.kind !== 'route') throw new Error(`${entry.method} ${path} did not match upper-cased`);
      expect(canonicalPath(found.pattern, found.params), `${entry.method} ${entry.path}`).toBe(
        entry.path.replace(/:(\w+)/g, 'X_Y1'),
      );
    }
  });
});
