// Runtime housekeeping and failure paths: pruning old manifests and orphaned packages, and a
// manifest that cannot be built answering manifest_degraded rather than something half-made.
import { describe, expect, it } from 'vitest';
import { imageDoc, insertRelease } from '../playlists/content.fixtures';
import { randomKey } from '../testing/harness';
import { SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';
import { pruneManifests } from './runtime.module';
import {
  activate,
  appPage,
  createPlaylist,
  getManifest,
  packagedRelease,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  validManifest,
} from './runtime.fixtures';

const env = useEnrolledServer();
const { clock } = env;
const DAY = 24 * 3600_000;

async function revisions(screenId: string): Promise<number[]> {
  const rows = await env.server.services.store.db
    .selectFrom('runtime_manifests')
    .select('manifest_revision')
    .where('screen_id', '=', screenId)
    .orderBy('manifest_revision')
    .execute();
  return rows.map((r) => r.manifest_revision);
}

describe('pruning', () => {
  it('drops superseded manifests a day past their grace, but never the active or the newest one', async () => {
    const p = await env.player();
    const media = await storedMedia(env.server, env.tenantId, Buffer.from('x'));
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(media)),
    });
    const first = await validManifest(env.server, p);
    await activate(env.server, p, first.manifest.manifestRevision);
    for (const zone of ['Europe/Berlin', 'Europe/Paris', 'Europe/Rome']) {
      await patchScreen(env.server, env.token, p.screen.id, { timezone: zone });
      await validManifest(env.server, p);
    }
    const minted = await revisions(p.screen.id);
    expect(minted).toHaveLength(4);
    await pruneManifests(env.server.services, clock.now() + DAY); // within retention
    expect(await revisions(p.screen.id)).toEqual(minted);
    await pruneManifests(env.server.services, clock.now() + DAY + SUPERSEDED_MANIFEST_GRACE_MS + 1);
    expect(await revisions(p.screen.id)).toEqual([minted[0], minted[3]]); // the active one and the newest
    const content = await env.server.services.store.db
      .selectFrom('runtime_manifest_content')
      .select('manifest_revision')
      .distinct()
      .where('screen_id', '=', p.screen.id)
      .execute();
    expect(content.map((c) => c.manifest_revision).sort()).toEqual([minted[0], minted[3]]);
  });

  it('drops the manifests of deleted screens and the packages of deleted releases', async () => {
    const p = await env.player();
    const { releaseId } = await packagedRelease(env.server, env.tenantId);
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
    });
    await validManifest(env.server, p);
    expect(
      await env.server.services.store.db
        .selectFrom('release_packages')
        .selectAll()
        .where('release_id', '=', releaseId)
        .execute(),
    ).toHaveLength(1);
    expect(
      (
        await env.server.request('DELETE', `/api/v1/screens/${p.screen.id}`, {
          token: env.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(204);
    await env.server.services.store.db
      .updateTable('releases')
      .set({ deleted_at: clock.now(), state: 'deleted' })
      .where('id', '=', releaseId)
      .execute();
    await pruneManifests(env.server.services, clock.now());
    expect(await revisions(p.screen.id)).toEqual([]);
    expect(
      await env.server.services.store.db
        .selectFrom('release_packages')
        .selectAll()
        .where('release_id', '=', releaseId)
        .execute(),
    ).toEqual([]);
  });
});

describe('a manifest that cannot be built', () => {
  it('answers manifest_degraded while a package is built (Retry-After 10) and once it cannot be (60), and stores nothing', async () => {
    const p = await env.player();
    const { releaseId } = await insertRelease(env.server, env.tenantId);
    // The release index names a file whose bytes are missing from the blob store.
    await env.server.services.store.db
      .insertInto('release_files')
      .values({ release_id: releaseId, path: 'index.html', ordinal: 0, bytes: 10 })
      .execute();
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, {
        name: 'Broken',
        pages: [appPage('board', releaseId)],
      }),
    });
    const res = await getManifest(env.server, p);
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('manifest_degraded');
    expect(res.headers['retry-after']).toBe('10'); // queued for building
    await env.server.services.packageBuilds.idle();
    const failed = await getManifest(env.server, p);
    expect(failed.json().code).toBe('manifest_degraded');
    expect(failed.headers['retry-after']).toBe('60');
    const row = await env.server.services.store.db
      .selectFrom('screens')
      .select('manifest_revision')
      .where('id', '=', p.screen.id)
      .executeTakeFirstOrThrow();
    expect(await revisions(p.screen.id)).not.toContain(row.manifest_revision);
  });
});
