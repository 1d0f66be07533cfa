// Screen health: the view's health and observation members, the observation route, kiosk watchdog
// recoveries, and screen.online / screen.offline with their debounce, durable across a restart.
import { afterAll, describe, expect, it } from 'vitest';
import { StreamReader } from '../events/stream-reader.testing';
import { PRESENCE_GRACE_MS } from '../runtime/presence';
import { imageDoc, insertMedia } from '../playlists/content.fixtures';
import {
  activate,
  anonymousPlayer,
  createPlaylist,
  patchScreen,
  report,
  useEnrolledServer,
  validManifest,
  type Player,
} from '../runtime/runtime.fixtures';
import { PRESENCE_DEBOUNCE_MS, RENDERER_RECOVERED, sweepPresence, type PresenceDrift } from './screen-health';
import { TEST_DATABASE_URL } from '../testing/test-database';

const onPostgres = TEST_DATABASE_URL?.startsWith('postgres') ?? false;

const env = useEnrolledServer();
const open: StreamReader[] = [];
afterAll(() => {
  for (const reader of open) reader.close();
});

const observation = (width = 1920, height = 1080, observedAt = '2026-11-21T12:00:00.000Z') => ({
  observed_at: observedAt,
  surfaces: [{ id: 'primary', width, height, pixel_ratio: 1, presentation: 'output' }],
});

function observe(p: Player, body: unknown, player = 'browser/1.2.3') {
  return env.server.request('PUT', '/runtime/v1/observation', {
    cookies: p.cookies,
    json: body,
    headers: { 'marquee-player': player },
  });
}

/**
 * Runs `during` (requests or sweeps, each of which reads the screen's row of `table` to update it)
 * while a transaction holds that row FOR UPDATE, so all of them wait there and go on together
 * (PostgreSQL only). Resolves once they are done.
 */
async function whileRowLocked(
  table: 'screen_runtime_state' | 'screen_health',
  screenId: string,
  during: () => Promise<unknown>,
): Promise<void> {
  let held: Promise<unknown> | undefined;
  await env.server.services.store.transaction(async (work) => {
    await work.db.selectFrom(table).select('screen_id').where('screen_id', '=', screenId).forUpdate().execute();
    held = during();
    await new Promise((r) => setTimeout(r, 300));
  });
  await held;
}

/**
 * A paired player that activated its empty manifest, and a playlist of one image assigned to its
 * screen since: the manifest the player shows is still the empty one.
 */
async function playingEmptyThenAssigned() {
  const p = await env.player();
  const { manifest: empty } = await validManifest(env.server, p);
  await activate(env.server, p, empty.manifestRevision);
  const mediaId = await insertMedia(env.server, env.tenantId);
  const playlistId = await createPlaylist(env.server, env.token, imageDoc(mediaId));
  await patchScreen(env.server, env.token, p.screen.id, { playlist_id: playlistId });
  return { p, empty, playlistId };
}

async function screen(id: string) {
  const res = await env.server.request('GET', `/api/v1/screens/${id}`, { token: env.token });
  expect(res.status, res.text).toBe(200);
  return res.json();
}

async function events(screenId: string, types: string[]) {
  const rows = await env.server.services.store.db
    .selectFrom('events')
    .select(['type', 'details'])
    .where('screen_id', '=', screenId)
    .where('type', 'in', types)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({ type: r.type, details: JSON.parse(r.details!) }));
}

async function connect(p: Player): Promise<StreamReader> {
  const reader = await StreamReader.open(env.server, '/runtime/v1/events', { cookies: p.cookies });
  open.push(reader);
  await reader.waitUntil(() => reader.raw.includes('retry:'), 'the preamble');
  await new Promise((r) => setTimeout(r, 20)); // the connect's writes
  return reader;
}

async function disconnect(reader: StreamReader): Promise<void> {
  reader.close();
  await new Promise((r) => setTimeout(r, 50));
  env.clock.advance(PRESENCE_GRACE_MS);
}

describe('the observation', () => {
  it('is absent until the first report, then shown on the screen with the player kind and version', async () => {
    const p = await env.player();
    expect((await screen(p.screen.id)).observation).toBeUndefined();
    expect((await screen(p.screen.id)).health.player).toBeNull();
    const res = await observe(p, observation());
    expect(res.status, res.text).toBe(204);
    const view = await screen(p.screen.id);
    expect(view.observation).toEqual(observation());
    expect(view.health.player).toEqual({ kind: 'browser', version: '1.2.3' });
  });

  it('emits screen.surface_changed when the surface changes, not for the same tuple at a later time', async () => {
    const p = await env.player();
    await observe(p, observation(1920, 1080));
    await observe(p, observation(1920, 1080, '2026-11-21T12:05:00.000Z'));
    await observe(p, observation(1280, 720));
    const changed = await events(p.screen.id, ['screen.surface_changed']);
    expect(changed.map((e) => e.details.surfaces[0].width)).toEqual([1920, 1280]);
    // The identical tuple kept the first observed_at.
    expect(changed[0]!.details.observed_at).toBe('2026-11-21T12:00:00.000Z');
  });

  it('refuses a bad body, and is forbidden to anonymous sessions', async () => {
    const p = await env.player();
    for (const bad of [
      { observed_at: 'now', surfaces: observation().surfaces },
      { ...observation(), surfaces: [] },
      { ...observation(), surfaces: [{ ...observation().surfaces[0], width: 0 }] },
      { ...observation(), surfaces: [{ ...observation().surfaces[0], pixel_ratio: 33 }] },
      { ...observation(), extra: 1 },
    ]) {
      const res = await observe(p, bad);
      expect([res.status, res.json().code]).toEqual([400, 'invalid_request']);
    }
    const viewer = await anonymousPlayer(env.server, p.screen);
    expect((await observe(viewer, observation())).status).toBe(403);
  });

  it('ignores a version that is not a version', async () => {
    const p = await env.player();
    await observe(p, observation(), 'browser/<script>');
    expect((await screen(p.screen.id)).health.player).toEqual({ kind: 'browser', version: null });
  });
});

describe('the health of a screen', () => {
  it('shows last seen, now playing and the last activation, in the view and in the list', async () => {
    const p = await env.player();
    const fresh = (await screen(p.screen.id)).health;
    expect(fresh).toEqual({
      presence: null,
      last_seen_at: null,
      offline_since: null,
      player: null,
      host: null,
      now_playing: null,
      watchdog: { recoveries: 0, last_recovery_at: null, last_reason: null },
      screenshot: { state: 'idle' },
    });
    const reader = await connect(p);
    const { manifest } = await validManifest(env.server, p);
    await activate(env.server, p, manifest.manifestRevision);
    const view = await screen(p.screen.id);
    expect(view.health.last_seen_at).toBe(new Date(env.clock.now()).toISOString());
    expect(view.health.player).toEqual({ kind: 'browser', version: null });
    expect(view.health.now_playing).toEqual({
      playlist_id: null,
      manifest_revision: manifest.manifestRevision,
      activated_at: new Date(env.clock.now()).toISOString(),
    });
    const list = await env.server.request('GET', '/api/v1/screens', { token: env.token });
    expect(list.json().items.find((s: { id: string }) => s.id === p.screen.id).health).toEqual(view.health);
    reader.close();
  });

  it('names the playlist of the manifest the player activated, not the one assigned since', async () => {
    const { p, empty, playlistId } = await playingEmptyThenAssigned();
    // Assigned, but the player still shows the manifest from before: nothing is playing.
    const before = (await screen(p.screen.id)).health.now_playing;
    expect(before).toMatchObject({ playlist_id: null, manifest_revision: empty.manifestRevision });
    const { manifest } = await validManifest(env.server, p);
    expect(manifest.manifestRevision).not.toBe(empty.manifestRevision);
    await activate(env.server, p, manifest.manifestRevision);
    const after = (await screen(p.screen.id)).health.now_playing;
    expect(after).toMatchObject({ playlist_id: playlistId, manifest_revision: manifest.manifestRevision });
  });

  // PostgreSQL only: the reports are held at the screen's runtime state (FOR UPDATE) until both have read it.
  it.skipIf(!onPostgres)('records one activation of a manifest reported twice at the same moment', async () => {
    const { p } = await playingEmptyThenAssigned();
    const { manifest } = await validManifest(env.server, p);
    await whileRowLocked('screen_runtime_state', p.screen.id, () =>
      Promise.all([1, 2].map(() => activate(env.server, p, manifest.manifestRevision))),
    );
    const activations = (await events(p.screen.id, ['manifest.activated'])).filter(
      (e) => e.details.manifest_revision === manifest.manifestRevision,
    );
    expect(activations).toHaveLength(1);
  });

  it('counts the kiosk watchdog’s recoveries from its reports', async () => {
    const p = await env.player();
    for (const reason of ['stalled', 'crashed']) {
      const res = await report(env.server, p, {
        severity: 'warning',
        code: RENDERER_RECOVERED,
        context: { reason, count: 1 },
      });
      expect(res.status, res.text).toBe(202);
    }
    expect((await screen(p.screen.id)).health.watchdog).toEqual({
      recoveries: 2,
      last_recovery_at: new Date(env.clock.now()).toISOString(),
      last_reason: 'crashed',
    });
  });
});

describe('screen.online and screen.offline', () => {
  const sweep = (drift: PresenceDrift) => sweepPresence(env.server.services, drift, env.clock.now());

  it('are announced once a change held for the debounce, with last seen and offline since', async () => {
    const drift: PresenceDrift = new Map();
    const p = await env.player();
    const reader = await connect(p);
    const connectedAt = env.clock.now();
    await sweep(drift);
    env.clock.advance(PRESENCE_DEBOUNCE_MS - 1);
    await sweep(drift);
    expect(await events(p.screen.id, ['screen.online', 'screen.offline'])).toEqual([]);
    env.clock.advance(1);
    await sweep(drift);
    expect(await events(p.screen.id, ['screen.online', 'screen.offline'])).toEqual([
      {
        type: 'screen.online',
        details: { last_seen_at: new Date(env.clock.now()).toISOString(), offline_since: null },
      },
    ]);
    expect((await screen(p.screen.id)).health.presence).toBe('online');

    await disconnect(reader);
    const lastSeen = (await screen(p.screen.id)).last_online_at;
    expect(Date.parse(lastSeen)).toBeGreaterThanOrEqual(connectedAt);
    await sweep(drift);
    env.clock.advance(PRESENCE_DEBOUNCE_MS);
    await sweep(drift);
    const view = await screen(p.screen.id);
    expect(view.health).toMatchObject({ presence: 'offline', offline_since: lastSeen, last_seen_at: lastSeen });
    expect((await events(p.screen.id, ['screen.offline']))[0]!.details).toEqual({
      last_seen_at: lastSeen,
      offline_since: lastSeen,
    });

    // Back: screen.online names since when it was offline, and the view clears it.
    const again = await connect(p);
    await sweep(drift);
    env.clock.advance(PRESENCE_DEBOUNCE_MS);
    await sweep(drift);
    const back = await events(p.screen.id, ['screen.online']);
    expect(back[1]!.details.offline_since).toBe(lastSeen);
    expect((await screen(p.screen.id)).health).toMatchObject({ presence: 'online', offline_since: null });
    again.close();
  });

  // PostgreSQL only: the announcements are held at the health row (FOR UPDATE) until both have read it.
  it.skipIf(!onPostgres)('are announced once when two processes sweep at the same moment', async () => {
    const [one, two]: PresenceDrift[] = [new Map(), new Map()];
    const p = await env.player();
    const reader = await connect(p);
    await Promise.all([sweep(one), sweep(two)]);
    env.clock.advance(PRESENCE_DEBOUNCE_MS);
    await whileRowLocked('screen_health', p.screen.id, () => Promise.all([sweep(one), sweep(two)]));
    expect(await events(p.screen.id, ['screen.online'])).toHaveLength(1);
    reader.close();
  });

  it('a screen that flaps within the debounce produces no event pair', async () => {
    const drift: PresenceDrift = new Map();
    const p = await env.player();
    const first = await connect(p);
    await sweep(drift);
    env.clock.advance(PRESENCE_DEBOUNCE_MS);
    await sweep(drift);
    expect(await events(p.screen.id, ['screen.online', 'screen.offline'])).toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      await disconnect(i === 0 ? first : (open.at(-1) as StreamReader));
      await sweep(drift);
      env.clock.advance(PRESENCE_DEBOUNCE_MS / 2);
      await sweep(drift);
      await connect(p);
      await sweep(drift);
    }
    env.clock.advance(PRESENCE_DEBOUNCE_MS);
    await sweep(drift);
    expect((await events(p.screen.id, ['screen.online', 'screen.offline'])).map((e) => e.type)).toEqual([
      'screen.online',
    ]);
    open.at(-1)!.close();
  });

  it('are durable across a restart: an announced screen is not announced again, and offline follows', async () => {
    const p = await env.player();
    const reader = await connect(p);
    const drift: PresenceDrift = new Map();
    await sweep(drift);
    env.clock.advance(PRESENCE_DEBOUNCE_MS);
    await sweep(drift);
    reader.close();
    const restarted = await env.server.restart();
    try {
      // A new process: presence is empty (the stream went with the old one). Where presence is
      // shared (PostgreSQL), the old process released its screens with the reconnect grace.
      env.clock.advance(PRESENCE_GRACE_MS);
      const sweepAfter = (d: PresenceDrift) => sweepPresence(restarted.services, d, env.clock.now());
      const fresh: PresenceDrift = new Map();
      await sweepAfter(fresh);
      env.clock.advance(PRESENCE_DEBOUNCE_MS);
      await sweepAfter(fresh);
      await sweepAfter(fresh);
      const rows = await restarted.services.store.db
        .selectFrom('events')
        .select('type')
        .where('screen_id', '=', p.screen.id)
        .where('type', 'in', ['screen.online', 'screen.offline'])
        .orderBy('position')
        .execute();
      expect(rows.map((r) => r.type)).toEqual(['screen.online', 'screen.offline']);
    } finally {
      await restarted.stop({ keepData: true });
    }
  });
});
