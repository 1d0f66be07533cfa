// Commands on one screen (toast, display, reboot) and fleet actions over many: runtime events,
// budgets, whole-request validation, pinned selections and their retries, cross-tenant ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { pairActiveScreen, pairPendingScreen } from '../pairing/pairing.fixtures';
import { imageDoc, insertMedia } from '../playlists/content.fixtures';
import { insertScreensShowing } from '../manifests/manifests.fixtures';
import { pairedPlayer } from '../runtime/runtime.fixtures';
import { randomKey, TestServer } from '../testing/harness';

let server: TestServer;
let token: string;
let projectId: string;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-23T08:00:00Z') });
  ({ token, projectId } = await server.enroll());
});
afterAll(async () => server.stop());

/** Budgets are per minute: each test starts in a fresh window. */
function nextWindow() {
  server.clock.advance(11 * 60_000);
}

async function events(screenId: string, type?: string) {
  let q = server.services.store.db
    .selectFrom('events')
    .select(['type', 'details', 'runtime'])
    .where('screen_id', '=', screenId);
  if (type) q = q.where('type', '=', type);
  const rows = await q.orderBy('position').execute();
  return rows.map((r) => ({ ...r, details: r.details ? JSON.parse(r.details) : null }));
}

const toast = { level: 'alert', text: 'Lobby closes at 18:00\nUse the north exit', duration_ms: 15_000 };
const actions = (body: unknown, options: { key?: string; t?: string } = {}) =>
  server.request('POST', '/api/v1/screens/actions', {
    token: options.t ?? token,
    json: body,
    ...(options.key ? { idempotencyKey: options.key } : {}),
  });

describe('toast', () => {
  it('is a durable runtime event with the reference shape, answered 202 with its expiry', async () => {
    nextWindow();
    const { screen } = await pairActiveScreen(server, token);
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/toast`, { token, json: toast });
    expect(res.status, res.text).toBe(202);
    const body = res.json();
    expect(body.expires_at).toBe(new Date(server.clock.now() + 15_000).toISOString());
    const [event] = await events(screen.id, 'screen.toast');
    expect(event).toEqual({
      type: 'screen.toast',
      runtime: 1,
      details: {
        toast_id: body.toast_id,
        level: 'alert',
        text: toast.text,
        duration_ms: 15_000,
        expires_at: body.expires_at,
      },
    });
  });

  it('does nothing twice on an exact retry with the same Idempotency-Key', async () => {
    const { screen } = await pairActiveScreen(server, token);
    const key = randomKey();
    const send = () =>
      server.request('POST', `/api/v1/screens/${screen.id}/toast`, { token, json: toast, idempotencyKey: key });
    const first = await send();
    const again = await send();
    expect(again.json()).toEqual(first.json());
    expect(await events(screen.id, 'screen.toast')).toHaveLength(1);
  });

  it('refuses four lines, 121 characters, 1 s and an unknown level', async () => {
    const { screen } = await pairActiveScreen(server, token);
    for (const bad of [
      { ...toast, text: 'a\nb\nc\nd' },
      { ...toast, text: 'x'.repeat(121) },
      { ...toast, duration_ms: 1000 },
      { ...toast, level: 'warning' },
    ]) {
      const res = await server.request('POST', `/api/v1/screens/${screen.id}/toast`, { token, json: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect(await events(screen.id, 'screen.toast')).toEqual([]);
  });

  it('answers resource_conflict for a screen with no player yet', async () => {
    const screen = await pairPendingScreen(server, token);
    const res = await server.request('POST', `/api/v1/screens/${screen.id}/toast`, { token, json: toast });
    expect(res.status).toBe(409);
  });

  it('spends the screen toast budget: the 21st in a minute is rate_limited', async () => {
    nextWindow();
    const { screen } = await pairActiveScreen(server, token);
    for (let i = 0; i < 20; i++) {
      const ok = await server.request('POST', `/api/v1/screens/${screen.id}/toast`, { token, json: toast });
      expect(ok.status).toBe(202);
    }
    const refused = await server.request('POST', `/api/v1/screens/${screen.id}/toast`, { token, json: toast });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });
});

describe('reboot and display', () => {
  it('allows two reboots per screen in ten minutes', async () => {
    nextWindow();
    const { screen } = await pairActiveScreen(server, token);
    const reboot = () => server.request('POST', `/api/v1/screens/${screen.id}/reboot`, { token });
    const first = await reboot();
    expect(first.status).toBe(202);
    expect(first.json().reboot_id).toMatch(/^rbt_/);
    expect((await reboot()).status).toBe(202);
    server.clock.advance(5 * 60_000);
    expect((await reboot()).status).toBe(429);
    expect((await events(screen.id, 'player.reboot')).map((e) => e.runtime)).toEqual([1, 1]);
  });

  it('keeps the display state, tells the player, and hands it to a new session', async () => {
    nextWindow();
    const player = await pairedPlayer(server, token);
    const id = player.screen.id;
    expect(player.session).toMatchObject({ display: { power: null, schedule: null } });
    const off = await server.request('POST', `/api/v1/screens/${id}/display`, { token, json: { power: 'off' } });
    expect(off.status, off.text).toBe(200);
    expect(off.json()).toEqual({ power: 'off', schedule: null });
    // A display schedule needs the screen's time zone.
    const night = { on: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '07:00', end: '19:00' }] };
    const noZone = await server.request('PUT', `/api/v1/screens/${id}/display-schedule`, { token, json: night });
    expect(noZone.status).toBe(400);
    await server.request('PATCH', `/api/v1/screens/${id}`, { token, json: { timezone: 'Europe/Berlin' } });
    const scheduled = await server.request('PUT', `/api/v1/screens/${id}/display-schedule`, { token, json: night });
    expect(scheduled.json()).toEqual({ power: 'off', schedule: night });
    const session = await server.request('POST', '/runtime/v1/device-sessions', { cookies: player.cookies });
    expect(session.json().display).toEqual({ power: 'off', schedule: night });
    await server.request('POST', `/api/v1/screens/${id}/display/clear`, { token });
    expect((await server.request('GET', `/api/v1/screens/${id}/display`, { token })).json()).toEqual({
      power: null,
      schedule: night,
    });
    const changes = await events(id, 'screen.display_changed');
    expect(changes.map((e) => e.details.power)).toEqual(['off', 'off', null]);
    expect(changes.every((e) => e.runtime === 1)).toBe(true);
  });
});

describe('POST /api/v1/screens/actions', () => {
  async function playlist(): Promise<string> {
    const media = await insertMedia(server, projectId);
    const res = await server.request('POST', '/api/v1/playlists', {
      token,
      json: imageDoc(media),
      idempotencyKey: randomKey(),
    });
    return res.json().id;
  }

  it('takes over every active screen with a tag, in one metered request', async () => {
    nextWindow();
    // A tag's screens come in creation order.
    const a = (await pairActiveScreen(server, token)).screen;
    server.clock.advance(1);
    const b = (await pairActiveScreen(server, token)).screen;
    const c = (await pairActiveScreen(server, token)).screen;
    const tag = `lobby${Date.now() % 100000}`;
    const tagged = await actions({ selector: { ids: [a.id, b.id] }, action: { type: 'add_tags', tags: [tag] } });
    expect(tagged.status, tagged.text).toBe(200);
    expect(tagged.json().succeeded).toBe(2);
    const alert = await playlist();
    const credits = Number(
      (await server.request('GET', '/api/v1/project', { token })).headers['marquee-credits-remaining'],
    );
    const res = await actions({
      selector: { tag },
      action: { type: 'takeover', playlist_id: alert, until: '2026-12-01T00:00:00Z', reason: 'evacuation' },
    });
    expect(res.status, res.text).toBe(200);
    expect(Number(res.headers['marquee-credits-remaining'])).toBe(credits - 1);
    const body = res.json();
    expect(body.results.map((r: { screen_id: string }) => r.screen_id)).toEqual([a.id, b.id]);
    expect(body.results[0]).toMatchObject({ ok: true, status: 200, result: { takeover: { reason: 'evacuation' } } });
    const effective = async (id: string) =>
      (
        await server.services.store.db
          .selectFrom('screens')
          .select('effective_playlist_id')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).effective_playlist_id;
    expect(await effective(a.id)).toBe(alert);
    expect(await effective(c.id)).not.toBe(alert);
  });

  it('adds before it removes, and leaves the manifest revision alone', async () => {
    const { screen } = await pairActiveScreen(server, token);
    await actions({ selector: { ids: [screen.id] }, action: { type: 'set_tags', tags: ['a', 'b'] } });
    const before = (await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).json();
    await actions({ selector: { ids: [screen.id] }, action: { type: 'remove_tags', tags: ['a'] } });
    const after = (await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).json();
    expect(after.tags).toEqual(['b']);
    expect(after.revision).toBe(before.revision + 1);
    expect(after.manifest_revision).toBe(before.manifest_revision);
    const updated = (await events(screen.id, 'screen.updated')).at(-1)!;
    expect(updated.details).toMatchObject({ changes: ['tags'], tags: ['b'] });
  });

  it('sets a sync group over screens as their PATCH would: screen.updated, a remint, per-screen results', async () => {
    const a = (await pairActiveScreen(server, token)).screen;
    const b = (await pairActiveScreen(server, token)).screen;
    const archived = (await pairActiveScreen(server, token)).screen;
    expect((await server.request('POST', `/api/v1/screens/${archived.id}/archive`, { token })).status).toBe(200);
    const before = (await server.request('GET', `/api/v1/screens/${a.id}`, { token })).json();
    const res = await actions({
      selector: { ids: [a.id, b.id, archived.id] },
      action: { type: 'set_sync_group', sync_group: 'wall7' },
    });
    expect(res.status, res.text).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ action: 'set_sync_group', succeeded: 3, failed: 0 });
    expect(body.results[0]).toMatchObject({
      screen_id: a.id,
      ok: true,
      status: 200,
      result: { sync_group: 'wall7', revision: before.revision + 1, manifest_revision: before.manifest_revision + 1 },
    });
    expect((await events(a.id, 'screen.updated')).at(-1)!.details).toMatchObject({
      changes: ['sync_group'],
      sync_group: 'wall7',
    });
    expect((await events(b.id, 'screen.manifest_changed')).at(-1)!.details).toMatchObject({ reason: 'sync_changed' });

    // A region set on one screen stays while it is in a group and goes when the group is left.
    const region = { x: 0, y: 0, width: 1920, height: 1080 };
    expect(
      (await server.request('PATCH', `/api/v1/screens/${a.id}`, { token, json: { wall_region: region } })).status,
    ).toBe(200);
    const left = await actions({ selector: { ids: [a.id] }, action: { type: 'set_sync_group', sync_group: null } });
    const alone = left.json().results[0].result;
    expect(alone.revision).toBeGreaterThan(before.revision + 1);
    expect(alone.sync_group).toBeUndefined(); // the view leaves out what is not set
    expect(alone.wall_region).toBeUndefined();

    // Validated like the PATCH, whole, before any screen.
    for (const bad of ['wall 7', '', 'x'.repeat(33)]) {
      const refused = await actions({ selector: { ids: [b.id] }, action: { type: 'set_sync_group', sync_group: bad } });
      expect(refused.status, bad).toBe(400);
    }
    expect((await actions({ selector: { ids: [b.id] }, action: { type: 'set_sync_group' } })).status).toBe(400);
    const read = (await server.request('GET', `/api/v1/screens/${b.id}`, { token })).json();
    expect(read.sync_group).toBe('wall7');
  });

  it("answers each screen as its own route would: another tenant's id is not_found, the rest succeed", async () => {
    nextWindow();
    const mine = (await pairActiveScreen(server, token)).screen;
    const other = await server.enroll();
    const theirs = (await pairActiveScreen(server, other.token)).screen;
    const res = await actions({ selector: { ids: [theirs.id, mine.id] }, action: { type: 'toast', ...toast } });
    expect(res.status).toBe(200);
    const [foreign, own] = res.json().results;
    expect(foreign).toMatchObject({ screen_id: theirs.id, ok: false, status: 404, problem: { code: 'not_found' } });
    expect(own).toMatchObject({ screen_id: mine.id, ok: true, status: 202 });
    expect(await events(theirs.id, 'screen.toast')).toEqual([]);
  });

  it('fails a malformed action or selector whole before any screen is touched', async () => {
    const { screen } = await pairActiveScreen(server, token);
    for (const bad of [
      { selector: { ids: [screen.id] }, action: { type: 'toast', ...toast, power: 'off' } },
      { selector: { ids: [screen.id] }, action: { type: 'explode' } },
      { selector: { ids: [screen.id, screen.id] }, action: { type: 'reload' } },
      { selector: { ids: [screen.id], tag: 'lobby' }, action: { type: 'reload' } },
      { selector: { ids: [] }, action: { type: 'reload' } },
      {
        selector: { ids: [screen.id] },
        action: { type: 'takeover', playlist_id: 'pl_x', until: '2020-01-01T00:00:00Z', reason: 'x' },
      },
    ]) {
      const res = await actions(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect(
      (await events(screen.id)).filter(
        (e) =>
          e.type !== 'screen.paired' &&
          e.type !== 'screen.activated' &&
          e.type !== 'screen.player_bound' &&
          e.type !== 'screen.updated',
      ),
    ).toEqual([]);
  });

  it('refuses a tag over more than 500 active screens', async () => {
    const { token: t, projectId: tenant } = await server.enroll();
    const media = await insertMedia(server, tenant);
    const pl = (
      await server.request('POST', '/api/v1/playlists', {
        token: t,
        json: imageDoc(media),
        idempotencyKey: randomKey(),
      })
    ).json().id;
    const ids = await insertScreensShowing(server.services, tenant, pl, 501);
    await server.services.store.db
      .insertInto('screen_tags')
      .values(ids.map((id) => ({ screen_id: id, tenant_id: tenant, tag: 'wall' })))
      .execute();
    const res = await actions({ selector: { tag: 'wall' }, action: { type: 'reload' } }, { t });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe('selector.tag');
  });

  it('fans out over several transactions of screens: a failed screen in a group rolls back alone', async () => {
    const { token: t, projectId: tenant } = await server.enroll();
    const media = await insertMedia(server, tenant);
    const pl = (
      await server.request('POST', '/api/v1/playlists', {
        token: t,
        json: imageDoc(media),
        idempotencyKey: randomKey(),
      })
    ).json().id;
    const ids = await insertScreensShowing(server.services, tenant, pl, 120);
    const foreign = (await pairActiveScreen(server, token)).screen.id;
    const selected = [...ids.slice(0, 60), foreign, ...ids.slice(60)];
    const res = await actions({ selector: { ids: selected }, action: { type: 'add_tags', tags: ['bulk'] } }, { t });
    expect(res.status, res.text).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ succeeded: 120, failed: 1 });
    expect(body.results.map((r: { screen_id: string }) => r.screen_id)).toEqual(selected);
    expect(body.results[60]).toMatchObject({ ok: false, status: 404 });
    const tagged = await server.services.store.db
      .selectFrom('screen_tags')
      .select('screen_id')
      .where('tenant_id', '=', tenant)
      .where('tag', '=', 'bulk')
      .execute();
    expect(tagged).toHaveLength(120);
    const updated = await server.services.store.db
      .selectFrom('events')
      .select('screen_id')
      .where('tenant_id', '=', tenant)
      .where('type', '=', 'screen.updated')
      .orderBy('position')
      .execute();
    expect(updated.map((e) => e.screen_id)).toEqual(ids); // one each, in selector order
  });

  it('answers each screen of an assign with the view its GET reads right after, and replays them under the key', async () => {
    const { token: t, projectId: tenant } = await server.enroll();
    const playlist = async () => {
      const media = await insertMedia(server, tenant);
      const created = await server.request('POST', '/api/v1/playlists', {
        token: t,
        json: imageDoc(media),
        idempotencyKey: randomKey(),
      });
      return created.json().id as string;
    };
    const [a, b] = [await playlist(), await playlist()];
    const ids = await insertScreensShowing(server.services, tenant, a, 3);
    const tagged = (await pairActiveScreen(server, t)).screen.id;
    expect(
      (await actions({ selector: { ids: [tagged] }, action: { type: 'set_tags', tags: ['lobby'] } }, { t })).status,
    ).toBe(200);
    const foreign = (await pairActiveScreen(server, token)).screen.id;
    const selected = [ids[0]!, foreign, tagged, ids[1]!, ids[2]!];
    const key = randomKey();
    const body = { selector: { ids: selected }, action: { type: 'assign', playlist_id: b } };
    const res = await actions(body, { t, key });
    expect(res.status, res.text).toBe(200);
    const answer = res.json();
    expect(answer).toMatchObject({ action: 'assign', succeeded: 4, failed: 1 });
    expect(answer.results[1]).toMatchObject({ screen_id: foreign, ok: false, status: 404 });
    for (const result of answer.results.filter((r: { ok: boolean }) => r.ok)) {
      const read = (await server.request('GET', `/api/v1/screens/${result.screen_id}`, { token: t })).json();
      expect(result).toEqual({ screen_id: read.id, ok: true, status: 200, result: read });
      expect(read.playlist_id).toBe(b);
    }
    expect(answer.results[2].result.tags).toEqual(['lobby']);
    // The recorded answers are the ones sent: a retry under the key replays them.
    await server.services.store.db.deleteFrom('idempotency_records').where('key', '=', key).execute();
    expect((await actions(body, { t, key })).json()).toEqual(answer);
  });

  it('refuses a fan-out larger than the remaining project budget whole, with 429', async () => {
    nextWindow();
    const a = (await pairActiveScreen(server, token)).screen;
    const b = (await pairActiveScreen(server, token)).screen;
    // 599 of the project's 600 toasts this minute are spent elsewhere.
    await server.services.rateLimiter.take(
      { name: 'toast-project', limit: 600, windowSeconds: 60, key: projectId, cost: 599 },
      server.clock.now(),
    );
    const res = await actions({ selector: { ids: [a.id, b.id] }, action: { type: 'toast', ...toast } });
    expect(res.status).toBe(429);
    expect(await events(a.id, 'screen.toast')).toEqual([]);
  });

  it('spends one screen-control-ip request per screen-control fan-out, shared with the takeover routes; the 61st is refused whole', async () => {
    nextWindow();
    const a = (await pairActiveScreen(server, token)).screen;
    const b = (await pairActiveScreen(server, token)).screen;
    const single = await server.request('POST', `/api/v1/screens/${a.id}/takeover/clear`, { token });
    expect(single.status, single.text).toBe(200);
    expect(single.headers.ratelimit).toContain('"screen-control-ip";r=59');
    // A fan-out over two screens is one request of this address, not two.
    const fanned = await actions({ selector: { ids: [a.id, b.id] }, action: { type: 'takeover_clear' } });
    expect(fanned.status, fanned.text).toBe(200);
    expect(fanned.headers.ratelimit).toContain('"screen-control-ip";r=58');
    expect(fanned.headers.ratelimit).toContain('"screen-control-project";r=597');
    // The other 58 of this minute are spent by other requests from the same address.
    await server.services.rateLimiter.take(
      { name: 'screen-control-ip', limit: 60, windowSeconds: 60, key: '127.0.0.1', cost: 58 },
      server.clock.now(),
    );
    const before = await events(b.id);
    const refused = await actions({ selector: { ids: [a.id, b.id] }, action: { type: 'takeover_clear' } });
    expect(refused.status).toBe(429);
    expect(refused.json().code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-policy']).toBe('"screen-control-ip";q=60;w=60');
    expect(await events(b.id)).toEqual(before);
    // Nothing of the project's budget went with the refusal; other families do not spend this one.
    const tagged = await actions({ selector: { ids: [b.id] }, action: { type: 'add_tags', tags: ['ipbudget'] } });
    expect(tagged.status).toBe(200);
    expect((await server.request('POST', `/api/v1/screens/${a.id}/takeover/clear`, { token })).status).toBe(429);
    server.clock.advance(60_000);
    const next = await actions({ selector: { ids: [a.id, b.id] }, action: { type: 'takeover_clear' } });
    expect(next.status).toBe(200);
  });

  it('pins the selection under the key: a retry after a crash replays finished screens and does the rest', async () => {
    nextWindow();
    const a = (await pairActiveScreen(server, token)).screen;
    const b = (await pairActiveScreen(server, token)).screen;
    const key = randomKey();
    const body = { selector: { ids: [a.id, b.id] }, action: { type: 'toast', ...toast } };
    const first = (await actions(body, { key })).json();
    // The state a crash after screen a would have left: a's toast and result committed, b's not,
    // and no recorded answer for the whole request.
    const { db } = server.services.store;
    await db.deleteFrom('idempotency_records').where('key', '=', key).execute();
    await db
      .deleteFrom('fleet_action_results')
      .where('idempotency_key', '=', key)
      .where('screen_id', '=', b.id)
      .execute();
    await db.deleteFrom('events').where('screen_id', '=', b.id).where('type', '=', 'screen.toast').execute();

    const retry = (await actions(body, { key })).json();
    expect(retry.results[0]).toEqual(first.results[0]); // replayed: the same toast_id
    expect(retry.results[1].ok).toBe(true);
    expect(retry.results[1].result.toast_id).not.toBe(first.results[1].result.toast_id);
    expect(await events(a.id, 'screen.toast')).toHaveLength(1);
    expect(await events(b.id, 'screen.toast')).toHaveLength(1);

    // An exact retry of the finished request is its recorded answer; another body under the key is refused.
    expect((await actions(body, { key })).json()).toEqual(retry);
    expect((await actions({ ...body, action: { type: 'reload' } }, { key })).status).toBe(409);
  });

  it('fans a retry out to the pinned screens even when the tag now names others', async () => {
    nextWindow();
    const a = (await pairActiveScreen(server, token)).screen;
    const tag = `pin${Date.now() % 100000}`;
    await actions({ selector: { ids: [a.id] }, action: { type: 'add_tags', tags: [tag] } });
    const key = randomKey();
    const body = { selector: { tag }, action: { type: 'reload' } };
    await actions(body, { key });
    await server.services.store.db.deleteFrom('idempotency_records').where('key', '=', key).execute();
    const b = (await pairActiveScreen(server, token)).screen;
    await actions({ selector: { ids: [b.id] }, action: { type: 'add_tags', tags: [tag] } });
    const retry = (await actions(body, { key })).json();
    expect(retry.results.map((r: { screen_id: string }) => r.screen_id)).toEqual([a.id]);
  });
});
