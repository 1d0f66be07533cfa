import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import packageJson from '../../../package.json';
import {
  CAPABILITY_HANDLE_MIN_LENGTH,
  launchRoute,
  parseRuntimeManifest,
  packageRoute,
  WEBAPP_PACKAGE_CONTENT_TYPE,
  WEBAPP_PACKAGE_VERSION,
  type RuntimePlacement,
} from '../../../sdk/contract/manifest';
import { imagePlacement, manifestFixture, pageFixture, REVISION, RUNTIME_ORIGIN } from '../playback/manifest.fixtures';
import { MEDIA_CACHE } from '../offline/media-cache-policy';
import type { PlayerDatabase, StoredManifest } from '../offline/player-database';
import { MemoryShowingStore } from '../offline/playback-queue';
import { createPlayerStore } from '../state/player-store';
import {
  CAPABILITY_REFRESH_MARGIN_MS,
  MANIFEST_POLL_MS,
  PAIRED_DEVICE_KEY,
  manifestRefreshDelay,
  BOUNDARY_REFETCH_DELAY_MS,
  PlayerController,
  PLAYER_VERSION,
  type ControllerHost,
} from './player-controller';

function application(expiresAt: string): RuntimePlacement {
  return {
    id: 'board',
    content: {
      type: 'application',
      applicationId: 'app_1',
      releaseId: 'rel_1',
      launchUrl: launchRoute(REVISION, 'rel_1'),
      origin: 'http://abc.release.localhost:8080',
      protocol: '1',
      grantId: 'gr_fixture',
      package: {
        version: WEBAPP_PACKAGE_VERSION,
        url: packageRoute(REVISION, 'rel_1'),
        bytes: 10,
        sha256: 'b'.repeat(64),
        entrypoint: 'index.html',
        contentType: WEBAPP_PACKAGE_CONTENT_TYPE,
      },
    },
    rect: { x: 0, y: 0, width: 1920, height: 1080 },
    layer: 0,
    contentFit: 'fill',
    controller: true,
    capabilityHandle: 'c'.repeat(CAPABILITY_HANDLE_MIN_LENGTH),
    capabilityExpiresAt: expiresAt,
  };
}

describe('manifest refresh', () => {
  const now = Date.parse('2026-03-02T11:00:00Z');

  it('polls every ten minutes when the manifest holds no capabilities', () => {
    expect(manifestRefreshDelay(manifestFixture(), now)).toBe(MANIFEST_POLL_MS);
  });

  it('refetches a minute before the earliest placement capability expires', () => {
    const manifest = manifestFixture({
      pages: [
        pageFixture('a', {
          advance: { mode: 'application', maxMs: 60_000 },
          placements: [application('2026-03-02T11:05:00Z')],
        }),
        pageFixture('b', {
          advance: { mode: 'application', maxMs: 60_000 },
          placements: [application('2026-03-02T11:04:00Z')],
        }),
      ],
    });
    expect(manifestRefreshDelay(manifest, now)).toBe(4 * 60_000 - CAPABILITY_REFRESH_MARGIN_MS);
  });

  it('never spins on capabilities that already expired', () => {
    const manifest = manifestFixture({
      pages: [
        pageFixture('a', {
          advance: { mode: 'application', maxMs: 60_000 },
          placements: [application('2026-03-02T10:00:00Z')],
        }),
      ],
    });
    expect(manifestRefreshDelay(manifest, now)).toBe(5_000);
  });

  it('refetches just after the next schedule boundary, so an offline-stream player switches on time', () => {
    const manifest = manifestFixture({ nextBoundaryAt: '2026-03-02T11:05:00Z' });
    expect(manifestRefreshDelay(manifest, now)).toBe(5 * 60_000 + BOUNDARY_REFETCH_DELAY_MS);
    // A boundary two seconds away is not held to the five-second floor.
    expect(manifestRefreshDelay(manifestFixture({ nextBoundaryAt: '2026-03-02T11:00:00.500Z' }), now)).toBe(
      500 + BOUNDARY_REFETCH_DELAY_MS,
    );
  });

  it('does not spin on a boundary already past', () => {
    expect(manifestRefreshDelay(manifestFixture({ nextBoundaryAt: '2026-03-02T10:00:00Z' }), now)).toBe(
      MANIFEST_POLL_MS,
    );
  });
});

// ---- The controller against a fake runtime (its fetch), with a device clock that may be wrong.

const SERVER_ORIGIN = RUNTIME_ORIGIN;

interface FakeRuntime {
  fetch: typeof fetch;
  calls: string[];
  /** Server time (the Date header); device time is Date.now(). */
  serverNow: () => number;
}

function memoryStorage(): Storage {
  const map = new Map<string, string>();
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (k) => map.get(k) ?? null,
    key: (i) => [...map.keys()][i] ?? null,
    removeItem: (k) => void map.delete(k),
    setItem: (k, v) => void map.set(k, v),
  };
}

function controllerWith(runtime: FakeRuntime, extra: Partial<ControllerHost> = {}) {
  const store = createPlayerStore();
  const reloads: number[] = [];
  const controller = new PlayerController({
    config: { runtimeOrigin: SERVER_ORIGIN, contentOrigin: SERVER_ORIGIN },
    store,
    db: null,
    location: { pathname: '/', hash: '' } as Location,
    history: { replaceState: () => undefined } as unknown as History,
    storage: memoryStorage(),
    reload: () => reloads.push(Date.now()),
    log: () => undefined,
    fetch: runtime.fetch,
    ...extra,
  });
  return { controller, store, reloads };
}

/** A runtime whose clock is `skewMs` ahead of the device's; `routes` answer by "METHOD path". */
function fakeRuntime(
  skewMs: number,
  routes: Record<string, (init: RequestInit | undefined) => Promise<Response> | Response>,
): FakeRuntime {
  const calls: string[] = [];
  const serverNow = () => Date.now() + skewMs;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(String(input));
    const key = `${init?.method ?? 'GET'} ${url.pathname}`;
    calls.push(key);
    const route = routes[key];
    const response = route ? await route(init) : new Response(null, { status: 404 });
    const headers = new Headers(response.headers);
    headers.set('date', new Date(serverNow()).toUTCString());
    return new Response(response.body, { status: response.status, headers });
  };
  return { fetch, calls, serverNow };
}

const session = {
  paired: true,
  capabilities: ['manifest.read'],
  event_cursor: 'cur_0',
  public_url: `${SERVER_ORIGIN}/s/pub_1`,
};
/** Waits for the call's signal to abort (a request on a half-open connection). */
const hang = (init: RequestInit | undefined) =>
  new Promise<Response>((_, reject) =>
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }),
  );

describe('the controller on a device with a wrong clock', () => {
  afterEach(() => vi.useRealTimers());

  it('schedules the capability refresh on server time (device ten minutes behind)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(Date.parse('2026-03-02T10:50:00Z'));
    let expires = '';
    const runtime = fakeRuntime(10 * 60_000, {
      'GET /runtime/v1/manifest': () => {
        expires = new Date(runtime.serverNow() + 5 * 60_000).toISOString();
        return Response.json(
          manifestFixture({
            pages: [
              pageFixture('a', { advance: { mode: 'application', maxMs: 60_000 }, placements: [application(expires)] }),
            ],
          }),
          { headers: { etag: '"m1"' } },
        );
      },
    });
    const { controller } = controllerWith(runtime);
    await controller.fetchManifest();
    expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/manifest')).toHaveLength(1);
    // A minute before the capability expires on the server's clock: four minutes from now.
    await vi.advanceTimersByTimeAsync(4 * 60_000 - 1000);
    expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/manifest')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/manifest')).toHaveLength(2);
    controller.destroy();
  });

  it('honours a reload that has not expired on server time (device twenty minutes ahead)', async () => {
    const runtime = fakeRuntime(-20 * 60_000, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () => Response.json(manifestFixture(), { headers: { etag: '"m1"' } }),
      'GET /runtime/v1/events': () => {
        const expiresAt = new Date(runtime.serverNow() + 10 * 60_000).toISOString();
        const details = { reason: 'project', reload_id: 'rld_1', spread_s: 0, expires_at: expiresAt };
        return new Response(
          `event: player.reload\nid: c1\ndata: ${JSON.stringify({ type: 'player.reload', details })}\n\n`,
          { headers: { 'content-type': 'text/event-stream' } },
        );
      },
    });
    const { controller, reloads } = controllerWith(runtime);
    await controller.start();
    await vi.waitFor(() => expect(reloads).toHaveLength(1), { timeout: 3000 });
    controller.destroy();
  });
});

describe('the controller when the runtime does not answer', () => {
  afterEach(() => vi.useRealTimers());

  it('backs off with jitter after failed manifest fetches instead of polling every 5 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(Date.parse('2026-03-02T11:00:00Z'));
    const runtime = fakeRuntime(0, {
      'GET /runtime/v1/manifest': () => Promise.reject(new TypeError('network error')),
    });
    const { controller, store } = controllerWith(runtime);
    // Offline with an application placement whose capabilities already expired.
    store.setState({
      manifest: manifestFixture({
        pages: [
          pageFixture('a', {
            advance: { mode: 'application', maxMs: 60_000 },
            placements: [application('2026-03-02T10:00:00Z')],
          }),
        ],
      }),
    });
    await controller.fetchManifest().catch(() => undefined);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const attempts = runtime.calls.filter((c) => c === 'GET /runtime/v1/manifest').length;
    // 1 s doubling to 60 s (each between half and all of that): about fifteen in ten minutes, not 120.
    expect(attempts).toBeGreaterThanOrEqual(8);
    expect(attempts).toBeLessThanOrEqual(25);
    expect(store.getState().connectivity).toBe('offline');
    controller.destroy();
  });

  it('leaves nothing behind on its stop signal after each wait between attempts (a week offline is thousands)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Promise.reject(new TypeError('network error')),
    });
    const storage = memoryStorage();
    storage.setItem(PAIRED_DEVICE_KEY, '1');
    const { controller } = controllerWith(runtime, { storage });
    await controller.start();
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    expect(runtime.calls.filter((c) => c === 'POST /runtime/v1/device-sessions').length).toBeGreaterThan(20);
    const stop = (controller as unknown as { stop: AbortController }).stop.signal;
    expect(getEventListeners(stop, 'abort').length).toBeLessThan(5);
    controller.destroy();
  });

  it('opens the event stream without waiting for the first manifest, and refetches after a hung fetch times out', async () => {
    let manifestCalls = 0;
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': (init) =>
        ++manifestCalls === 1 ? hang(init) : Response.json(manifestFixture(), { headers: { etag: '"m1"' } }),
      'GET /runtime/v1/events': (init) => hang(init),
    });
    const { controller, store } = controllerWith(runtime, { callTimeoutMs: 200 });
    await controller.start();
    await vi.waitFor(() => expect(runtime.calls).toContain('GET /runtime/v1/events'), { timeout: 1000 });
    expect(manifestCalls).toBe(1); // still hanging
    await vi.waitFor(() => expect(store.getState().manifest?.manifestRevision).toBe(REVISION), { timeout: 5000 });
    controller.destroy();
  });
});

// ---- What the device keeps of a screen: nothing once it plays another, and no credentials on disk.

function fakeDatabase(stored?: StoredManifest) {
  const calls: string[] = [];
  const saved: StoredManifest[] = [];
  const db = {
    loadActiveManifest: async () => stored,
    saveActiveManifest: async (value: StoredManifest) => void saved.push(structuredClone(value)),
    forgetActiveManifest: async () => void calls.push('forgetActiveManifest'),
    touchMedia: async () => undefined,
    mediaReferences: async () => new Map<string, number>(),
    forgetMedia: async () => undefined,
    forgetAllMedia: async () => void calls.push('forgetAllMedia'),
    showings: () => new MemoryShowingStore(),
  };
  return { db: db as unknown as PlayerDatabase, calls, saved };
}

function fakeCaches() {
  const deleted: string[] = [];
  vi.stubGlobal('caches', {
    delete: async (name: string) => (deleted.push(name), true),
    open: async () => ({ keys: async () => [], delete: async () => true }),
  });
  return deleted;
}

describe('the offline store and the screen it belongs to', () => {
  afterEach(() => vi.unstubAllGlobals());

  const withApplication = (screenId: string) =>
    manifestFixture({
      screenId,
      pages: [
        pageFixture('a', {
          advance: { mode: 'application', maxMs: 60_000 },
          placements: [application('2026-03-02T11:05:00Z')],
        }),
      ],
    });

  it('forgets the manifest, the media references and the media cache when the device must pair again', async () => {
    const deleted = fakeCaches();
    const { db, calls } = fakeDatabase({ manifest: withApplication('scr_old'), etag: null, activatedAt: 0 });
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () =>
        Response.json({ code: 'unauthorized', detail: 'revoked' }, { status: 401 }),
      'POST /runtime/v1/pairing-sessions': () =>
        Response.json({ code: 'ABCDEF', expires_at: new Date(Date.now() + 600_000).toISOString() }, { status: 201 }),
      'GET /runtime/v1/pairing-events': (init) => hang(init),
    });
    const { controller, store } = controllerWith(runtime, { db });
    await controller.start();
    await vi.waitFor(() => expect(store.getState().phase).toBe('pairing'));
    await vi.waitFor(() => expect(calls).toEqual(expect.arrayContaining(['forgetActiveManifest', 'forgetAllMedia'])));
    expect(deleted).toEqual([MEDIA_CACHE]);
    controller.destroy();
  });

  it("forgets the previous screen's media when the device now plays another screen (re-homed)", async () => {
    const deleted = fakeCaches();
    const { db, calls } = fakeDatabase({
      manifest: manifestFixture({ screenId: 'scr_old' }),
      etag: '"old"',
      activatedAt: 0,
    });
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () =>
        Response.json(manifestFixture({ screenId: 'scr_new' }), { headers: { etag: '"new"' } }),
      'GET /runtime/v1/events': (init) => hang(init),
    });
    const { controller, store } = controllerWith(runtime, { db });
    await controller.start();
    await vi.waitFor(() => expect(store.getState().manifest?.screenId).toBe('scr_new'));
    expect(calls).toContain('forgetAllMedia');
    expect(deleted).toEqual([MEDIA_CACHE]);
    controller.destroy();
  });

  it('keeps the media of the same screen across a new manifest', async () => {
    const deleted = fakeCaches();
    const { db, calls } = fakeDatabase({
      manifest: manifestFixture({ screenId: 'scr_same' }),
      etag: '"old"',
      activatedAt: 0,
    });
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () =>
        Response.json(
          manifestFixture({
            screenId: 'scr_same',
            manifestRevision: 'man_fixture2',
            pages: [
              pageFixture('a', { placements: [imagePlacement('hero', ['med_a'], { revision: 'man_fixture2' })] }),
            ],
          }),
          { headers: { etag: '"new"' } },
        ),
      'GET /runtime/v1/events': (init) => hang(init),
    });
    const { controller, store } = controllerWith(runtime, { db });
    await controller.start();
    await vi.waitFor(() => expect(store.getState().manifest?.manifestRevision).toBe('man_fixture2'));
    expect(calls).not.toContain('forgetAllMedia');
    expect(deleted).toEqual([]);
    controller.destroy();
  });

  it('neither stores nor reports a derived loop (the upcoming pages past a boundary) as activated', async () => {
    fakeCaches();
    const { db, saved } = fakeDatabase();
    const runtime = fakeRuntime(0, { 'POST /runtime/v1/reports': () => new Response(null, { status: 202 }) });
    const { controller, store } = controllerWith(runtime, { db });
    store.setState({ session: { paired: true, publicUrl: 'u', capabilities: [] } });
    const derived = manifestFixture({ pages: [pageFixture('lunch')], playlistId: 'pl_next' });
    await controller.activated(derived, true);
    expect(store.getState().onGlass?.pages).toBe(1);
    expect(saved).toEqual([]);
    expect(runtime.calls).not.toContain('POST /runtime/v1/reports');
    // The real one is, as before.
    await controller.activated(manifestFixture(), false);
    expect(saved).toHaveLength(1);
    expect(runtime.calls).toContain('POST /runtime/v1/reports');
    controller.destroy();
  });

  it('never writes a placement capability to disk; the stored manifest still plays', async () => {
    fakeCaches();
    const { db, saved } = fakeDatabase();
    const { controller, store } = controllerWith(fakeRuntime(0, {}), { db });
    const manifest = withApplication('scr_1');
    store.setState({ session: { paired: false, publicUrl: 'u', capabilities: [] } });
    await controller.activated(manifest);
    expect(saved).toHaveLength(1);
    const handle = (manifest.pages[0]!.placements[0] as { capabilityHandle: string }).capabilityHandle;
    expect(JSON.stringify(saved[0])).not.toContain(handle);
    // Without a handle a stored validator must not turn the first fetch into a 304.
    expect(saved[0]!.etag).toBeNull();
    expect(parseRuntimeManifest(saved[0]!.manifest, RUNTIME_ORIGIN).ok).toBe(true);
    controller.destroy();
  });
});

describe('the playback clock of a sync group', () => {
  const lockstep = () => manifestFixture({ sync: { group: 'wall', epoch: '2026-03-02T11:00:00.000Z' } });

  it('synchronizes to the server over GET /runtime/v1/time once a sync group plays, stepping only while it starts', async () => {
    // The device is three hours and a bit behind; Date headers (one-second resolution) could not say by how much.
    const skew = 3 * 3600_000 + 1234.5;
    const runtime = fakeRuntime(skew, {
      'GET /runtime/v1/manifest': () => Response.json(lockstep(), { headers: { etag: '"m1"' } }),
      'GET /runtime/v1/time': () => {
        const at = runtime.serverNow();
        return Response.json({ received_at_ms: at, sent_at_ms: at });
      },
    });
    const { controller } = controllerWith(runtime);
    let steps = 0;
    controller.onClockStep(() => steps++);
    expect(controller.clock.synchronized).toBe(false);
    await controller.fetchManifest();
    await vi.waitFor(() => expect(controller.clock.synchronized).toBe(true), { timeout: 3000 });
    await vi.waitFor(() => expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/time').length).toBeGreaterThan(4));
    expect(Math.abs(controller.now() - (Date.now() + skew))).toBeLessThan(20);
    expect(controller.clock.uncertaintyMs).toBeLessThan(20);
    // The starting burst steps (the engine judges its position again each time); later exchanges slew.
    await vi.waitFor(
      () => expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/time').length).toBeGreaterThan(8),
      {
        timeout: 5000,
      },
    );
    const burst = steps;
    expect(burst).toBeGreaterThanOrEqual(1);
    expect(burst).toBeLessThanOrEqual(40);
    await new Promise((r) => setTimeout(r, 4500));
    expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/time').length).toBeGreaterThan(9);
    expect(steps).toBe(burst);
    controller.destroy();
  });

  it('asks nothing of the server clock for a manifest outside any sync group', async () => {
    const runtime = fakeRuntime(0, {
      'GET /runtime/v1/manifest': () => Response.json(manifestFixture(), { headers: { etag: '"m1"' } }),
    });
    const { controller } = controllerWith(runtime);
    await controller.fetchManifest();
    await new Promise((r) => setTimeout(r, 500));
    expect(runtime.calls).not.toContain('GET /runtime/v1/time');
    expect(controller.clock.synchronized).toBe(false);
    controller.destroy();
  });
});

describe('the barriers of a sync group', () => {
  const lockstep = () => manifestFixture({ sync: { group: 'wall', epoch: '2026-03-02T11:00:00.000Z' } });
  const barrier = { timeline: 'pl_1@1@2026-03-02T11:00:00.000Z', page_index: 1, at: '2026-03-02T11:05:00.500Z' };

  it('joins the timeline of the group’s last barrier when it starts, and sends its application’s advance', async () => {
    const advances: unknown[] = [];
    const runtime = fakeRuntime(0, {
      'GET /runtime/v1/manifest': () => Response.json(lockstep(), { headers: { etag: '"m1"' } }),
      'GET /runtime/v1/time': () => Response.json({ received_at_ms: Date.now(), sent_at_ms: Date.now() }),
      'GET /runtime/v1/sync/barrier': () => Response.json({ barrier }),
      'POST /runtime/v1/sync/advance': (init) => {
        advances.push(JSON.parse(String(init?.body)));
        return Response.json(
          { barrier: { ...barrier, page_index: 2, at: '2026-03-02T11:05:09.000Z' } },
          { status: 202 },
        );
      },
    });
    const { controller } = controllerWith(runtime);
    const heard: unknown[] = [];
    controller.onBarrier((b) => heard.push(b));
    await controller.fetchManifest();
    await vi.waitFor(() => expect(heard).toHaveLength(1));
    expect(heard[0]).toEqual({ timeline: barrier.timeline, pageIndex: 1, at: Date.parse(barrier.at) });
    expect(controller.latestBarriers).toEqual([heard[0]]);
    await controller.advanceGroup(barrier.timeline, 2);
    expect(advances).toEqual([{ timeline: barrier.timeline, page_index: 2 }]);
    expect(heard).toHaveLength(2);
    expect(heard[1]).toEqual({ timeline: barrier.timeline, pageIndex: 2, at: Date.parse('2026-03-02T11:05:09.000Z') });
    // The same barrier again (the stream after the answer) is not handed on twice.
    await controller.advanceGroup(barrier.timeline, 2);
    expect(heard).toHaveLength(2);
    controller.destroy();
  });
});

describe('the barriers of several timelines', () => {
  const epoch = '2026-03-02T11:00:00.000Z';
  const ofRevision = (playlistRevision: number) =>
    manifestFixture({ playlistRevision, sync: { group: 'wall', epoch } });

  it('asks for the group’s last barrier again when the manifest’s timeline has none yet, and keeps each timeline’s last', async () => {
    let served = ofRevision(1);
    let etag = 0;
    const asked: string[] = [];
    let answer = { timeline: `pl_fixture@1@${epoch}`, page_index: 1, at: '2026-03-02T11:05:00.000Z' };
    const runtime = fakeRuntime(0, {
      'GET /runtime/v1/manifest': () => Response.json(served, { headers: { etag: `"m${++etag}"` } }),
      'GET /runtime/v1/time': () => Response.json({ received_at_ms: Date.now(), sent_at_ms: Date.now() }),
      'GET /runtime/v1/sync/barrier': () => {
        asked.push(answer.timeline);
        return Response.json({ barrier: answer });
      },
    });
    const { controller } = controllerWith(runtime);
    const heard: string[] = [];
    controller.onBarrier((b) => heard.push(`${b.timeline} ${b.pageIndex}`));
    await controller.fetchManifest();
    await vi.waitFor(() => expect(heard).toEqual([`pl_fixture@1@${epoch} 1`]));
    // The playlist's next revision is a new timeline: the barrier heard is not its.
    served = ofRevision(2);
    answer = { timeline: `pl_fixture@2@${epoch}`, page_index: 0, at: '2026-03-02T11:06:00.000Z' };
    await controller.fetchManifest();
    await vi.waitFor(() => expect(heard).toEqual([`pl_fixture@1@${epoch} 1`, `pl_fixture@2@${epoch} 0`]));
    expect(asked).toEqual([`pl_fixture@1@${epoch}`, `pl_fixture@2@${epoch}`]);
    // A fresh manifest of a timeline whose barrier it holds asks nothing.
    await controller.fetchManifest();
    await new Promise((r) => setTimeout(r, 100));
    expect(asked).toHaveLength(2);
    // Each timeline keeps its own last barrier: the new engine gets both, the newest last.
    expect(controller.latestBarriers.map((b) => `${b.timeline} ${b.pageIndex}`)).toEqual(heard);
    controller.destroy();
  });
});

describe('the controller when the manifest changes while it is reading it', () => {
  it('reads it once more after the fetch in flight, so the change is not left for the next poll', async () => {
    let release: () => void = () => undefined;
    let manifestCalls = 0;
    const runtime = fakeRuntime(0, {
      'GET /runtime/v1/manifest': async () => {
        manifestCalls += 1;
        if (manifestCalls === 1) {
          // The first read was answered before the change landed; it arrives late.
          await new Promise<void>((resolve) => (release = resolve));
          return Response.json(manifestFixture(), { headers: { etag: '"m1"' } });
        }
        return Response.json(manifestFixture({ screenLabel: 'Lobby (renamed)' }), { headers: { etag: '"m2"' } });
      },
    });
    const { controller, store } = controllerWith(runtime);
    const first = controller.fetchManifest();
    await vi.waitFor(() => expect(manifestCalls).toBe(1));
    // screen.manifest_changed arrives while the first read is in flight.
    const second = controller.fetchManifest();
    release();
    await Promise.all([first, second]);
    expect(manifestCalls).toBe(2);
    expect(store.getState().manifest?.screenLabel).toBe('Lobby (renamed)');
    controller.destroy();
  });
});

describe('proof of play in the controller', () => {
  const facts = {
    manifestRevision: REVISION,
    pageId: 'a',
    placementId: 'hero',
    mediaId: 'med_1',
    startedAt: Date.parse('2026-03-02T11:00:00Z'),
  };

  it('uploads what was on glass once it holds a paired session, and forgets it after the answer', async () => {
    const bodies: { reports: { id: string; outcome: string }[] }[] = [];
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () => Response.json(manifestFixture(), { headers: { etag: '"m1"' } }),
      'GET /runtime/v1/events': hang,
      'POST /runtime/v1/playback': (init) => {
        bodies.push(JSON.parse(String(init?.body)));
        return Response.json({ counted: 1, duplicates: 0, refused: [] });
      },
    });
    const storage = memoryStorage();
    storage.setItem(PAIRED_DEVICE_KEY, '1'); // paired before this start (which may be offline)
    const { controller } = controllerWith(runtime, { storage });
    controller.showing({ ...facts, startedAt: Date.now() - 2000 }).end(Date.now() - 1000, 'complete');
    await controller.start();
    await vi.waitFor(() => expect(bodies).toHaveLength(1), { timeout: 3000 });
    expect(bodies[0]!.reports).toEqual([expect.objectContaining({ outcome: 'complete', media_id: 'med_1' })]);
    await vi.waitFor(async () => expect(await controller.proofOfPlay.size()).toBe(0));
    controller.destroy();
  });

  it('counts nothing on a device that is not paired (a public URL viewer)', async () => {
    const runtime = fakeRuntime(0, {});
    const storage = memoryStorage();
    storage.setItem(PAIRED_DEVICE_KEY, '0');
    const { controller } = controllerWith(runtime, { storage });
    controller.showing(facts).end(facts.startedAt + 1000, 'complete');
    expect(await controller.proofOfPlay.size()).toBe(0);
    controller.destroy();
  });
});

describe('the controller and what is on glass', () => {
  const surface = { id: 'primary', width: 1280, height: 720, pixel_ratio: 1, presentation: 'output' as const };
  const request = (captureId: string, expiresAt: string) => ({
    type: 'screen.screenshot_requested',
    details: {
      capture_id: captureId,
      expires_at: expiresAt,
      max_width_divisor: 2,
      max_height_divisor: 2,
      format: 'image/webp',
      quality: 80,
      max_bytes: 2_097_152,
    },
  });

  it('answers a live screenshot request with its composed still, ignores an expired one, and tells its surface', async () => {
    const uploads: { captureId: string | null; method: string | null; bytes: number }[] = [];
    const observations: { body: unknown; player: string | null }[] = [];
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () => Response.json(manifestFixture(), { headers: { etag: '"m1"' } }),
      'GET /runtime/v1/events': () => {
        const past = new Date(runtime.serverNow() - 1000).toISOString();
        const future = new Date(runtime.serverNow() + 30_000).toISOString();
        const frames = [request('shot_expiredexpiredexp', past), request('shot_livelivelivelivel', future)]
          .map((e, i) => `event: ${e.type}\nid: c${i}\ndata: ${JSON.stringify(e)}\n\n`)
          .join('');
        return new Response(frames, { headers: { 'content-type': 'text/event-stream' } });
      },
      'PUT /runtime/v1/screenshot': async (init) => {
        const headers = new Headers(init?.headers);
        uploads.push({
          captureId: headers.get('marquee-capture-id'),
          method: headers.get('marquee-capture-method'),
          bytes: new Uint8Array(await new Response(init?.body as BodyInit).arrayBuffer()).length,
        });
        return new Response(null, { status: 204 });
      },
      'PUT /runtime/v1/observation': (init) => {
        observations.push({
          body: JSON.parse(String(init?.body)),
          player: new Headers(init?.headers).get('marquee-player'),
        });
        return new Response(null, { status: 204 });
      },
    });
    const captures: unknown[] = [];
    const { controller } = controllerWith(runtime, {
      glass: {
        capture: async (req) => {
          captures.push(req);
          return new Blob([new Uint8Array(12)], { type: 'image/webp' });
        },
        surface: () => surface,
      },
    });
    await controller.start();
    await vi.waitFor(() => expect(uploads).toHaveLength(1), { timeout: 3000 });
    expect(uploads[0]).toEqual({ captureId: 'shot_livelivelivelivel', method: 'composed', bytes: 12 });
    expect(captures).toHaveLength(1);
    await vi.waitFor(() => expect(observations.length).toBeGreaterThan(0), { timeout: 3000 });
    expect(observations[0]).toEqual({
      body: { observed_at: expect.any(String), surfaces: [surface] },
      player: `browser/${PLAYER_VERSION}`,
    });
    // The same surface is not told twice.
    await controller.observe();
    expect(observations).toHaveLength(1);
    controller.destroy();
  });

  it("reports the package's version", () => {
    expect(PLAYER_VERSION).toBe(packageJson.version);
  });
});

describe('the controller against a runtime that answers garbage', () => {
  afterEach(() => vi.useRealTimers());

  it('backs off when every session it opens ends in a refused stream, instead of reconnecting every second', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () => Response.json(manifestFixture(), { headers: { etag: '"m1"' } }),
      // A proxy (or a captive portal) answering the stream with a page of its own.
      'GET /runtime/v1/events': () => new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } }),
    });
    const { controller } = controllerWith(runtime);
    await controller.start();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const sessions = runtime.calls.filter((c) => c === 'POST /runtime/v1/device-sessions').length;
    // 1 s doubling to 60 s, as any other failure: about fifteen in ten minutes, not six hundred.
    expect(sessions).toBeGreaterThanOrEqual(5);
    expect(sessions).toBeLessThanOrEqual(25);
    controller.destroy();
  });

  it('reports a manifest it cannot play once, not at every poll', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const reports: string[] = [];
    const runtime = fakeRuntime(0, {
      'POST /runtime/v1/device-sessions': () => Response.json(session, { status: 201 }),
      'GET /runtime/v1/manifest': () => Response.json({ garbage: true }, { headers: { etag: '"bad"' } }),
      'GET /runtime/v1/events': (init) => hang(init),
      'POST /runtime/v1/reports': async (init) => {
        reports.push(JSON.parse(String(init?.body)).code);
        return new Response(null, { status: 202 });
      },
    });
    const { controller } = controllerWith(runtime);
    await controller.start();
    // An hour of ten-minute polls.
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(runtime.calls.filter((c) => c === 'GET /runtime/v1/manifest').length).toBeGreaterThanOrEqual(6);
    expect(reports.filter((code) => code === 'manifest.rejected')).toHaveLength(1);
    controller.destroy();
  });
});
