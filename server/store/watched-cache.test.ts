// The shared short-lived cache (watched-cache.ts): lifetime, bound, and which writes empty it.
import { describe, expect, it, vi } from 'vitest';
import { useTestStore } from '../testing/test-store';
import type { Store } from './store';
import { WatchedCache, WRITE_SETTLE_MS } from './watched-cache';

const testStore = useTestStore('watched-cache');

/** A cache over media rows' digests, and how many times it read. */
function digests(ttlMs = 60_000, maxEntries = 100) {
  const cache = new WatchedCache<string>(testStore.store, {
    ttlMs,
    maxEntries,
    watches: [{ table: 'media', columns: ['sha256', 'state'] }],
  });
  let reads = 0;
  const get = (key: string) =>
    cache.get(key, async () => {
      reads++;
      return `${key}:${reads}`;
    });
  return { cache, get, reads: () => reads };
}

// The watch looks at the statement, not at the rows it touched: none need exist.
const update = (set: Record<string, string>) =>
  testStore.store.db.updateTable('media').set(set).where('id', '=', 'med_none').execute();

describe('WatchedCache', () => {
  it('answers from the cache within its lifetime and reads again after it', async () => {
    const { cache, get, reads } = digests(50);
    expect(await get('a')).toBe('a:1');
    expect(await get('a')).toBe('a:1');
    expect(cache.peek('a')).toBe('a:1');
    expect(reads()).toBe(1);
    await new Promise((r) => setTimeout(r, 70));
    expect(cache.peek('a')).toBeUndefined();
    expect(await get('a')).toBe('a:2');
  });

  it('is emptied by an update of a watched column or a delete, and kept by other columns', async () => {
    const { get, reads } = digests();
    await get('a');
    await update({ tag: 'retagged', filename: 'x.mp4' });
    expect(await get('a')).toBe('a:1');
    await update({ sha256: 'f'.repeat(64) });
    expect(await get('a')).toBe('a:2');
    await update({ state: 'deleted' });
    expect(await get('a')).toBe('a:3');
    await testStore.store.db.deleteFrom('media').where('id', '=', 'med_none').execute();
    expect(await get('a')).toBe('a:4');
    expect(reads()).toBe(4);
  });

  it('does not keep a value read while a watched write ran', async () => {
    const { cache } = digests();
    const value = await cache.get('a', async () => {
      await update({ state: 'deleted' });
      return 'stale';
    });
    expect(value).toBe('stale');
    expect(cache.peek('a')).toBeUndefined();
  });

  it('keeps only what `keep` allows, nothing with a lifetime of 0, and at most maxEntries', async () => {
    const { cache } = digests(60_000, 2);
    await cache.get(
      'miss',
      async () => '',
      (v) => v !== '',
    );
    expect(cache.peek('miss')).toBeUndefined();
    for (const key of ['a', 'b', 'c']) await cache.get(key, async () => key);
    expect(cache.size).toBe(2);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('c')).toBe('c');
    const none = digests(0);
    await none.get('a');
    expect(none.cache.size).toBe(0);
  });
});

describe('WatchedCache on PostgreSQL', () => {
  it('keeps what it read within WRITE_SETTLE_MS of a watched write only until then: the write may not have committed', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      let changed = () => {};
      const store = {
        driver: { engine: 'postgres' },
        watchWrites: (_table: string, _columns: unknown, fn: () => void) => {
          changed = fn;
        },
      } as unknown as Store;
      const cache = new WatchedCache<string>(store, { ttlMs: 60_000, maxEntries: 10, watches: [{ table: 'media' }] });
      await cache.get('a', async () => 'before');
      expect(cache.peek('a')).toBe('before');
      changed();
      vi.advanceTimersByTime(WRITE_SETTLE_MS / 2);
      await cache.get('a', async () => 'maybe the old row');
      expect(cache.peek('a')).toBe('maybe the old row'); // serves the settle's other lookups
      vi.advanceTimersByTime(WRITE_SETTLE_MS / 2);
      expect(cache.peek('a')).toBeUndefined(); // and is read again once the write has surely committed
      await cache.get('a', async () => 'after');
      vi.advanceTimersByTime(30_000);
      expect(cache.peek('a')).toBe('after'); // kept for its whole lifetime again
    } finally {
      vi.useRealTimers();
    }
  });
});
