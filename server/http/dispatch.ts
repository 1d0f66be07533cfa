// Host-based routing to planes, then path and method matching over the one route table.
// Unknown paths answer not_found, known paths with another method method_not_allowed.
import { match, type MatchFunction } from 'path-to-regexp';
import type { Config } from '../config';
import { problem } from '../problem';
import type { RouteHandler } from './route';

export type Plane = 'control' | 'runtime' | 'release' | 'dashboard';
export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteEntry {
  plane: Plane;
  method: Method;
  /** path-to-regexp syntax: `/api/v1/screens/:id`, `/*asset_path`. */
  path: string;
  route: RouteHandler;
}

interface Compiled {
  entry: RouteEntry;
  matcher: MatchFunction<Record<string, string | string[]>>;
}

/** How many leading path segments index the routes. */
const KEY_SEGMENTS = 3;
/** Pattern syntax besides `:name` parameters: wildcards, optional groups. */
const WILDCARD = /[*{}()?+!\\]/;

/**
 * The index key of a pattern: its first KEY_SEGMENTS segments when they are all literal, else
 * undefined (such routes are candidates for every path). Lower-cased: matching ignores case.
 */
function patternKey(pattern: string): string | undefined {
  const segments = pattern.split('/', KEY_SEGMENTS + 1).slice(1);
  if (segments.length < KEY_SEGMENTS || segments.some((s) => s === '' || s.includes(':') || WILDCARD.test(s)))
    return undefined;
  return segments.join('/').toLowerCase();
}

/**
 * The path as the matched pattern spells it, with the request's parameters: one spelling for every
 * path that matches (paths match whatever their case), so an idempotency record is found again
 * however a retry spells its path. Undefined for a pattern with wildcards or optional parts.
 */
export function canonicalPath(pattern: string, params: Record<string, string>): string | undefined {
  if (WILDCARD.test(pattern)) return undefined;
  return pattern.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** The index key of a request path: its first KEY_SEGMENTS segments, as they are. */
function pathKey(pathname: string): string {
  let end = 0;
  for (let i = 0; i < KEY_SEGMENTS; i++) {
    end = pathname.indexOf('/', end + 1);
    if (end === -1) return pathname.slice(1).toLowerCase();
  }
  return pathname.slice(1, end).toLowerCase();
}

/**
 * A plane's routes in table order, indexed by their first segments: a path is tried only against
 * the routes that share them and those with parameters early on, in table order still (D-371).
 */
class PlaneRoutes {
  private readonly byKey = new Map<string, Compiled[]>();
  private readonly unkeyed: Compiled[];

  constructor(all: Compiled[]) {
    const keys = all.map((c) => patternKey(c.entry.path));
    this.unkeyed = all.filter((_, i) => keys[i] === undefined);
    for (const key of new Set(keys)) {
      if (key !== undefined)
        this.byKey.set(
          key,
          all.filter((_, i) => keys[i] === key || keys[i] === undefined),
        );
    }
  }

  candidates(pathname: string): Compiled[] {
    return this.byKey.get(pathKey(pathname)) ?? this.unkeyed;
  }
}

export type Dispatch =
  | { kind: 'route'; route: RouteHandler; params: Record<string, string>; plane: Plane; pattern: string }
  | { kind: 'method_not_allowed'; allow: string[]; plane: Plane }
  | { kind: 'not_found'; planes: Plane[] };

export class Dispatcher {
  private readonly byPlane = new Map<Plane, PlaneRoutes>();
  private readonly releaseHost: RegExp;
  private readonly dashboardHost: string;
  private readonly controlHost: string;
  private readonly playHost: string;

  constructor(table: RouteEntry[], config: Config) {
    const planes = new Map<Plane, Compiled[]>();
    for (const entry of table) {
      const list = planes.get(entry.plane) ?? [];
      list.push({ entry, matcher: match(entry.path, { decode: safeDecode }) });
      planes.set(entry.plane, list);
    }
    for (const [plane, list] of planes) this.byPlane.set(plane, new PlaneRoutes(list));
    const releaseSuffix = new URL(config.releaseOrigin.replace('{label}', 'x')).host.slice(1);
    this.releaseHost = new RegExp(`^([^.]+)${escapeRegExp(releaseSuffix)}$`, 'i');
    this.dashboardHost = new URL(config.dashboardOrigin).host.toLowerCase();
    this.controlHost = new URL(config.controlOrigin).host.toLowerCase();
    this.playHost = new URL(config.playOrigin).host.toLowerCase();
  }

  /** The planes a Host serves; hosts the configuration does not name reach control and runtime. */
  planesFor(host: string): { planes: Plane[]; releaseLabel?: string } {
    const h = host.toLowerCase();
    const release = this.releaseHost.exec(h);
    if (release) return { planes: ['release'], releaseLabel: release[1]!.toLowerCase() };
    if (h === this.dashboardHost) return { planes: ['dashboard'] };
    const control = h === this.controlHost;
    const play = h === this.playHost;
    if (control && !play) return { planes: ['control'] };
    if (play && !control) return { planes: ['runtime'] };
    return { planes: ['control', 'runtime'] };
  }

  dispatch(planes: Plane[], method: string, pathname: string): Dispatch {
    const allow = new Set<string>();
    let allowPlane: Plane | undefined;
    for (const plane of planes) {
      for (const { entry, matcher } of this.byPlane.get(plane)?.candidates(pathname) ?? []) {
        const m = matcher(pathname);
        if (!m) continue;
        if (
          entry.method === method ||
          (method === 'HEAD' && entry.method === 'GET' && !this.hasExplicitHead(plane, pathname))
        ) {
          return { kind: 'route', route: entry.route, params: flatten(m.params), plane, pattern: entry.path };
        }
        allow.add(entry.method);
        if (entry.method === 'GET') allow.add('HEAD');
        allowPlane ??= plane;
      }
    }
    if (allow.size > 0) return { kind: 'method_not_allowed', allow: [...allow].sort(), plane: allowPlane! };
    return { kind: 'not_found', planes };
  }

  private hasExplicitHead(plane: Plane, pathname: string): boolean {
    return (this.byPlane.get(plane)?.candidates(pathname) ?? []).some(
      ({ entry, matcher }) => entry.method === 'HEAD' && matcher(pathname) !== false,
    );
  }
}

function flatten(params: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join('/') : v;
  return out;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw problem('invalid_request', 'the request path has a malformed percent-encoding');
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
