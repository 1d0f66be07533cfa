// The manifest's `upcoming` section: what the screen shows from its next boundary, composed at mint
// time so a player cut off from the server then still switches (docs/decisions.md, "Offline switch
// at a boundary"). Only a boundary that changes the effective playlist gives one; a takeover's end
// is a boundary like a rule edge; its media are granted under the current revision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placementOf } from '../../sdk/contract/manifest';
import { TestClock } from '../clock';
import { imageDoc, imagePlacement, insertMedia, page } from '../playlists/content.fixtures';
import {
  applicationPlacement,
  createPlaylist,
  getManifest,
  packagedRelease,
  pairedPlayer,
  patchScreen,
  storedMedia,
  validManifest,
} from '../runtime/runtime.fixtures';
import { TestServer } from '../testing/harness';
import { lunch, MONDAY_MORNING_BERLIN } from '../fleet/schedules.fixtures';

const START = MONDAY_MORNING_BERLIN;

let server: TestServer;
let token: string;
let projectId: string;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock(START) });
  ({ token, projectId } = await server.enroll());
});
afterAll(async () => server.stop());

const playlist = async () => createPlaylist(server, token, imageDoc(await insertMedia(server, projectId)));

/** A paired player whose screen is in Berlin and shows its own default playlist. */
async function berlinPlayer() {
  server.clock.set(START);
  const player = await pairedPlayer(server, token);
  const defaultPlaylist = await playlist();
  await patchScreen(server, token, player.screen.id, { timezone: 'Europe/Berlin', playlist_id: defaultPlaylist });
  return { player, id: player.screen.id, defaultPlaylist };
}

const putSchedule = async (id: string, entries: unknown[]) => {
  const res = await server.request('PUT', `/api/v1/screens/${id}/playlist-schedule`, { token, json: { entries } });
  expect(res.status, res.text).toBe(200);
};

describe('upcoming', () => {
  it('carries the playlist of the next boundary, its media granted under the current revision', async () => {
    const { player, id, defaultPlaylist } = await berlinPlayer();
    const lunchMedia = await storedMedia(server, projectId, Buffer.from('lunch image bytes'));
    const lunchPlaylist = await createPlaylist(server, token, imageDoc(lunchMedia, 'Lunch'));
    await putSchedule(id, [lunch(lunchPlaylist)]);
    const { manifest } = await validManifest(server, player);
    expect(manifest.playlistId).toBe(defaultPlaylist);
    expect(manifest.upcoming).toMatchObject({
      at: '2026-11-23T10:30:00.000Z',
      playlistId: lunchPlaylist,
      playlistRevision: 1,
    });
    const hero = placementOf(manifest.upcoming!.pages[0]!.placements[0]!, 'image');
    expect(hero.content.items[0]!.mediaId).toBe(lunchMedia);
    expect(hero.content.items[0]!.src).toBe(`/content/v1/manifests/${manifest.manifestRevision}/media/${lunchMedia}`);
    expect(hero.content.grantId).toBe(manifest.grantId);
    const media = await server.request('GET', hero.content.items[0]!.src, { cookies: player.cookies });
    expect(media.status, media.text).toBe(200);
    expect(media.body.toString()).toBe('lunch image bytes');

    // At the boundary the reminted revision shows lunch, and carries the way back at 14:00.
    server.clock.set('2026-11-23T10:30:00Z');
    await server.services.boundaries.runDue();
    const after = (await validManifest(server, player)).manifest;
    expect(after.playlistId).toBe(lunchPlaylist);
    expect(after.upcoming).toMatchObject({ at: '2026-11-23T13:00:00.000Z', playlistId: defaultPlaylist });
  });

  it('is left out for a client that does not name it (an older player), with its own validator', async () => {
    const { player, id } = await berlinPlayer();
    await putSchedule(id, [lunch(await playlist())]);
    const asked = await getManifest(server, player);
    expect(asked.json().upcoming).toBeDefined();
    const older = await server.request('GET', '/runtime/v1/manifest', { cookies: player.cookies });
    expect(older.status).toBe(200);
    expect(older.json().upcoming).toBeUndefined();
    expect(older.json().nextBoundaryAt).toBe('2026-11-23T10:30:00.000Z');
    // The tag of one is not a 304 for the other.
    const crossed = await server.request('GET', '/runtime/v1/manifest', {
      cookies: player.cookies,
      headers: { 'if-none-match': asked.headers.etag as string },
    });
    expect(crossed.status).toBe(200);
    expect(
      (await getManifest(server, player, { headers: { 'if-none-match': asked.headers.etag as string } })).status,
    ).toBe(304);
  });

  it('is absent when the next boundary does not change the effective playlist', async () => {
    const { player, id, defaultPlaylist } = await berlinPlayer();
    // The lunch entry shows the default playlist itself: 11:30 is a boundary that switches nothing.
    await putSchedule(id, [lunch(defaultPlaylist)]);
    const { manifest } = await validManifest(server, player);
    expect(manifest.nextBoundaryAt).toBe('2026-11-23T10:30:00.000Z');
    expect(manifest.upcoming).toBeUndefined();
  });

  it("carries the takeover's end: the playlist the screen returns to", async () => {
    const { player, id, defaultPlaylist } = await berlinPlayer();
    const alert = await playlist();
    const res = await server.request('POST', `/api/v1/screens/${id}/takeover`, {
      token,
      json: { playlist_id: alert, until: '2026-11-23T08:05:00Z', reason: 'drill' },
    });
    expect(res.status, res.text).toBe(200);
    const { manifest } = await validManifest(server, player);
    expect(manifest.playlistId).toBe(alert);
    expect(manifest.upcoming).toMatchObject({ at: '2026-11-23T08:05:00.000Z', playlistId: defaultPlaylist });
  });

  it("marks a takeover's manifest, so the player cuts in rather than waiting for the page on glass", async () => {
    const { player, id, defaultPlaylist } = await berlinPlayer();
    expect((await validManifest(server, player)).manifest.takeover).toBeUndefined();
    const alert = await playlist();
    const res = await server.request('POST', `/api/v1/screens/${id}/takeover`, {
      token,
      json: { playlist_id: alert, until: '2026-11-23T08:05:00Z', reason: 'drill' },
    });
    expect(res.status, res.text).toBe(200);
    const during = (await validManifest(server, player)).manifest;
    expect(during).toMatchObject({ playlistId: alert, takeover: true });
    const cleared = await server.request('POST', `/api/v1/screens/${id}/takeover/clear`, { token, json: {} });
    expect(cleared.status, cleared.text).toBe(200);
    const after = (await validManifest(server, player)).manifest;
    expect(after.playlistId).toBe(defaultPlaylist);
    expect(after.takeover).toBeUndefined();
  });

  it('remints a minted manifest whose upcoming a schedule write changed, and only then (upcoming_changed)', async () => {
    const { player, id } = await berlinPlayer();
    const [first, second] = [await playlist(), await playlist()];
    await putSchedule(id, [lunch(first)]);
    const minted = (await validManifest(server, player)).manifest;
    expect(minted.upcoming?.playlistId).toBe(first);
    const revision = async () =>
      (
        await server.services.store.db
          .selectFrom('screens')
          .select('manifest_revision')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).manifest_revision;
    const before = await revision();
    // The effective playlist stays; what the screen shows from 11:30 does not.
    await putSchedule(id, [lunch(second)]);
    expect(await revision()).toBe(before + 1);
    const changed = await server.services.store.db
      .selectFrom('events')
      .select('details')
      .where('screen_id', '=', id)
      .where('type', '=', 'screen.manifest_changed')
      .orderBy('position', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(changed.details!)).toMatchObject({ reason: 'upcoming_changed' });
    expect((await validManifest(server, player)).manifest.upcoming?.playlistId).toBe(second);
    // The same plan written again changes nothing the manifest says.
    await putSchedule(id, [lunch(second)]);
    expect(await revision()).toBe(before + 1);
  });

  it('leaves application placements out (their capabilities need the server), and a page left empty', async () => {
    const { player, id } = await berlinPlayer();
    const { releaseId } = await packagedRelease(server, projectId);
    const image = await insertMedia(server, projectId);
    const mixed = await createPlaylist(server, token, {
      name: 'Mixed',
      pages: [
        page('apponly', [applicationPlacement('app', releaseId)]),
        page('both', [
          applicationPlacement('app', releaseId, { rect: { x: 0, y: 0, width: 960, height: 1080 }, layer: 1 }),
          imagePlacement('pic', { by: 'id', media_id: image }),
        ]),
      ],
    });
    await putSchedule(id, [lunch(mixed)]);
    const { manifest } = await validManifest(server, player);
    expect(manifest.upcoming!.pages.map((p) => p.id)).toEqual(['both']);
    expect(manifest.upcoming!.pages[0]!.placements.map((p) => p.id)).toEqual(['pic']);
  });
});
