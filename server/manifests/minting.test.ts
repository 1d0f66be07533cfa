import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageDoc, insertMedia, insertRelease } from '../playlists/content.fixtures';
import { appPage } from '../runtime/runtime.fixtures';
import { TestServer } from '../testing/harness';
import { StatementLog } from '../testing/statement-log';
import { insertScreensShowing } from './manifests.fixtures';
import { MINTS_PER_TRANSACTION, currentManifest } from './minting';

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => server.stop());

async function playlist(token: string, doc: unknown): Promise<string> {
  const res = await server.request('POST', '/api/v2/playlists', { token, json: doc });
  expect(res.status).toBe(201);
  return res.json().id;
}

/** Runs fn with every statement of the store logged (the store's own transactions included). */
async function logged<T>(fn: () => Promise<T>): Promise<{ result: T; log: StatementLog }> {
  const store = server.services.store as unknown as { db: unknown };
  const plain = store.db;
  const log = new StatementLog();
  store.db = server.services.store.db.withPlugin(log);
  try {
    return { result: await fn(), log };
  } finally {
    store.db = plain;
  }
}

describe('minting', () => {
  it('mints first fetches that arrive together in one transaction per batch, each screen its own document', async () => {
    const { token, projectId } = await server.enroll();
    const shown = await playlist(token, imageDoc(await insertMedia(server, projectId)));
    const screens = await insertScreensShowing(server.services, projectId, shown, 2 * MINTS_PER_TRANSACTION + 20);
    const { result, log } = await logged(() => Promise.all(screens.map((id) => currentManifest(server.services, id))));
    expect(result.map((r) => [r.screenId, r.revision, r.stored.playlistId])).toEqual(
      screens.map((id) => [id, 1, shown]),
    );
    expect(new Set(result.map((r) => r.stored.screenLabel)).size).toBe(screens.length);
    // A few batches, each with one read of the playlists and one INSERT per table: not one
    // transaction per screen. Three when every fetch reaches the minter before the first batch
    // starts; on PostgreSQL, whose reads before it complete one by one on a busy machine, a few
    // more (five seen): at least ten screens a transaction all the same.
    const counts = log.counts();
    const batches = counts['Insert runtime_manifests']!;
    expect(batches).toBeGreaterThanOrEqual(Math.ceil(screens.length / MINTS_PER_TRANSACTION));
    expect(batches).toBeLessThanOrEqual(screens.length / 10);
    expect(counts['Insert runtime_manifest_content']).toBe(batches);
    expect(counts['Select playlists']).toBe(batches);
    // Minted once: the next fetches read what is stored.
    const again = await logged(() => currentManifest(server.services, screens[0]!));
    expect(again.result.stored).toEqual(result[0]!.stored);
    expect(again.log.statements.filter((s) => s.startsWith('Insert'))).toEqual([]);
  });

  it('fails only the screen whose manifest cannot be minted yet; the others of its batch are minted', async () => {
    const { token, projectId } = await server.enroll();
    const { releaseId } = await insertRelease(server, projectId); // published, its package not built yet
    const app = await playlist(token, { name: 'App', pages: [appPage('board', releaseId)] });
    const image = await playlist(token, imageDoc(await insertMedia(server, projectId)));
    const [waiting] = await insertScreensShowing(server.services, projectId, app, 1);
    const fine = await insertScreensShowing(server.services, projectId, image, 3);
    const outcomes = await Promise.allSettled([waiting!, ...fine].map((id) => currentManifest(server.services, id)));
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: { code: 'manifest_degraded' } });
    expect(outcomes.slice(1).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('answers a deleted screen as an ended session, and another tenant’s playlist as none', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const theirs = await playlist(b.token, imageDoc(await insertMedia(server, b.projectId)));
    const [forged, gone] = await insertScreensShowing(server.services, a.projectId, theirs, 2);
    await server.services.store.db.updateTable('screens').set({ state: 'deleted' }).where('id', '=', gone!).execute();
    const [shown, deleted] = await Promise.allSettled([
      currentManifest(server.services, forged!),
      currentManifest(server.services, gone!),
    ]);
    expect(shown).toMatchObject({ status: 'fulfilled', value: { stored: { pages: [], playlistRevision: 0 } } });
    expect(deleted).toMatchObject({ status: 'rejected', reason: { code: 'unauthorized' } });
  });
});
