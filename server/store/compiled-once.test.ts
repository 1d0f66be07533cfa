// Queries compiled once (compiled-once.ts) on the engine MARQUEE_TEST_DATABASE_URL names: each run
// carries its own values, in a transaction too, the query is built once per engine, and the write
// watch hears every run as it hears any other write.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../testing/test-database';
import { compiledOnce } from './compiled-once';
import { openStore, type Store } from './store';

const NOW = Date.parse('2026-11-25T12:00:00Z');

let built = 0;
const rename = compiledOnce<[name: string, id: string], { id: string; name: string; revision: number }>((db, slot) => {
  built++;
  return db
    .updateTable('tenants')
    .set((eb) => ({ name: slot(0), revision: eb('revision', '+', 1) }))
    .where('id', '=', slot(1))
    .where('status', '=', 'active')
    .returning(['id', 'name', 'revision']);
});

describe('a query compiled once', () => {
  const dirs: string[] = [];
  const databases: TestDatabase[] = [];
  const stores: Store[] = [];
  async function store(): Promise<Store> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-compiled-'));
    dirs.push(dir);
    const database = await testDatabase(dir);
    databases.push(database);
    const opened = await openStore(database.url);
    stores.push(opened);
    await opened.migrate();
    for (const [id, status] of [
      ['prj_a', 'active'],
      ['prj_b', 'active'],
      ['prj_c', 'suspended'],
    ] as const) {
      await opened.db
        .insertInto('tenants')
        .values({
          id,
          generation: 'P',
          name: 'before',
          email: `${id}@example.com`,
          status,
          plan: 'signage',
          independent_advertiser: 0,
          screens_enabled: 1,
          capabilities_revision: 1,
          revision: 1,
          used_bytes: 0,
          reserved_bytes: 0,
          content_limit_bytes: 1,
          screen_count: 0,
          screen_limit: 10,
          credit_millis: 0,
          credit_grant_month: '2026-11',
          client_id: null,
          intent: null,
          created_at: NOW,
          updated_at: NOW,
        })
        .execute();
    }
    return opened;
  }
  let first: Store;
  beforeAll(async () => {
    first = await store();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const d of databases) await d.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("runs with each run's values and keeps the constants it was built with", async () => {
    expect((await rename.run(first.db, 'one', 'prj_a')).rows).toEqual([{ id: 'prj_a', name: 'one', revision: 2 }]);
    expect((await rename.run(first.db, 'two', 'prj_b')).rows).toEqual([{ id: 'prj_b', name: 'two', revision: 2 }]);
    // The constant (status = 'active') is still in the statement: a suspended tenant is not touched.
    expect((await rename.run(first.db, 'three', 'prj_c')).rows).toEqual([]);
    const names = await first.db.selectFrom('tenants').select(['id', 'name']).orderBy('id').execute();
    expect(names).toEqual([
      { id: 'prj_a', name: 'one' },
      { id: 'prj_b', name: 'two' },
      { id: 'prj_c', name: 'before' },
    ]);
  });

  it('runs inside a transaction, rolled back with it', async () => {
    await expect(
      first.transaction(async (work) => {
        expect((await rename.run(work.db, 'in tx', 'prj_a')).rows[0]?.name).toBe('in tx');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const row = await first.db.selectFrom('tenants').select('name').where('id', '=', 'prj_a').executeTakeFirst();
    expect(row?.name).toBe('one');
  });

  it('is built once, however often and on whichever store of the engine it runs', async () => {
    await rename.run(first.db, 'warm', 'prj_a');
    const before = built;
    for (let i = 0; i < 5; i++) await rename.run(first.db, `n${i}`, 'prj_a');
    const second = await store();
    expect((await rename.run(second.db, 'other store', 'prj_b')).rows[0]?.name).toBe('other store');
    expect(built).toBe(before);
  });

  it("is seen by the store's write watch once at every run, the run that compiles it too", async () => {
    const suspend = compiledOnce<[id: string], never>((db, slot) =>
      db.updateTable('tenants').set({ status: 'suspended' }).where('id', '=', slot(0)),
    );
    let heard = 0;
    first.watchWrites('tenants', ['status'], () => heard++);
    await suspend.run(first.db, 'prj_a'); // compiles
    expect(heard).toBe(1);
    await first.transaction(async (work) => {
      await suspend.run(work.db, 'prj_b');
    });
    expect(heard).toBe(2);
  });
});
