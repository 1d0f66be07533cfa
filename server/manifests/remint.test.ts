import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlaylistWriteV2 } from '../../sdk/contract/playlist';
import { findPlaylist, replacePlaylist, resolveForWrite } from '../playlists/playlists';
import { imageDoc, insertMedia } from '../playlists/content.fixtures';
import { TestServer } from '../testing/harness';
import { StatementLog } from '../testing/statement-log';
import { insertScreensShowing } from './manifests.fixtures';
import { remintReason, type ScreenShowing } from './remint';

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => server.stop());

describe('the remint rule', () => {
  const live: ScreenShowing = {
    state: 'active',
    effective_playlist_id: 'pl_a',
    timezone: 'Europe/Berlin',
    sync_group: null,
    wall_region: null,
  };

  it('remints when the effective playlist or the timezone changes, assignment first', () => {
    expect(remintReason(live, { ...live, effective_playlist_id: 'pl_b' }, null)).toBe('playlist_assigned');
    expect(remintReason(live, { ...live, effective_playlist_id: null }, null)).toBe('playlist_assigned');
    expect(remintReason(live, { ...live, timezone: 'Asia/Tokyo' }, null)).toBe('timezone_changed');
    expect(remintReason(live, { ...live, effective_playlist_id: 'pl_b', timezone: 'Asia/Tokyo' }, null)).toBe(
      'playlist_assigned',
    );
    expect(remintReason(live, { ...live, effective_playlist_id: 'pl_s' }, 'boundary')).toBe('playlist_switched');
    expect(remintReason(live, { ...live, effective_playlist_id: 'pl_t' }, 'takeover')).toBe('playlist_switched');
    const pending: ScreenShowing = { ...live, state: 'pairing_pending' };
    expect(remintReason(pending, { ...pending, effective_playlist_id: 'pl_b' }, null)).toBe('playlist_assigned');
  });

  it('remints when the screen joins or leaves a sync group or its wall region moves (the manifest carries them)', () => {
    const grouped: ScreenShowing = { ...live, sync_group: 'wall' };
    expect(remintReason(live, grouped, null)).toBe('sync_changed');
    expect(remintReason(grouped, live, null)).toBe('sync_changed');
    expect(remintReason(grouped, { ...grouped, sync_group: 'lobby' }, null)).toBe('sync_changed');
    const region = { ...grouped, wall_region: '{"x":0,"y":0,"width":1920,"height":1080}' };
    expect(remintReason(grouped, region, null)).toBe('sync_changed');
    expect(remintReason(region, region, null)).toBeNull();
    expect(remintReason({ ...live, state: 'archived' }, { ...grouped, state: 'archived' }, null)).toBeNull();
  });

  it('remints on archive and unarchive, and never for changes while the glass is dark', () => {
    const archived: ScreenShowing = { ...live, state: 'archived' };
    expect(remintReason(live, archived, null)).toBe('archived');
    expect(remintReason(archived, live, null)).toBe('unarchived');
    expect(
      remintReason(archived, { ...archived, effective_playlist_id: 'pl_b', timezone: 'Asia/Tokyo' }, null),
    ).toBeNull();
  });

  it('does not remint for activation, deletion or an unchanged screen', () => {
    expect(remintReason({ ...live, state: 'pairing_pending' }, live, null)).toBeNull();
    expect(remintReason(live, { ...live, state: 'deleted' }, null)).toBeNull();
    expect(remintReason(live, live, null)).toBeNull();
  });
});

const screensShowing = (tenantId: string, playlistId: string, count: number) =>
  insertScreensShowing(server.services, tenantId, playlistId, count);

/** Replaces the playlist with another image (a new served document) and logs the statements it ran. */
async function replaceLogged(tenantId: string, playlistId: string): Promise<string[]> {
  const { services } = server;
  const doc = PlaylistWriteV2.parse(imageDoc(await insertMedia(server, tenantId), 'Replaced'));
  const log = new StatementLog();
  await services.store.transaction(async (work) => {
    const logged = { ...work, db: work.db.withPlugin(log) };
    const before = await findPlaylist(logged.db, tenantId, playlistId);
    const resolution = await resolveForWrite(logged, tenantId, doc);
    log.clear(); // what the replacement writes, not what reading the document took
    await replacePlaylist(services, logged, before, { doc, resolution, now: server.clock.now() });
  });
  return log.statements;
}

describe('set-based remint', () => {
  it('remints 500 screens showing an edited playlist with the statements one screen takes', async () => {
    const { token, projectId } = await server.enroll();
    const created = async () => {
      const res = await server.request('POST', '/api/v1/playlists', {
        token,
        json: imageDoc(await insertMedia(server, projectId)),
      });
      expect(res.status).toBe(201);
      return res.json().id as string;
    };
    const one = await created();
    await screensShowing(projectId, one, 1);
    const many = await created();
    const screens = await screensShowing(projectId, many, 500);

    const forOne = await replaceLogged(projectId, one);
    const forMany = await replaceLogged(projectId, many);
    expect(forMany).toEqual(forOne);
    const counts = new StatementLog();
    counts.statements.push(...forMany);
    // Two screen reads: the screens scheduling it (to re-resolve; none here) and those showing it.
    expect(counts.counts()).toMatchObject({ 'Select screens': 2, 'Update screens': 1, 'Insert events': 2 });

    const { db } = server.services.store;
    const revisions = await db.selectFrom('screens').select('manifest_revision').where('id', 'in', screens).execute();
    expect(new Set(revisions.map((r) => r.manifest_revision))).toEqual(new Set([2]));
    const signalled = await db
      .selectFrom('events')
      .select(['screen_id', 'details', 'runtime'])
      .where('tenant_id', '=', projectId)
      .where('type', '=', 'screen.manifest_changed')
      .where('screen_id', 'in', screens)
      .orderBy('position')
      .execute();
    expect(signalled.map((e) => e.screen_id)).toEqual([...screens].sort());
    expect(signalled.every((e) => e.runtime === 1)).toBe(true);
    expect(JSON.parse(signalled[0]!.details!)).toEqual({
      manifest_revision: 2,
      content_access_generation: 1,
      reason: 'playlist_updated',
    });
  });

  it('leaves archived screens and other tenants’ screens alone', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const playlist = (
      await server.request('POST', '/api/v1/playlists', {
        token: a.token,
        json: imageDoc(await insertMedia(server, a.projectId)),
      })
    ).json().id as string;
    const [kept, archived] = await screensShowing(a.projectId, playlist, 2);
    const [foreign] = await screensShowing(b.projectId, playlist, 1); // a forged reference across tenants
    const { db } = server.services.store;
    await db.updateTable('screens').set({ state: 'archived' }).where('id', '=', archived!).execute();
    await replaceLogged(a.projectId, playlist);
    const revisions = Object.fromEntries(
      (
        await db
          .selectFrom('screens')
          .select(['id', 'manifest_revision'])
          .where('id', 'in', [kept!, archived!, foreign!])
          .execute()
      ).map((r) => [r.id, r.manifest_revision]),
    );
    expect(revisions).toEqual({ [kept!]: 2, [archived!]: 1, [foreign!]: 1 });
  });
});
