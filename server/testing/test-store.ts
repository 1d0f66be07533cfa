// One test file's store: a migrated store on a fresh test database (the engine
// MARQUEE_TEST_DATABASE_URL names, else SQLite in a temporary dir), made before the file's tests and
// closed and dropped after them. `another()` opens a second pool on the same database, as another
// replica would hold (closed with the first).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../store/store';
import { WRITE_SETTLE_MS } from '../store/watched-cache';
import { testDatabase, type TestDatabase } from './test-database';

export interface TestStore {
  /** The migrated store (set once the file's beforeAll ran). */
  readonly store: Store;
  /** A second store on the same database. */
  another(): Promise<Store>;
}

export function useTestStore(name: string): TestStore {
  let dir = '';
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  const others: Store[] = [];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `marquee-${name}-`));
    database = await testDatabase(dir);
    store = await openStore(database.url);
    await store.migrate();
  });
  afterAll(async () => {
    for (const other of others) await other.close();
    await store?.close();
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    get store() {
      if (!store) throw new Error('useTestStore: the store is made in beforeAll');
      return store;
    },
    async another() {
      if (!database) throw new Error('useTestStore: the database is made in beforeAll');
      const other = await openStore(database.url);
      others.push(other);
      return other;
    },
  };
}

/**
 * Waits until the store's caches keep what they read again after a watched write: at once on SQLite,
 * WRITE_SETTLE_MS on PostgreSQL (watched-cache.ts). For tests that look at what a cache kept.
 */
export async function watchedWritesSettled(store: Store): Promise<void> {
  if (store.driver.engine === 'postgres') await new Promise((r) => setTimeout(r, WRITE_SETTLE_MS + 10));
}
