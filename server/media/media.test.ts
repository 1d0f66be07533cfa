import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import type { MediaChange } from '../references';
import { noReferences } from '../references';
import { TestServer, randomKey } from '../testing/harness';
import { image, mp3, uploadReady, video } from './media.fixtures';

let server: TestServer;
let token: string;
/** What the test references seam saw and answers: playlists stand-in. */
const seam = { inUse: new Set<string>(), changes: [] as MediaChange[], failChange: false };

beforeAll(async () => {
  server = await TestServer.start({
    clock: new TestClock('2026-11-21T12:00:00Z'),
    beforeListen: (services) => {
      services.references = {
        ...noReferences,
        mediaInUse: async (_work, _tenantId, mediaId) => seam.inUse.has(mediaId),
        mediaChanged: async (work, tenantId, change) => {
          // Writes inside the caller's transaction, so a failure here must undo the caller's change.
          await work.db.updateTable('tenants').set({ updated_at: Date.now() }).where('id', '=', tenantId).execute();
          if (seam.failChange) throw new Error('rematerialization failed');
          seam.changes.push(change);
        },
      };
    },
  });
});
afterAll(async () => server.stop());
beforeEach(async () => {
  token = (await server.enroll()).token;
  seam.inUse.clear();
  seam.changes = [];
  seam.failChange = false;
});

const project = async (t = token) => (await server.request('GET', '/api/v1/project', { token: t })).json();

describe('GET /api/v1/media', () => {
  it('lists ready media newest first, with cursor paging and a bounded limit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      server.clock.advance(1000);
      ids.push((await uploadReady(server, token, await image('png', 10 + i, 10), 'image/png')).id);
    }
    // A declared but unfinished upload is not listed.
    await server.request('POST', '/api/v1/media/uploads', {
      token,
      json: { filename: 'x.png', content_type: 'image/png', bytes: 5, sha256: 'c'.repeat(64) },
      idempotencyKey: randomKey(),
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await server.request('GET', `/api/v1/media?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect(res.status).toBe(200);
      const page = res.json();
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((m: { id: string }) => m.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const all = (await server.request('GET', '/api/v1/media', { token })).json();
    expect(all.items).toHaveLength(5);
    expect(all.next_cursor).toBeNull();
  });

  it.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=x'],
    ['cursor=notacursor'],
    ['kind=document'],
    ['tag=bad-tag'],
    ['surprise=1'],
  ])('refuses %s with invalid_request', async (q) => {
    const res = await server.request('GET', `/api/v1/media?${q}`, { token });
    expect(res.status).toBe(400);
    expect(res.json().code).toBe('invalid_request');
  });

  it('filters by exact tag (untagged omitted) and by kind', async () => {
    const lobby = await uploadReady(server, token, await image('png'), 'image/png', { tag: 'lobby' });
    const lobbyClip = await uploadReady(server, token, await video('mp4'), 'video/mp4', { tag: 'lobby' });
    await uploadReady(server, token, await image('jpeg'), 'image/jpeg', { tag: 'Lobby' });
    const untagged = await uploadReady(server, token, mp3(), 'audio/mpeg');
    const ids = async (q: string) =>
      (await server.request('GET', `/api/v1/media?${q}`, { token }))
        .json()
        .items.map((m: { id: string }) => m.id)
        .sort();
    expect(await ids('tag=lobby')).toEqual([lobby.id, lobbyClip.id].sort());
    expect(await ids('tag=lobby&kind=video')).toEqual([lobbyClip.id]);
    expect(await ids('kind=audio')).toEqual([untagged.id]);
    expect(await ids('tag=nothing')).toEqual([]);
  });
});

describe('GET /api/v1/media/{id}', () => {
  it("answers not_found for another project's media everywhere", async () => {
    const media = await uploadReady(server, token, await image('png'), 'image/png');
    const { token: other } = await server.enroll();
    for (const [method, path, json] of [
      ['GET', `/api/v1/media/${media.id}`, undefined],
      ['PATCH', `/api/v1/media/${media.id}`, { tag: 'x' }],
      ['DELETE', `/api/v1/media/${media.id}`, undefined],
      ['GET', `/api/v1/media/${media.id}/content`, undefined],
      ['HEAD', `/api/v1/media/${media.id}/content`, undefined],
    ] as const) {
      const res = await server.request(method, path, { token: other, json, idempotencyKey: randomKey() });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await server.request('GET', '/api/v1/media', { token: other })).json().items).toEqual([]);
    expect((await server.request('GET', `/api/v1/media/med_unknown`, { token })).status).toBe(404);
  });

  it('reads the same media with an account bearer (Model A)', async () => {
    const { token: account } = await server.createAccount();
    const media = await uploadReady(server, account, await image('gif'), 'image/gif');
    const res = await server.request('GET', `/api/v1/media/${media.id}`, { token: account });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ id: media.id, kind: 'image', state: 'ready' });
    expect(res.json().tag).toBeUndefined();
  });
});

describe('PATCH /api/v1/media/{id}', () => {
  it('replaces the tag, bumps the revision and tells the playlists seam in the same transaction', async () => {
    const media = await uploadReady(server, token, await image('png'), 'image/png', { tag: 'lobby' });
    expect(seam.changes).toEqual([{ mediaId: media.id, tags: ['lobby'] }]);
    const res = await server.request('PATCH', `/api/v1/media/${media.id}`, {
      token,
      json: { tag: 'foyer' },
      ifMatch: 1,
    });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    expect(res.json()).toMatchObject({ tag: 'foyer', revision: 2 });
    expect(seam.changes.at(-1)).toEqual({ mediaId: media.id, tags: ['lobby', 'foyer'] });
    expect((await server.request('GET', `/api/v1/media/${media.id}`, { token })).json().tag).toBe('foyer');
    const events = await server.services.store.db
      .selectFrom('events')
      .select(['type', 'details'])
      .where('resource_id', '=', media.id)
      .where('type', '=', 'media.updated')
      .execute();
    expect(JSON.parse(events[0]!.details!)).toMatchObject({ tag: 'foyer', previous_tag: 'lobby', revision: 2 });
  });

  it('clears the tag with null; the same tag again changes nothing', async () => {
    const media = await uploadReady(server, token, await image('png'), 'image/png', { tag: 'lobby' });
    const cleared = await server.request('PATCH', `/api/v1/media/${media.id}`, { token, json: { tag: null } });
    expect(cleared.json().tag).toBeUndefined();
    expect(cleared.json().revision).toBe(2);
    const again = await server.request('PATCH', `/api/v1/media/${media.id}`, { token, json: { tag: null } });
    expect(again.json().revision).toBe(2);
    expect(seam.changes.at(-1)).toEqual({ mediaId: media.id, tags: ['lobby', null] });
    expect(seam.changes).toHaveLength(2);
  });

  it('refuses a stale If-Match with revision_conflict and current_revision', async () => {
    const media = await uploadReady(server, token, await image('png'), 'image/png');
    await server.request('PATCH', `/api/v1/media/${media.id}`, { token, json: { tag: 'a1' } });
    const res = await server.request('PATCH', `/api/v1/media/${media.id}`, { token, json: { tag: 'b2' }, ifMatch: 1 });
    expect(res.status).toBe(412);
    expect(res.json()).toMatchObject({ code: 'revision_conflict', current_revision: 2 });
  });

  it('rolls the tag back when the playlists seam fails (same transaction)', async () => {
    const media = await uploadReady(server, token, await image('png'), 'image/png', { tag: 'lobby' });
    seam.failChange = true;
    const res = await server.request('PATCH', `/api/v1/media/${media.id}`, { token, json: { tag: 'foyer' } });
    expect(res.status).toBe(500);
    const after = (await server.request('GET', `/api/v1/media/${media.id}`, { token })).json();
    expect(after).toMatchObject({ tag: 'lobby', revision: 1 });
  });

  it.each([[{ tag: 'two words' }], [{ tag: 'x'.repeat(33) }], [{}], [{ tag: 'ok', filename: 'x' }]])(
    'refuses %j',
    async (body) => {
      const media = await uploadReady(server, token, await image('png'), 'image/png');
      const res = await server.request('PATCH', `/api/v1/media/${media.id}`, { token, json: body });
      expect(res.status).toBe(400);
    },
  );

  it('is a project (Model P) route', async () => {
    const { token: account } = await server.createAccount();
    const media = await uploadReady(server, account, await image('png'), 'image/png');
    expect(
      (await server.request('PATCH', `/api/v1/media/${media.id}`, { token: account, json: { tag: 'x' } })).status,
    ).toBe(403);
  });
});

describe('DELETE /api/v1/media/{id}', () => {
  it('tombstones the media, releases its bytes and tells the playlists seam', async () => {
    const bytes = await image('png');
    const media = await uploadReady(server, token, bytes, 'image/png', { tag: 'lobby' });
    expect((await project()).used_bytes).toBe(bytes.length);
    const res = await server.request('DELETE', `/api/v1/media/${media.id}`, { token });
    expect(res.status).toBe(204);
    expect((await server.request('GET', `/api/v1/media/${media.id}`, { token })).status).toBe(404);
    expect((await server.request('DELETE', `/api/v1/media/${media.id}`, { token })).status).toBe(404);
    expect((await project()).used_bytes).toBe(0);
    expect(seam.changes.at(-1)).toEqual({ mediaId: media.id, tags: ['lobby'] });
    const row = await server.services.store.db
      .selectFrom('media')
      .selectAll()
      .where('id', '=', media.id)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe('deleted');
    expect(row.deleted_at).toBe(server.clock.now());
    await new Promise((r) => setTimeout(r, 20));
    expect(await server.services.blobs.stat(row.blob_key!)).toBeUndefined();
  });

  it('is refused with resource_conflict while desired or active grants reference it', async () => {
    const bytes = await image('png');
    const media = await uploadReady(server, token, bytes, 'image/png');
    seam.inUse.add(media.id);
    const res = await server.request('DELETE', `/api/v1/media/${media.id}`, { token });
    expect(res.status).toBe(409);
    expect(res.json().code).toBe('resource_conflict');
    expect((await server.request('GET', `/api/v1/media/${media.id}`, { token })).status).toBe(200);
    expect((await project()).used_bytes).toBe(bytes.length);
  });

  it('requires If-Match and Idempotency-Key from an account bearer (Model A), and checks the revision', async () => {
    const { token: account } = await server.createAccount();
    const media = await uploadReady(server, account, await image('png'), 'image/png');
    const noIfMatch = await server.request('DELETE', `/api/v1/media/${media.id}`, {
      token: account,
      idempotencyKey: randomKey(),
    });
    expect(noIfMatch.status).toBe(400);
    expect(noIfMatch.json().errors[0].field).toBe('If-Match');
    expect((await server.request('DELETE', `/api/v1/media/${media.id}`, { token: account, ifMatch: 1 })).status).toBe(
      400,
    );
    const stale = await server.request('DELETE', `/api/v1/media/${media.id}`, {
      token: account,
      ifMatch: 7,
      idempotencyKey: randomKey(),
    });
    expect(stale.status).toBe(412);
    expect(
      (
        await server.request('DELETE', `/api/v1/media/${media.id}`, {
          token: account,
          ifMatch: 1,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(204);
  });
});
