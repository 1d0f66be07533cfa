import { describe, expect, it } from 'vitest';
import {
  CANVAS_CONTRACT_VERSION,
  WEBAPP_PACKAGE_CONTENT_TYPE,
  WEBAPP_PACKAGE_VERSION,
  parseRuntimeManifest,
  placementOf,
} from '../../sdk/contract/manifest';
import { canvas, changeMedia, iframePlacement, imageDoc, imagePlacement, page } from '../playlists/content.fixtures';
import { releaseHostLabel } from '../release-host/host-label';
import { randomKey } from '../testing/harness';
import { CAPABILITY_REFRESH_WINDOW_MS } from './manifest.routes';
import { manifestGrantId, manifestRevisionId } from '../manifests/manifest-ids';
import { PLACEMENT_CAPABILITY_TTL_MS } from './placement-capability';
import {
  anonymousPlayer,
  appPage,
  createPlaylist,
  getManifest,
  packagedRelease,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  validManifest,
  videoPlacement,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer({ at: '2026-11-21T12:00:10Z' });
const { clock } = env;

async function screenRow(id: string) {
  return env.server.services.store.db.selectFrom('screens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('the manifest of an unassigned screen', () => {
  it('is a valid manifest with no pages, named by the screen revision', async () => {
    const p = await env.player();
    const { manifest, etag } = await validManifest(env.server, p);
    const row = await screenRow(p.screen.id);
    expect(manifest).toEqual({
      schemaVersion: 2,
      manifestRevision: manifestRevisionId(p.screen.id, row.manifest_revision),
      grantId: manifestGrantId(p.screen.id, row.manifest_revision, 1),
      contentGeneration: 1,
      screenId: p.screen.id,
      screenLabel: row.label,
      playlistRevision: 0,
      generatedAt: expect.any(String),
      pages: [],
    });
    expect(manifest.manifestRevision).toMatch(/^man_1_[0-9a-f]{12}$/);
    // `.u`: the player names `upcoming` among the members it understands.
    expect(etag).toMatch(/^"m1\.g1\.s[0-9a-f]{10}\.u"$/);
  });

  it('answers 304 to If-None-Match with the current tag, and says private, no-store', async () => {
    const p = await env.player();
    const first = await getManifest(env.server, p);
    expect(first.headers['cache-control']).toBe('private, no-store');
    const again = await getManifest(env.server, p, { headers: { 'if-none-match': first.headers.etag as string } });
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.body.length).toBe(0);
    // A manifest without capabilities stays unchanged across capability windows.
    clock.advance(10 * CAPABILITY_REFRESH_WINDOW_MS);
    expect(
      (await getManifest(env.server, p, { headers: { 'if-none-match': `"x", ${first.headers.etag}` } })).status,
    ).toBe(304);
    expect((await getManifest(env.server, p, { headers: { 'if-none-match': '"m1.g1.sffffffffff"' } })).status).toBe(
      200,
    );
  });

  it('is refused without a runtime cookie', async () => {
    const res = await env.server.request('GET', '/runtime/v1/manifest');
    expect(res.status).toBe(401);
  });
});

describe('a manifest with every kind of content', () => {
  it('binds media, soundtrack and application URLs to the play origin and carries capabilities', async () => {
    const p = await env.player();
    const image = await storedMedia(env.server, env.tenantId, Buffer.from('image bytes'), { width: 1280, height: 720 });
    const video = await storedMedia(env.server, env.tenantId, Buffer.from('video bytes'), {
      kind: 'video',
      codecs: 'avc1.42001f',
      durationMs: 12_000,
    });
    const audio = await storedMedia(env.server, env.tenantId, Buffer.from('audio bytes'), {
      kind: 'audio',
      durationMs: 95_000,
    });
    const { applicationId, releaseId } = await packagedRelease(env.server, env.tenantId);
    const doc = {
      name: 'Everything',
      pages: [
        page('welcome', [
          imagePlacement('hero', { by: 'id', media_id: image }, { alt: 'Welcome' }),
          iframePlacement('ticker'),
        ]),
        page('clip', [videoPlacement('clip', video)], {
          advance: { mode: 'media_end' },
          transition: { type: 'swipe-left', duration_ms: 600 },
        }),
        appPage('board', releaseId),
      ],
      audio: { tracks: [{ media_id: audio }] },
    };
    const playlistId = await createPlaylist(env.server, env.token, doc);
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId, timezone: 'Europe/Berlin' });
    const row = await screenRow(p.screen.id);
    const rev = manifestRevisionId(p.screen.id, row.manifest_revision);

    const { manifest, etag } = await validManifest(env.server, p);
    expect(manifest.manifestRevision).toBe(rev);
    expect(manifest.playlistId).toBe(playlistId);
    expect(manifest.playlistRevision).toBe(1);
    expect(manifest.timezone).toBe('Europe/Berlin');
    expect(manifest.pages.map((pg) => pg.id)).toEqual(['welcome', 'clip', 'board']);
    expect(manifest.pages.every((pg) => pg.contractVersion === CANVAS_CONTRACT_VERSION)).toBe(true);

    const hero = placementOf(manifest.pages[0]!.placements[0]!, 'image');
    expect(hero.content).toEqual({
      type: 'image',
      items: [
        {
          mediaId: image,
          src: `/content/v1/manifests/${rev}/media/${image}`,
          intrinsicSize: { width: 1280, height: 720 },
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
          bytes: 11,
          contentType: 'image/webp',
        },
      ],
      oneAtATime: false,
      grantId: manifest.grantId,
      alt: 'Welcome',
    });
    expect(manifest.pages[0]!.placements[1]!.content).toEqual({
      type: 'iframe',
      src: 'https://example.com/ticker',
      title: 'Ticker',
    });

    const clip = manifest.pages[1]!;
    expect(clip.transition).toEqual({ type: 'swipe-left', durationMs: 600 });
    expect(clip.advance).toEqual({ mode: 'media_end', maxMs: 14_000 });
    expect(placementOf(clip.placements[0]!, 'video').content.items[0]).toMatchObject({
      mediaId: video,
      codecs: 'avc1.42001f',
      contentType: 'video/mp4',
    });

    const board = placementOf(manifest.pages[2]!.placements[0]!, 'application');
    expect(board.content).toEqual({
      type: 'application',
      applicationId,
      releaseId,
      launchUrl: `/runtime/v1/manifests/${rev}/releases/${releaseId}/launch`,
      origin: `http://${releaseHostLabel(releaseId)}.release.localhost:${env.server.port}`,
      protocol: '1',
      grantId: manifest.grantId,
      package: {
        version: WEBAPP_PACKAGE_VERSION,
        url: `/content/v1/manifests/${rev}/releases/${releaseId}/package`,
        bytes: expect.any(Number),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        entrypoint: 'index.html',
        contentType: WEBAPP_PACKAGE_CONTENT_TYPE,
      },
    });
    expect(board.controller).toBe(true);
    expect(board.capabilityHandle.length).toBeGreaterThanOrEqual(32);
    expect(Date.parse(board.capabilityExpiresAt)).toBe(clock.now() + PLACEMENT_CAPABILITY_TTL_MS);

    expect(manifest.soundtrack).toEqual({
      grantId: manifest.grantId,
      tracks: [
        {
          mediaId: audio,
          src: `/content/v1/manifests/${rev}/media/${audio}`,
          sha256: expect.any(String),
          bytes: 11,
          contentType: 'audio/mpeg',
          durationMs: 95_000,
        },
      ],
    });
    const window = Math.floor(clock.now() / CAPABILITY_REFRESH_WINDOW_MS);
    expect(etag).toMatch(new RegExp(`^"m${row.manifest_revision}\\.g1\\.s[0-9a-f]{10}\\.u\\.c${window}"$`));
  });

  it('keeps a 304 only within the capability window, so handles are never about to expire', async () => {
    const p = await env.player();
    const { releaseId } = await packagedRelease(env.server, env.tenantId);
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
    });
    clock.set(Math.floor(clock.now() / CAPABILITY_REFRESH_WINDOW_MS) * CAPABILITY_REFRESH_WINDOW_MS + 5_000);
    const first = await getManifest(env.server, p);
    const handle = placementOf(first.json().pages[0].placements[0]!, 'application').capabilityHandle;
    clock.advance(CAPABILITY_REFRESH_WINDOW_MS - 10_000); // still the same window: ≥ 4 minutes left
    expect(
      (await getManifest(env.server, p, { headers: { 'if-none-match': first.headers.etag as string } })).status,
    ).toBe(304);
    clock.advance(10_000); // the next window: fresh handles
    const refreshed = await getManifest(env.server, p, { headers: { 'if-none-match': first.headers.etag as string } });
    expect(refreshed.status).toBe(200);
    const next = placementOf(refreshed.json().pages[0].placements[0]!, 'application');
    expect(next.capabilityHandle).not.toBe(handle);
    expect(Date.parse(next.capabilityExpiresAt)).toBe(clock.now() + PLACEMENT_CAPABILITY_TTL_MS);
    expect(refreshed.json().manifestRevision).toBe(first.json().manifestRevision);
  });

  it('never answers 304 to another session', async () => {
    const p = await env.player();
    const first = await getManifest(env.server, p);
    const viewer = await anonymousPlayer(env.server, p.screen);
    const res = await getManifest(env.server, viewer, { headers: { 'if-none-match': first.headers.etag as string } });
    expect(res.status).toBe(200);
    expect(res.headers.etag).not.toBe(first.headers.etag);
  });

  it('shows an adslot page as its house fallback and leaves out placements whose selector matches nothing', async () => {
    const p = await env.player();
    const image = await storedMedia(env.server, env.tenantId, Buffer.from('fallback'));
    const tagged = await storedMedia(env.server, env.tenantId, Buffer.from('tagged'), { tag: 'gone' });
    const doc = {
      name: 'Ads',
      pages: [
        page('main', [
          imagePlacement('hero', { by: 'id', media_id: image }),
          imagePlacement('promo', { by: 'tag', tag: 'gone' }),
        ]),
        {
          type: 'adslot',
          id: 'break',
          slot: { key: 'lobby', duration_ms: 15_000 },
          transition: { type: 'crossfade', duration_ms: 200 },
          fallback: {
            canvas,
            advance: { mode: 'duration', after_ms: 5000 },
            placements: [imagePlacement('house', { by: 'id', media_id: image })],
          },
        },
      ],
    };
    const res = await env.server.request('POST', '/api/v2/playlists', {
      token: env.token,
      json: doc,
      idempotencyKey: randomKey(),
    });
    expect(res.status, res.text).toBe(201);
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: res.json().id });
    await changeMedia(env.server, env.tenantId, tagged, { tag: null }); // the tag selector now matches nothing
    const { manifest } = await validManifest(env.server, p);
    expect(manifest.pages.map((pg) => [pg.id, pg.placements.map((pl) => pl.id)])).toEqual([
      ['main', ['hero']],
      ['break', ['house']],
    ]);
    expect(manifest.pages[1]!.advance).toEqual({ mode: 'duration', afterMs: 5000 });
  });
});

describe('manifest revisions', () => {
  async function revisionOf(
    p: Player,
  ): Promise<{ rev: string; generation: number; grantId: string; etag: string; generatedAt: string }> {
    const { manifest, etag } = await validManifest(env.server, p);
    return {
      rev: manifest.manifestRevision,
      generation: manifest.contentGeneration,
      grantId: manifest.grantId,
      etag,
      generatedAt: manifest.generatedAt,
    };
  }

  async function assigned(): Promise<{ p: Player; playlistId: string; media: string }> {
    const p = await env.player();
    const media = await storedMedia(env.server, env.tenantId, Buffer.from('lobby'), { tag: 'lobby' });
    const playlistId = await createPlaylist(env.server, env.token, imageDoc(media));
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId });
    return { p, playlistId, media };
  }

  it('move on assignment and timezone change, and not on tag or label edits', async () => {
    const { p } = await assigned();
    const start = await revisionOf(p);
    await patchScreen(env.server, env.token, p.screen.id, { tags: ['lobby', 'east'] });
    await patchScreen(env.server, env.token, p.screen.id, { name: 'Renamed lobby' });
    expect(await revisionOf(p)).toEqual(start);
    expect((await getManifest(env.server, p, { headers: { 'if-none-match': start.etag } })).status).toBe(304);

    await patchScreen(env.server, env.token, p.screen.id, { timezone: 'America/New_York' });
    const zoned = await revisionOf(p);
    expect(zoned.rev).not.toBe(start.rev);
    expect((await getManifest(env.server, p, { headers: { 'if-none-match': start.etag } })).status).toBe(200);

    const other = await createPlaylist(
      env.server,
      env.token,
      imageDoc(await storedMedia(env.server, env.tenantId, Buffer.from('other'))),
    );
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: other });
    const reassigned = await revisionOf(p);
    expect(reassigned.rev).not.toBe(zoned.rev);
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: null });
    const { manifest } = await validManifest(env.server, p);
    expect(manifest.pages).toEqual([]);
    expect(manifest.manifestRevision).not.toBe(reassigned.rev);
  });

  it('move when the playlist is replaced', async () => {
    const { p, playlistId, media } = await assigned();
    const start = await revisionOf(p);
    const added = await storedMedia(env.server, env.tenantId, Buffer.from('second'));
    const put = await env.server.request('PUT', `/api/v1/playlists/${playlistId}`, {
      token: env.token,
      json: {
        name: 'Lobby loop',
        pages: [
          page('welcome', [imagePlacement('hero', { by: 'ids', media_ids: [media, added], one_at_a_time: true })]),
        ],
      },
      idempotencyKey: randomKey(),
    });
    expect(put.status, put.text).toBe(200);
    const replaced = await validManifest(env.server, p);
    expect(replaced.manifest.manifestRevision).not.toBe(start.rev);
    const items = placementOf(replaced.manifest.pages[0]!.placements[0]!, 'image').content.items.map((i) => i.mediaId);
    expect(items).toEqual([media, added]);
  });

  it('move when a tag change re-resolves the playlist the screen shows', async () => {
    const p = await env.player();
    const first = await storedMedia(env.server, env.tenantId, Buffer.from('one'), { tag: 'spring' });
    const playlistId = await createPlaylist(env.server, env.token, {
      name: 'Spring',
      pages: [page('spring', [imagePlacement('hero', { by: 'tag', tag: 'spring', one_at_a_time: true })])],
    });
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId });
    const before = await revisionOf(p);
    const second = await storedMedia(env.server, env.tenantId, Buffer.from('two'));
    await changeMedia(env.server, env.tenantId, second, { tag: 'spring' });
    const after = await validManifest(env.server, p);
    expect(after.manifest.manifestRevision).not.toBe(before.rev);
    const items = placementOf(after.manifest.pages[0]!.placements[0]!, 'image').content.items.map((i) => i.mediaId);
    expect(items).toEqual([first, second]);
  });

  it('serve the same immutable document for one revision (label edits show with the next revision)', async () => {
    const { p } = await assigned();
    const first = await validManifest(env.server, p);
    clock.advance(5000);
    await patchScreen(env.server, env.token, p.screen.id, { name: 'New label' });
    const again = await validManifest(env.server, p);
    expect(again.manifest).toEqual(first.manifest);
    await patchScreen(env.server, env.token, p.screen.id, { timezone: 'Asia/Tokyo' });
    expect((await validManifest(env.server, p)).manifest.screenLabel).toBe('New label');
  });

  it('darken on archive (no pages, no content) and come back on unarchive', async () => {
    const { p } = await assigned();
    const live = await revisionOf(p);
    const archived = await env.server.request('POST', `/api/v1/screens/${p.screen.id}/archive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(archived.status, archived.text).toBe(200);
    const dark = await validManifest(env.server, p);
    expect(dark.manifest.manifestRevision).not.toBe(live.rev);
    expect(dark.manifest.darkened).toBe(true);
    expect(dark.manifest.pages).toEqual([]);
    expect(dark.manifest.playlistId).toBeUndefined();
    expect(
      await env.server.services.store.db
        .selectFrom('runtime_manifest_content')
        .selectAll()
        .where('screen_id', '=', p.screen.id)
        .where('manifest_revision', '=', Number(dark.manifest.manifestRevision.split('_')[1]))
        .execute(),
    ).toEqual([]);

    await env.server.request('POST', `/api/v1/screens/${p.screen.id}/unarchive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    const back = await validManifest(env.server, p);
    expect(back.manifest.darkened).toBeUndefined();
    expect(back.manifest.pages).toHaveLength(1);
    expect(back.manifest.manifestRevision).not.toBe(dark.manifest.manifestRevision);
  });

  it('stay on a public-id rotation, whose grants are reissued at the new generation', async () => {
    const { p } = await assigned();
    const before = await revisionOf(p);
    const rotated = await env.server.request('POST', `/api/v1/screens/${p.screen.id}/public-id/rotate`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect((await getManifest(env.server, p)).status).toBe(401); // every runtime session ended
    const session = await env.server.request('POST', '/runtime/v1/device-sessions', { cookies: p.cookies });
    expect(session.status, session.text).toBe(201);
    const after = await revisionOf(p);
    expect(after.rev).toBe(before.rev);
    expect(after.generation).toBe(before.generation + 1);
    expect(after.grantId).not.toBe(before.grantId);
    expect(after.generatedAt).toBe(before.generatedAt);
  });

  it('end with the screen: a deleted screen has no manifest', async () => {
    const { p } = await assigned();
    await validManifest(env.server, p);
    const deleted = await env.server.request('DELETE', `/api/v1/screens/${p.screen.id}`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await getManifest(env.server, p)).status).toBe(401);
  });
});

describe('manifests as documents', () => {
  it('pass the player validator for an anonymous viewer too, whose capabilities grant reads only', async () => {
    const p = await env.player();
    const { releaseId } = await packagedRelease(env.server, env.tenantId);
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
    });
    const viewer = await anonymousPlayer(env.server, p.screen);
    const res = await getManifest(env.server, viewer);
    expect(res.status).toBe(200);
    const parsed = parseRuntimeManifest(res.json(), env.server.origin);
    expect(parsed.ok).toBe(true);
  });
});
