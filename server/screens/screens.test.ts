import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { pairActiveScreen, pairPendingScreen, startPairing, claimCode } from '../pairing/pairing.fixtures';
import { imageDoc, insertMedia, page, imagePlacement } from '../playlists/content.fixtures';
import { randomKey, TestServer } from '../testing/harness';
import { changeScreen, findScreen } from './screens';

let server: TestServer;
let token: string;
let projectId: string;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z') });
  ({ token, projectId } = await server.enroll());
});
afterAll(async () => server.stop());

function nextMinute() {
  server.clock.advance(61_000);
}

async function screenEvents(screenId: string) {
  const rows = await server.services.store.db
    .selectFrom('events')
    .select(['type', 'runtime', 'details', 'request_id'])
    .where('screen_id', '=', screenId)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({ ...r, details: r.details ? JSON.parse(r.details) : null }));
}

async function eventsAfter(screenId: string, count: number) {
  return (await screenEvents(screenId)).slice(count);
}

async function get(id: string, t = token) {
  return server.request('GET', `/api/v1/screens/${id}`, { token: t });
}

async function createPlaylist(t: string, tenantId: string, extraPage?: Record<string, unknown>) {
  const media = await insertMedia(server, tenantId);
  const doc = imageDoc(media);
  if (extraPage) doc.pages.push(extraPage as never);
  const res = await server.request('POST', '/api/v1/playlists', { token: t, json: doc, idempotencyKey: randomKey() });
  expect(res.status, res.text).toBe(201);
  return res.json();
}

async function screenCount(t = token): Promise<number> {
  return (await server.request('GET', '/api/v1/project', { token: t })).json().screen_count;
}

describe('reading screens', () => {
  it('returns every field, with the revision as ETag', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const res = await get(screen.id);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    expect(res.json()).toEqual({
      id: screen.id,
      public_id: screen.public_id,
      label: screen.label,
      name: screen.label,
      revision: 1,
      manifest_revision: 1,
      content_access_generation: 1,
      state: 'pairing_pending',
      tags: [],
      online: false,
      health: {
        presence: null,
        last_seen_at: null,
        offline_since: null,
        player: null,
        host: null,
        now_playing: null,
        watchdog: { recoveries: 0, last_recovery_at: null, last_reason: null },
        screenshot: { state: 'idle' },
      },
      created_at: '2026-11-21T12:01:01.000Z',
      updated_at: '2026-11-21T12:01:01.000Z',
    });
  });

  it('lists pairing_pending and active screens by default, filters by state and exact tag', async () => {
    nextMinute();
    const { token: t } = await server.enroll();
    // Lists are ordered by creation time.
    const pending = await pairPendingScreen(server, t);
    server.clock.advance(1);
    const { screen: active } = await pairActiveScreen(server, t);
    server.clock.advance(1);
    const archived = await pairPendingScreen(server, t);
    await server.request('POST', `/api/v1/screens/${archived.id}/archive`, { token: t });
    await server.request('PATCH', `/api/v1/screens/${active.id}`, { token: t, json: { tags: ['lobby', 'north'] } });

    const ids = async (q: string) =>
      (await server.request('GET', `/api/v1/screens${q}`, { token: t })).json().items.map((s: { id: string }) => s.id);
    expect(await ids('')).toEqual([pending.id, active.id]);
    expect(await ids('?state=archived')).toEqual([archived.id]);
    expect(await ids('?state=active')).toEqual([active.id]);
    expect(await ids('?state=pairing_pending')).toEqual([pending.id]);
    expect(await ids('?tag=lobby')).toEqual([active.id]);
    expect(await ids('?tag=Lobby')).toEqual([]);
    expect((await server.request('GET', '/api/v1/screens?state=deleted', { token: t })).status).toBe(400);
    expect((await server.request('GET', '/api/v1/screens?tag=no-dashes', { token: t })).status).toBe(400);
  });

  it("answers not_found for another tenant's screen on every route", async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const other = (await server.enroll()).token;
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/v1/screens/${screen.id}`],
      ['PATCH', `/api/v1/screens/${screen.id}`, { name: 'Mine now' }],
      ['DELETE', `/api/v1/screens/${screen.id}`],
      ['POST', `/api/v1/screens/${screen.id}/archive`],
      ['POST', `/api/v1/screens/${screen.id}/unarchive`],
      ['POST', `/api/v1/screens/${screen.id}/public-id/rotate`],
      ['POST', `/api/v1/screens/${screen.id}/reload`],
    ];
    for (const [method, path, json] of routes) {
      const res = await server.request(method, path, { token: other, json });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await server.request('GET', '/api/v1/screens', { token: other })).json().items).toEqual([]);
    expect((await get(screen.id)).json().revision).toBe(1);
  });
});

describe('PATCH', () => {
  it('writes the label from name: revision + 1, screen.updated, no new manifest', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { name: 'Front desk' },
      ifMatch: 1,
    });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    expect(res.json()).toMatchObject({ label: 'Front desk', name: 'Front desk', revision: 2, manifest_revision: 1 });
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => e.type)).toEqual(['screen.updated']);
    expect(events[0]!.details).toMatchObject({ revision: 2, changes: ['label'] });
  });

  it('replaces the tag set; a tag-only edit never remints the manifest', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { tags: ['north', 'Lobby'] },
    });
    expect(res.json()).toMatchObject({ tags: ['Lobby', 'north'], revision: 2, manifest_revision: 1 });
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => e.type)).toEqual(['screen.updated']);
    expect(events[0]!.details.tags).toEqual(['Lobby', 'north']);
    const replaced = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { tags: ['south'] },
    });
    expect(replaced.json().tags).toEqual(['south']);
    const cleared = await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { tags: [] } });
    expect(cleared.json()).toMatchObject({ tags: [], revision: 4, manifest_revision: 1 });
  });

  it('changes nothing, and bumps nothing, for a PATCH of the current values', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const playlist = await createPlaylist(token, projectId);
    const set = { name: 'Hall', timezone: 'Europe/Berlin', tags: ['north', 'Lobby'], playlist_id: playlist.id };
    const first = await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: set });
    expect(first.json()).toMatchObject({ revision: 2, manifest_revision: 2 });
    const seen = (await screenEvents(screen.id)).length;
    const same = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { ...set, tags: ['Lobby', 'north'] },
      ifMatch: 2,
    });
    expect(same.status).toBe(200);
    expect(same.headers.etag).toBe('"2"');
    expect(same.json()).toEqual(first.json());
    expect(await eventsAfter(screen.id, seen)).toEqual([]);
    // Only what differs is written and named.
    const partly = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { ...set, name: 'Hall 2' },
    });
    expect(partly.json()).toMatchObject({ name: 'Hall 2', revision: 3, manifest_revision: 2 });
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => e.type)).toEqual(['screen.updated']);
    expect(events[0]!.details.changes).toEqual(['label']);
  });

  it.each([
    ['duplicate tags', { tags: ['a', 'a'] }, 'tags'],
    ['a malformed tag', { tags: ['no-dash'] }, 'tags.0'],
    ['a tag too long', { tags: ['x'.repeat(33)] }, 'tags.0'],
    ['seventeen tags', { tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, 'tags'],
    ['an empty name', { name: '' }, 'name'],
    ['a name too long', { name: 'n'.repeat(121) }, 'name'],
    ['an unknown field', { online: true }, 'online'],
    ['an empty patch', {}, 'body'],
    ['an offset for a timezone', { timezone: '+05:00' }, 'timezone'],
    ['an unknown zone', { timezone: 'Mars/Olympus' }, 'timezone'],
    ['a miscased zone', { timezone: 'europe/berlin' }, 'timezone'],
    ['a miscased alias', { timezone: 'us/pacific' }, 'timezone'],
    ['a zone too long', { timezone: `Europe/${'x'.repeat(60)}` }, 'timezone'],
  ])('refuses %s with invalid_request', async (_what, json, field) => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const res = await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json });
    expect(res.status).toBe(400);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
    expect((await get(screen.id)).json().revision).toBe(1);
  });

  it('sets an IANA timezone (aliases included) and remints the manifest only when it changes', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { timezone: 'Europe/Berlin' },
    });
    expect(res.json()).toMatchObject({ timezone: 'Europe/Berlin', revision: 2, manifest_revision: 2 });
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => [e.type, e.runtime])).toEqual([
      ['screen.updated', 0],
      ['screen.manifest_changed', 1],
    ]);
    expect(events[1]!.details).toMatchObject({ manifest_revision: 2, reason: 'timezone_changed' });
    const same = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { timezone: 'Europe/Berlin' },
    });
    expect(same.json()).toMatchObject({ revision: 2, manifest_revision: 2 });
    const alias = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { timezone: 'US/Pacific' },
    });
    expect(alias.json()).toMatchObject({ timezone: 'US/Pacific', revision: 3, manifest_revision: 3 });
  });

  it('assigns a playlist to a pairing_pending screen with the revision from pairing, reminting the manifest in the same transaction', async () => {
    nextMinute();
    const { code } = await startPairing(server);
    const claim = await claimCode(server, token, code);
    const screen = claim.json().screen;
    const playlist = await createPlaylist(token, projectId);
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { playlist_id: playlist.id },
      ifMatch: screen.revision,
    });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      state: 'pairing_pending',
      playlist_id: playlist.id,
      revision: 2,
      manifest_revision: 2,
    });
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => e.type)).toEqual(['screen.updated', 'screen.manifest_changed']);
    expect(events[0]!.request_id).toBe(events[1]!.request_id);
    expect(events[1]!.details.reason).toBe('playlist_assigned');
    // Assigning the same playlist again changes nothing.
    const again = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { playlist_id: playlist.id },
    });
    expect(again.json()).toMatchObject({ revision: 2, manifest_revision: 2 });
    const unassigned = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { playlist_id: null },
    });
    expect(unassigned.json()).toMatchObject({ revision: 3, manifest_revision: 3 });
    expect(unassigned.json().playlist_id).toBeUndefined();
  });

  it("refuses an unknown or another tenant's playlist with not_found", async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const other = await server.enroll();
    const theirs = await createPlaylist(other.token, other.projectId);
    for (const playlist_id of [theirs.id, 'pl_nothing']) {
      const res = await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { playlist_id } });
      expect(res.status).toBe(404);
      expect(res.json().errors[0].field).toBe('playlist_id');
    }
  });

  it('requires a timezone before a playlist with page visibility is assigned', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const scheduled = page(
      'evening',
      [imagePlacement('hero', { by: 'id', media_id: await insertMedia(server, projectId) })],
      {
        visibility: { enabled: true, windows: [{ days: ['fri'], start: '18:00', end: '02:00' }] },
      },
    );
    const playlist = await createPlaylist(token, projectId, scheduled);
    const refused = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { playlist_id: playlist.id },
    });
    expect(refused.status).toBe(400);
    expect(refused.json().errors[0]).toMatchObject({ field: 'timezone', code: 'required' });
    const both = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { playlist_id: playlist.id, timezone: 'Europe/Paris' },
    });
    expect(both.status).toBe(200);
    expect(both.json()).toMatchObject({
      playlist_id: playlist.id,
      timezone: 'Europe/Paris',
      revision: 2,
      manifest_revision: 2,
    });
  });

  it('follows Model A rules for an account: If-Match required, stale gives revision_conflict', async () => {
    nextMinute();
    const account = await server.createAccount();
    const screen = await pairPendingScreen(server, account.token);
    const missing = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token: account.token,
      json: { name: 'x' },
      idempotencyKey: randomKey(),
    });
    expect(missing.status).toBe(400);
    const stale = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token: account.token,
      json: { name: 'x' },
      ifMatch: 7,
      idempotencyKey: randomKey(),
    });
    expect(stale.status).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'revision_conflict', current_revision: 1 });
    const ok = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token: account.token,
      json: { name: 'x' },
      ifMatch: 1,
      idempotencyKey: randomKey(),
    });
    expect(ok.status).toBe(200);
  });
});

describe('the Screen table', () => {
  it('archive: archived, hidden, quota released, revision + 1, manifest reminted, events', async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    const count = await screenCount();
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/archive`, { token, ifMatch: 2 });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ state: 'archived', revision: 3, manifest_revision: 2 });
    expect(await screenCount()).toBe(count - 1);
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => [e.type, e.runtime])).toEqual([
      ['screen.updated', 0],
      ['screen.archived', 1],
      ['screen.manifest_changed', 1],
    ]);
    expect(
      (await server.request('GET', '/api/v1/screens', { token })).json().items.map((s: { id: string }) => s.id),
    ).not.toContain(screen.id);
    expect((await get(screen.id)).json().state).toBe('archived');
    const again = await server.request('POST', `/api/v1/screens/${screen.id}/archive`, { token });
    expect(again.status).toBe(409);
    expect(again.json().code).toBe('resource_conflict');
  });

  it('archive refuses a stale If-Match', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/archive`, { token, ifMatch: 5 });
    expect(res.status).toBe(412);
    expect(res.json().current_revision).toBe(1);
  });

  it('archives a pairing_pending screen too; unarchive makes it active and re-admits it', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    await server.request('POST', `/api/v1/screens/${screen.id}/archive`, { token });
    const count = await screenCount();
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/unarchive`, { token, ifMatch: 2 });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ state: 'active', revision: 3, manifest_revision: 3 });
    expect(await screenCount()).toBe(count + 1);
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => [e.type, e.runtime])).toEqual([
      ['screen.updated', 0],
      ['screen.unarchived', 1],
      ['screen.manifest_changed', 1],
    ]);
    const again = await server.request('POST', `/api/v1/screens/${screen.id}/unarchive`, { token });
    expect(again.status).toBe(409);
  });

  it('archive and unarchive are Model P routes', async () => {
    nextMinute();
    const account = await server.createAccount();
    const screen = await pairPendingScreen(server, account.token);
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/archive`, {
      token: account.token,
      ifMatch: 1,
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(403);
  });

  it('delete: tombstoned, not found on reads, quota released, refused for native identity-bound screens', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const count = await screenCount();
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('DELETE', `/api/v1/screens/${screen.id}`, { token, ifMatch: 1 });
    expect(res.status).toBe(204);
    expect(await screenCount()).toBe(count - 1);
    expect((await get(screen.id)).status).toBe(404);
    expect((await server.request('DELETE', `/api/v1/screens/${screen.id}`, { token })).status).toBe(404);
    const tombstone = await server.services.store.db
      .selectFrom('screens')
      .select(['state', 'deleted_at', 'revision'])
      .where('id', '=', screen.id)
      .executeTakeFirstOrThrow();
    expect(tombstone).toMatchObject({ state: 'deleted', deleted_at: server.clock.now(), revision: 2 });
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => [e.type, e.runtime])).toEqual([
      ['screen.updated', 0],
      ['screen.deleted', 1],
    ]);

    const native = await pairPendingScreen(server, token);
    await server.services.store.db
      .updateTable('screens')
      .set({ native_identity: 1 })
      .where('id', '=', native.id)
      .execute();
    const refused = await server.request('DELETE', `/api/v1/screens/${native.id}`, { token });
    expect(refused.status).toBe(409);
    expect(refused.json().code).toBe('screen_archive_required');
    expect((await get(native.id)).json().state).toBe('pairing_pending');
  });

  it('deleting an archived screen does not release quota twice', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    await server.request('POST', `/api/v1/screens/${screen.id}/archive`, { token });
    const count = await screenCount();
    expect((await server.request('DELETE', `/api/v1/screens/${screen.id}`, { token })).status).toBe(204);
    expect(await screenCount()).toBe(count);
  });

  it('public-id rotate: new public URL credential, generation + 1, manifest revision kept, players told', async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    const seen = (await screenEvents(screen.id)).length;
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/public-id/rotate`, { token, ifMatch: 2 });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"3"');
    expect(res.json()).toMatchObject({
      state: 'active',
      revision: 3,
      content_access_generation: 2,
      manifest_revision: screen.manifest_revision,
    });
    expect(res.json().public_id).not.toBe(screen.public_id);
    const events = await eventsAfter(screen.id, seen);
    expect(events.map((e) => [e.type, e.runtime])).toEqual([
      ['screen.updated', 0],
      ['screen.public_id_rotated', 1],
      ['screen.manifest_changed', 1],
    ]);
    expect(events[2]!.details).toMatchObject({
      reason: 'content_access_regranted',
      content_access_generation: 2,
      manifest_revision: 1,
    });
  });
});

describe('reload', () => {
  it('accepts with 202, appends player.reload, keeps the revision and replays an exact retry', async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    const credits = (await server.request('GET', '/api/v1/project', { token })).json().credit_remaining;
    const key = randomKey();
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token, idempotencyKey: key });
    expect(res.status).toBe(202);
    expect(res.headers.etag).toBe('"2"');
    expect(res.headers['cache-control']).toBe('private, no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'reload_id']);
    expect(Date.parse(body.expires_at) - server.clock.now()).toBe(10 * 60_000);
    // Screen messages are exempt from the meter.
    expect((await server.request('GET', '/api/v1/project', { token })).json().credit_remaining).toBe(credits);
    expect((await get(screen.id)).json()).toMatchObject({ revision: 2, manifest_revision: 1 });
    const reloads = (await screenEvents(screen.id)).filter((e) => e.type === 'player.reload');
    expect(reloads).toHaveLength(1);
    expect(reloads[0]!.runtime).toBe(1);
    expect(reloads[0]!.details).toEqual({
      reason: 'project',
      reload_id: body.reload_id,
      spread_s: 0,
      expires_at: body.expires_at,
    });

    server.clock.advance(23 * 3600_000);
    const again = await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token, idempotencyKey: key });
    expect(again.status).toBe(202);
    expect(again.json()).toEqual(body);
    expect((await screenEvents(screen.id)).filter((e) => e.type === 'player.reload')).toHaveLength(1);
  });

  it('refuses a pairing_pending screen with resource_conflict', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token });
    expect(res.status).toBe(409);
    expect(res.json().code).toBe('resource_conflict');
  });

  it('limits reloads per screen', async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    for (let i = 0; i < 6; i++)
      expect((await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token })).status).toBe(202);
    const limited = await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token });
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toContain('reload-screen');
  });

  it("answers not_found to another tenant's reloads without spending the screen's budget", async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    const { token: other } = await server.enroll();
    for (let i = 0; i < 8; i++) {
      const res = await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token: other });
      expect(res.status).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const own = await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token });
    expect(own.status).toBe(202);
    expect(own.headers.ratelimit).toContain('"reload-screen";r=5');
  });

  it('spends nothing of the project budget on a reload the screen budget refuses', async () => {
    nextMinute();
    const { screen } = await pairActiveScreen(server, token);
    for (let i = 0; i < 6; i++)
      expect((await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token })).status).toBe(202);
    for (let i = 0; i < 3; i++)
      expect((await server.request('POST', `/api/v1/screens/${screen.id}/reload`, { token })).status).toBe(429);
    const { screen: another } = await pairActiveScreen(server, token);
    const res = await server.request('POST', `/api/v1/screens/${another.id}/reload`, { token });
    expect(res.status).toBe(202);
    expect(res.headers.ratelimit).toContain('"reload-project";r=593');
  });
});

describe('the screen quota', () => {
  it('admits 50 screens per tenant, pairing_pending included, then answers quota_exceeded', async () => {
    nextMinute();
    const { token: t } = await server.enroll();
    const screens: { id: string }[] = [];
    for (let i = 0; i < 50; i++) {
      if (i % 15 === 0) nextMinute();
      screens.push(await pairPendingScreen(server, t));
    }
    expect(await screenCount(t)).toBe(50);
    nextMinute();
    const { code } = await startPairing(server);
    const refused = await claimCode(server, t, code);
    expect(refused.status).toBe(413);
    expect(refused.json().code).toBe('quota_exceeded');
    const provision = await server.request('POST', '/api/v1/screens/provision', {
      token: t,
      json: {},
      idempotencyKey: randomKey(),
    });
    expect(provision.status).toBe(413);

    // Archiving frees a place; unarchiving needs one again.
    await server.request('POST', `/api/v1/screens/${screens[0]!.id}/archive`, { token: t });
    expect((await claimCode(server, t, code)).status).toBe(201);
    const unarchive = await server.request('POST', `/api/v1/screens/${screens[0]!.id}/unarchive`, { token: t });
    expect(unarchive.status).toBe(413);
    expect(unarchive.json().code).toBe('quota_exceeded');
    expect((await get(screens[0]!.id, t)).json().state).toBe('archived');
  });
});

describe('a change that raced another writer', () => {
  it('runs its unit of work again on the new row instead of answering revision_conflict', async () => {
    nextMinute();
    const screen = await pairPendingScreen(server, token);
    const { store, events } = server.services;
    const stale = await findScreen(store.db, projectId, screen.id);
    // Another writer lands between this unit's read and its write (on PostgreSQL, a concurrent
    // transaction; here, a request that committed before the stale row is written back).
    const patched = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token,
      json: { name: 'Lobby' },
      idempotencyKey: randomKey(),
    });
    expect(patched.status, patched.text).toBe(200);
    let attempts = 0;
    const after = await store.transaction(async (work) => {
      attempts++;
      const before = attempts === 1 ? stale : await findScreen(work.db, projectId, screen.id);
      return changeScreen(
        events,
        work,
        before,
        { changes: ['timezone'], set: { timezone: 'Europe/Berlin' } },
        server.clock.now(),
      );
    });
    expect(attempts).toBe(2);
    expect(after.revision).toBe(stale.revision + 2);
    const read = (await get(screen.id)).json();
    expect([read.name, read.timezone, read.revision]).toEqual(['Lobby', 'Europe/Berlin', stale.revision + 2]);
  });
});
