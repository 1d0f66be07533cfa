// A short-lived in-process cache of values read from the store, emptied as this process writes the
// rows they derive from (Store.watchWrites): what this process changes is seen by the very next
// lookup; what another replica on PostgreSQL changes, once its relayed write arrives (D-386); what
// another process changes otherwise (the operator CLI on SQLite), within `ttlMs`. A lookup that
// raced a watched write is answered but not kept. Lifetimes run on monotonic time, so the bound
// holds whatever the request clock says. The credential, ready-media and named-content caches of
// the hot routes are all one of these (D-370).
import { serverCache, type CacheName } from '../caches';
import type { Database } from './schema';
import type { Store } from './store';

export interface WatchedRows {
  table: keyof Database & string;
  /** The columns the cached values derive from; an update setting none of them keeps the cache. Omitted: any update. */
  columns?: readonly string[];
}

export interface WatchedCacheOptions {
  /** The longest an entry is trusted without reading it again; 0 keeps nothing. */
  ttlMs: number;
  /** Entries held at most; past this the oldest goes. */
  maxEntries: number;
  /** Updates and deletes of these rows (by this process) empty the cache. */
  watches: readonly WatchedRows[];
}

/**
 * On PostgreSQL a watched write is seen as its statement runs, before its transaction commits (here
 * or, relayed, on another replica): what lookups read in the next WRITE_SETTLE_MS may be the rows as
 * they were, and is kept only until that time has passed, then read again. A transaction slower than
 * this leaves the entry's lifetime as the bound.
 */
export const WRITE_SETTLE_MS = 1_000;

export class WatchedCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  /** Moves on with every invalidation, so a lookup that raced one is not kept. */
  private generation = 0;
  /** What lookups started before this (monotonic) time read is kept at most until then. */
  private settledAt = 0;
  private readonly settleMs: number;

  constructor(
    store: Store,
    private readonly options: WatchedCacheOptions,
  ) {
    // SQLite runs one transaction at a time on one connection: no read sees a row between a
    // watched statement and its commit.
    this.settleMs = store.driver.engine === 'postgres' ? WRITE_SETTLE_MS : 0;
    const forget = () => this.clear();
    for (const w of options.watches) store.watchWrites(w.table, w.columns, forget);
  }

  /** Entries held now (tests). */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    if (this.settleMs > 0) this.settledAt = performance.now() + this.settleMs;
  }

  /** The fresh value under `key`, or undefined; synchronous, so a hit costs the hot routes no promise. */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.until > performance.now()) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /**
   * The fresh value under `key`, else what `load` reads, kept when `keep` allows it (a miss that
   * should be read again next time is not kept) and no watched write ran meanwhile.
   */
  async get(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const started = performance.now();
    const value = await load();
    if (generation === this.generation && this.options.ttlMs > 0 && keep(value)) this.set(key, value, started);
    return value;
  }

  private set(key: string, value: V, readAt: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const until = readAt + this.options.ttlMs;
    this.entries.set(key, { value, until: readAt < this.settledAt ? Math.min(until, this.settledAt) : until });
  }
}

/** Every store-owned watched cache defined with watchedCache, to be made with the services. */
const defined: ((store: Store) => unknown)[] = [];

/**
 * A named server cache (caches.ts) over the store: one WatchedCache per store, made by
 * makeWatchedCaches when the services are built, not on first use, because a replica relays only
 * the writes its own caches watch (D-386): one that had served no player range yet would not tell
 * the others of a session's revocation.
 */
export function watchedCache<V>(name: CacheName, options: WatchedCacheOptions): (store: Store) => WatchedCache<V> {
  const cache = serverCache(name, (store: Store) => new WatchedCache<V>(store, options));
  defined.push(cache);
  return cache;
}

/** Makes every cache defined with watchedCache for this store (buildServices). */
export function makeWatchedCaches(store: Store): void {
  for (const cache of defined) cache(store);
}
