// Content references with the runtime's active grants: what a player has on glass stays in use.
import { describe, expect, it } from 'vitest';
import { imageDoc } from '../playlists/content.fixtures';
import { randomKey } from '../testing/harness';
import {
  activate,
  appPage,
  createPlaylist,
  packagedRelease,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  validManifest,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer();

const deleteMedia = (id: string) =>
  env.server.request('DELETE', `/api/v1/media/${id}`, { token: env.token, idempotencyKey: randomKey() });
const deleteApplication = (id: string) =>
  env.server.request('DELETE', `/api/v1/applications/${id}`, { token: env.token, idempotencyKey: randomKey() });

/** The player shows `doc`, activates it, then the screen is unassigned (nothing desired any more). */
async function shownThenUnassigned(doc: unknown): Promise<{ p: Player; playlistId: string; next: string }> {
  const p = await env.player();
  const playlistId = await createPlaylist(env.server, env.token, doc);
  await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId });
  await activate(env.server, p, (await validManifest(env.server, p)).manifest.manifestRevision);
  await patchScreen(env.server, env.token, p.screen.id, { playlist_id: null });
  const next = (await validManifest(env.server, p)).manifest.manifestRevision;
  // The playlist itself is gone too: only the player's active grant refers to the content now.
  expect(
    (
      await env.server.request('DELETE', `/api/v1/playlists/${playlistId}`, {
        token: env.token,
        idempotencyKey: randomKey(),
      })
    ).status,
  ).toBe(204);
  return { p, playlistId, next };
}

describe('active grants', () => {
  it('keep media in use until the player activates a manifest without it', async () => {
    const media = await storedMedia(env.server, env.tenantId, Buffer.from('on glass'));
    const { p, next } = await shownThenUnassigned(imageDoc(media));
    const refused = await deleteMedia(media);
    expect(refused.status).toBe(409);
    expect(refused.json().detail).toMatch(/desired or active/);
    await activate(env.server, p, next);
    expect((await deleteMedia(media)).status).toBe(204);
  });

  it('keep an application in use (application_in_use) until the player moves on', async () => {
    const { applicationId, releaseId } = await packagedRelease(env.server, env.tenantId);
    const { p, next } = await shownThenUnassigned({ name: 'App', pages: [appPage('board', releaseId)] });
    const refused = await deleteApplication(applicationId);
    expect(refused.status).toBe(409);
    expect(refused.json().code).toBe('application_in_use');
    await activate(env.server, p, next);
    expect((await deleteApplication(applicationId)).status).toBe(204);
  });

  it('end when the screen is archived or deleted', async () => {
    const archivedMedia = await storedMedia(env.server, env.tenantId, Buffer.from('archived'));
    const a = await shownThenUnassigned(imageDoc(archivedMedia));
    expect((await deleteMedia(archivedMedia)).status).toBe(409);
    expect(
      (
        await env.server.request('POST', `/api/v1/screens/${a.p.screen.id}/archive`, {
          token: env.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(200);
    expect((await deleteMedia(archivedMedia)).status).toBe(204);

    const deletedMedia = await storedMedia(env.server, env.tenantId, Buffer.from('deleted'));
    const d = await shownThenUnassigned(imageDoc(deletedMedia));
    expect((await deleteMedia(deletedMedia)).status).toBe(409);
    expect(
      (
        await env.server.request('DELETE', `/api/v1/screens/${d.p.screen.id}`, {
          token: env.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(204);
    expect((await deleteMedia(deletedMedia)).status).toBe(204);
  });

  it('keep the desired rules of the playlists feature', async () => {
    const media = await storedMedia(env.server, env.tenantId, Buffer.from('desired'));
    const p = await env.player();
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(media)),
    });
    expect((await deleteMedia(media)).status).toBe(409); // assigned, never fetched nor activated
  });
});
