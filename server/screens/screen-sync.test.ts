// Lockstep fields of a screen (issue 15): sync_group and wall_region through PATCH, in the screen
// view, in screen.updated, and in the manifest the screen's player plays.
import { describe, expect, it } from 'vitest';
import { imageDoc } from '../playlists/content.fixtures';
import { SYNC_EPOCH_LEAD_MS } from '../manifests/manifest-compose';
import {
  createPlaylist,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  validManifest,
} from '../runtime/runtime.fixtures';

const env = useEnrolledServer();

async function screenEvents(screenId: string, type: string) {
  const rows = await env.server.services.store.db
    .selectFrom('events')
    .select(['type', 'details'])
    .where('screen_id', '=', screenId)
    .where('type', '=', type)
    .orderBy('position')
    .execute();
  return rows.map((r) => JSON.parse(r.details!) as Record<string, unknown>);
}

const patch = (id: string, json: unknown) =>
  env.server.request('PATCH', `/api/v1/screens/${id}`, { token: env.token, json });

const quarter = { x: 1920, y: 0, width: 1920, height: 1080 };

describe('sync_group and wall_region', () => {
  it('sets both in one PATCH: shown in the view, named in screen.updated, and the manifest reminted', async () => {
    const p = await env.player();
    const before = (await env.server.request('GET', `/api/v1/screens/${p.screen.id}`, { token: env.token })).json();
    const res = await patch(p.screen.id, { sync_group: 'wall1', wall_region: quarter });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({
      sync_group: 'wall1',
      wall_region: quarter,
      revision: before.revision + 1,
      manifest_revision: before.manifest_revision + 1,
    });
    const read = await env.server.request('GET', `/api/v1/screens/${p.screen.id}`, { token: env.token });
    expect(read.json()).toMatchObject({ sync_group: 'wall1', wall_region: quarter });
    const updated = (await screenEvents(p.screen.id, 'screen.updated')).at(-1)!;
    expect(updated).toMatchObject({
      changes: ['sync_group', 'wall_region'],
      sync_group: 'wall1',
      wall_region: quarter,
    });
    expect((await screenEvents(p.screen.id, 'screen.manifest_changed')).at(-1)).toMatchObject({
      reason: 'sync_changed',
    });
  });

  it('changes nothing for the current values, and leaving the group leaves the wall', async () => {
    const p = await env.player();
    const set = (await patch(p.screen.id, { sync_group: 'wall2', wall_region: quarter })).json();
    const same = await patch(p.screen.id, { sync_group: 'wall2', wall_region: { ...quarter } });
    expect(same.json().revision).toBe(set.revision);
    const left = await patch(p.screen.id, { sync_group: null });
    expect(left.json()).toMatchObject({ revision: set.revision + 1 });
    expect(left.json().sync_group).toBeUndefined();
    expect(left.json().wall_region).toBeUndefined();
    expect((await screenEvents(p.screen.id, 'screen.updated')).at(-1)).toMatchObject({
      changes: ['sync_group', 'wall_region'],
      sync_group: null,
      wall_region: null,
    });
    // A region alone may be cleared while the group stays.
    await patch(p.screen.id, { sync_group: 'wall2', wall_region: quarter });
    const whole = await patch(p.screen.id, { wall_region: null });
    expect(whole.json().sync_group).toBe('wall2');
    expect(whole.json().wall_region).toBeUndefined();
  });

  it.each([
    ['a group outside the tag grammar', { sync_group: 'wall-1' }, 'sync_group'],
    ['a group too long', { sync_group: 'w'.repeat(33) }, 'sync_group'],
    ['a negative x', { sync_group: 'w', wall_region: { ...quarter, x: -1 } }, 'wall_region.x'],
    ['a zero width', { sync_group: 'w', wall_region: { ...quarter, width: 0 } }, 'wall_region.width'],
    ['a missing height', { sync_group: 'w', wall_region: { x: 0, y: 0, width: 10 } }, 'wall_region.height'],
    ['a region beyond any canvas', { sync_group: 'w', wall_region: { ...quarter, y: 1e9 } }, 'wall_region.y'],
    ['an unknown region key', { sync_group: 'w', wall_region: { ...quarter, z: 1 } }, 'wall_region.z'],
    ['a region without a group', { wall_region: quarter }, 'wall_region'],
  ])('refuses %s with invalid_request naming the field', async (_what, json, field) => {
    const p = await env.player();
    const res = await patch(p.screen.id, json);
    expect(res.status).toBe(400);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
    const read = await env.server.request('GET', `/api/v1/screens/${p.screen.id}`, { token: env.token });
    expect(read.json().revision).toBe(p.screen.revision);
  });
});

describe('the manifest of a screen in a sync group', () => {
  it('carries the group, the region, and an epoch shared by every member of the playlist revision', async () => {
    const mediaId = await storedMedia(env.server, env.tenantId, Buffer.from('wall'));
    const written = env.clock.now();
    const playlistId = await createPlaylist(env.server, env.token, imageDoc(mediaId));
    const [left, right, alone] = [await env.player(), await env.player(), await env.player()];
    for (const p of [left, right, alone])
      await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId });
    await patchScreen(env.server, env.token, left.screen.id, {
      sync_group: 'lobby',
      wall_region: { x: 0, y: 0, width: 960, height: 1080 },
    });
    await patchScreen(env.server, env.token, right.screen.id, { sync_group: 'lobby' });
    const [l, r, a] = await Promise.all(
      [left, right, alone].map(async (p) => (await validManifest(env.server, p)).manifest),
    );
    expect(l!.sync).toEqual({
      group: 'lobby',
      epoch: new Date(written + SYNC_EPOCH_LEAD_MS).toISOString(),
      wallRegion: { x: 0, y: 0, width: 960, height: 1080 },
    });
    expect(r!.sync).toEqual({ group: 'lobby', epoch: l!.sync!.epoch });
    expect(a!.sync).toBeUndefined();
  });

  it('moves the epoch when the playlist is written again, so the group starts the new revision together', async () => {
    const mediaId = await storedMedia(env.server, env.tenantId, Buffer.from('again'));
    const playlistId = await createPlaylist(env.server, env.token, imageDoc(mediaId));
    const p = await env.player();
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId, sync_group: 'lobby' });
    const first = (await validManifest(env.server, p)).manifest.sync!.epoch;
    env.clock.advance(90_000);
    const revised = imageDoc(mediaId);
    revised.pages[0]!.advance = { mode: 'duration', after_ms: 9000 };
    const res = await env.server.request('PUT', `/api/v1/playlists/${playlistId}`, { token: env.token, json: revised });
    expect(res.status, res.text).toBe(200);
    const second = (await validManifest(env.server, p)).manifest.sync!.epoch;
    // The written revision's instant (the clock stands still between the PUT and here) plus the lead.
    expect(Date.parse(second)).toBe(env.clock.now() + SYNC_EPOCH_LEAD_MS);
    expect(Date.parse(second) - Date.parse(first)).toBeGreaterThanOrEqual(90_000);
  });
});
