// Content references with the runtime's active grants: what a player has on glass stays in use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { imageDoc, insertRelease } from '../playlists/content.fixtures';
import { randomKey, TestServer } from '../testing/harness';
import { activate, appPage, createPlaylist, pairedPlayer, patchScreen, storedMedia, validManifest, type Player } from './runtime.fixtures';

let server: TestServer;
let token: string;
let tenantId: string;
const clock = new TestClock('2026-11-21T12:00:00Z');

beforeAll(async () => {
  server = await TestServer.start({ clock });
  ({ token, projectId: tenantId } = await server.enroll());
});
afterAll(async () => server.stop());

async function player(): Promise<Player> {
  clock.advance(61_000);
  return pairedPlayer(server, token);
}

const deleteMedia = (id: string) => server.request('DELETE', `/api/v1/media/${id}`, { token, idempotencyKey: randomKey() });
const deleteApplication = (id: string) => server.request('DELETE', `/api/v1/applications/${id}`, { token, idempotencyKey: randomKey() });

/** The player shows `doc`, activates it, then the screen is unassigned (nothing desired any more). */
async function shownThenUnassigned(doc: unknown): Promise<{ p: Player; playlistId: string; next: string }> {
  const p = await player();
  const playlistId = await createPlaylist(server, token, doc);
  await patchScreen(server, token, p.screen.id, { playlist_id: playlistId });
  await activate(server, p, (await validManifest(server, p)).manifest.manifestRevision);
  await patchScreen(server, token, p.screen.id, { playlist_id: null });
  const next = (await validManifest(server, p)).manifest.manifestRevision;
  // The playlist itself is gone too: only the player's active grant refers to the content now.
  expect((await server.request('DELETE', `/api/v1/playlists/${playlistId}`, { token, idempotencyKey: randomKey() })).status).toBe(204);
  return { p, playlistId, next };
}

describe('active grants', () => {
  it('keep media in use until the player activates a manifest without it', async () => {
    const media = await storedMedia(server, tenantId, Buffer.from('on glass'));
    const { p, next } = await shownThenUnassigned(imageDoc(media));
    const refused = await deleteMedia(media);
    expect(refused.status).toBe(409);
    expect(refused.json().detail).toMatch(/desired or active/);
    await activate(server, p, next);
    expect((await deleteMedia(media)).status).toBe(204);
  });

  it('keep an application in use (application_in_use) until the player moves on', async () => {
    const { applicationId, releaseId } = await insertRelease(server, tenantId);
    const { p, next } = await shownThenUnassigned({ name: 'App', pages: [appPage('board', releaseId)] });
    const refused = await deleteApplication(applicationId);
    expect(refused.status).toBe(409);
    expect(refused.json().code).toBe('application_in_use');
    await activate(server, p, next);
    expect((await deleteApplication(applicationId)).status).toBe(204);
  });

  it('end when the screen is archived or deleted', async () => {
    const archivedMedia = await storedMedia(server, tenantId, Buffer.from('archived'));
    const a = await shownThenUnassigned(imageDoc(archivedMedia));
    expect((await deleteMedia(archivedMedia)).status).toBe(409);
    expect((await server.request('POST', `/api/v1/screens/${a.p.screen.id}/archive`, { token, idempotencyKey: randomKey() })).status).toBe(200);
    expect((await deleteMedia(archivedMedia)).status).toBe(204);

    const deletedMedia = await storedMedia(server, tenantId, Buffer.from('deleted'));
    const d = await shownThenUnassigned(imageDoc(deletedMedia));
    expect((await deleteMedia(deletedMedia)).status).toBe(409);
    expect((await server.request('DELETE', `/api/v1/screens/${d.p.screen.id}`, { token, idempotencyKey: randomKey() })).status).toBe(204);
    expect((await deleteMedia(deletedMedia)).status).toBe(204);
  });

  it('keep the desired rules of the playlists feature', async () => {
    const media = await storedMedia(server, tenantId, Buffer.from('desired'));
    const p = await player();
    await patchScreen(server, token, p.screen.id, { playlist_id: await createPlaylist(server, token, imageDoc(media)) });
    expect((await deleteMedia(media)).status).toBe(409); // assigned, never fetched nor activated
  });
});
