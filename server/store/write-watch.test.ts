// The write watch (write-watch.ts) on the engine MARQUEE_TEST_DATABASE_URL names: a watcher hears the
// updates that set a column it named and every delete of its table, and nothing of other tables.
import { expect, it } from 'vitest';
import { useTestStore } from '../testing/test-store';

const testStore = useTestStore('watch');

it('calls the watchers of the written table only: an update setting a named column, any delete', async () => {
  const heard: string[] = [];
  testStore.store.watchWrites('rate_windows', ['used'], () => heard.push('windows:used'));
  testStore.store.watchWrites('rate_windows', undefined, () => heard.push('windows:any'));
  testStore.store.watchWrites('screen_boundaries', undefined, () => heard.push('boundaries'));
  const { db } = testStore.store;
  await db.insertInto('rate_windows').values({ id: 'w1', window_start: 0, used: 1, ends_at: 60 }).execute();
  expect(heard).toEqual([]); // an insert changes no row a cache derived from
  await db.updateTable('rate_windows').set({ ends_at: 120 }).where('id', '=', 'w1').execute();
  expect(heard).toEqual(['windows:any']);
  await db.updateTable('rate_windows').set({ used: 2 }).where('id', '=', 'w1').execute();
  expect(heard).toEqual(['windows:any', 'windows:used', 'windows:any']);
  heard.length = 0;
  await db.deleteFrom('rate_windows').where('id', '=', 'w1').execute();
  expect(heard).toEqual(['windows:used', 'windows:any']);
  heard.length = 0;
  await db.updateTable('screens').set({ label: 'x' }).where('id', '=', 'scr_none').execute();
  await db.deleteFrom('screen_schedules').where('screen_id', '=', 'scr_none').execute();
  expect(heard).toEqual([]);
  await db.deleteFrom('screen_boundaries').where('screen_id', '=', 'scr_none').execute();
  expect(heard).toEqual(['boundaries']);
});

it('relays the writes that reached a watcher, and replays another process’s writes without relaying them (D-386)', async () => {
  const heard: string[] = [];
  const relayed: [string, readonly (string | undefined)[] | undefined][] = [];
  const { store } = testStore;
  store.watchWrites('media', ['state'], () => heard.push('media:state'));
  store.watchWrites('credentials', undefined, () => heard.push('credentials'));
  store.relayWatchedWrites((table, columns) => relayed.push([table, columns]));
  await store.db.updateTable('media').set({ tag: 'x' }).where('id', '=', 'med_none').execute();
  expect(relayed).toEqual([]); // reached no watcher
  await store.db.updateTable('media').set({ state: 'deleted', tag: 'y' }).where('id', '=', 'med_none').execute();
  await store.db.deleteFrom('credentials').where('id', '=', 'cred_none').execute();
  expect(relayed).toEqual([
    ['media', ['state', 'tag']],
    ['credentials', undefined],
  ]);
  expect(heard).toEqual(['media:state', 'credentials']);
  relayed.length = 0;
  heard.length = 0;
  store.replayWatchedWrite('media', ['tag']);
  expect(heard).toEqual([]);
  store.replayWatchedWrite('media', ['state']);
  store.replayWatchedWrite('credentials', 'delete');
  expect(heard).toEqual(['media:state', 'credentials']);
  heard.length = 0;
  store.replayAllWatchedWrites(); // writes may have been missed: every watcher
  expect(heard).toContain('media:state');
  expect(heard).toContain('credentials');
  expect(relayed).toEqual([]);
});
