import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRuntimeEvent, type RuntimeEvent } from '../../sdk/contract/event-types';
import { parseRuntimeManifest, type RuntimeImagePlacement } from '../../sdk/contract/manifest';
import { MarqueeNetworkError, MarqueeProblem } from '../../sdk/client/problem';
import { RuntimeClient } from '../../sdk/client/runtime';
import { imagePlacement, page } from '../../server/playlists/content.fixtures';
import { createPlaylist, patchScreen, storedMedia } from '../../server/runtime/runtime.fixtures';
import { TestServer } from '../../server/testing/harness';
import type { KioskAgent } from './agent';
import { HOST, Renderer, startAgent, tempDataDir, until } from './agent.fixtures';
import { fixedHostFacts } from './host-facts';
import { forgetLocalState, KIOSK_ENTRIES } from './main';
import { FakePlatform } from './platform';
import { mediaOf } from './local-manifest';
import { Upstream } from './upstream';
import type { ContentFetch } from './mirror';

let server: TestServer;
let token: string;
let tenantId: string;
const agents: KioskAgent[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  const project = await server.enroll();
  token = project.token;
  tenantId = project.projectId;
});
afterAll(async () => {
  for (const agent of agents) await agent.stop().catch(() => undefined);
  await server.stop();
});

/** Every event of the project so far (the list is oldest first, 200 a page). */
async function allEvents(): Promise<{ type: string; details?: { code?: string; context?: unknown } }[]> {
  const items: { type: string; details?: { code?: string; context?: unknown } }[] = [];
  let after = '';
  for (;;) {
    const page = (
      await server.request('GET', `/api/v1/events?limit=200${after ? `&after=${encodeURIComponent(after)}` : ''}`, {
        token,
      })
    ).json();
    items.push(...page.items);
    if (page.items.length < 200) return items;
    after = page.next_cursor;
  }
}

async function agentAt(dataDir: string, upstream = server.origin) {
  const agent = await startAgent(upstream, dataDir);
  agents.push(agent);
  return agent;
}

/** The active manifest's revision once it shows the media. */
function showing(agent: KioskAgent, mediaId: string): Promise<string> {
  return until(() => {
    const active = agent.book.active()?.manifest;
    return active && mediaOf(active, mediaId) ? active.manifestRevision : undefined;
  });
}

async function showImage(screenId: string, bytes: Buffer): Promise<string> {
  const mediaId = await storedMedia(server, tenantId, bytes);
  const playlistId = await createPlaylist(server, token, {
    name: `Kiosk ${crypto.randomUUID()}`,
    pages: [page('still', [imagePlacement('hero', { by: 'id', media_id: mediaId })])],
  });
  await patchScreen(server, token, screenId, { playlist_id: playlistId });
  return mediaId;
}

describe('the kiosk agent', () => {
  it('refuses any Host but its own loopback origin (DNS rebinding)', async () => {
    const agent = await agentAt(tempDataDir());
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: agent.listeningPort,
          path: '/',
          headers: { host: `evil.example:${agent.listeningPort}` },
        },
        (r) => (r.resume(), resolve(r.statusCode!)),
      );
      req.on('error', reject);
      req.end();
    });
    expect(res).toBe(421);
    const page = await fetch(`${agent.origin}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<meta name="marquee-kiosk-channel"');
    const crossSite = await fetch(`${agent.origin}/runtime/v1/device-sessions`, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
  });

  it('pairs the renderer through its own key, mirrors the manifest, and serves it from disk', async () => {
    const agent = await agentAt(tempDataDir());
    const renderer = new Renderer(agent);
    expect((await renderer.post('/runtime/v1/device-sessions', {})).status).toBe(401);
    const completion = await renderer.pair(server.origin, token);
    const session = await renderer.post('/runtime/v1/device-sessions', {});
    expect(session.status).toBe(201);
    const body = await session.text();
    expect(JSON.parse(body)).toMatchObject({ paired: true, public_url: completion.public_url });
    // The upstream credential never reaches the renderer.
    expect(body).not.toContain('mqs_');

    const bytes = crypto.randomBytes(3000);
    const mediaId = await showImage(completion.screen.id, bytes);
    await until(async () => {
      const res = await renderer.fetch('/runtime/v1/manifest');
      return res.status === 200 && ((await res.json()) as { pages: unknown[] }).pages.length === 1;
    });
    const res = await renderer.fetch('/runtime/v1/manifest');
    const parsed = parseRuntimeManifest(await res.json(), agent.origin);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const item = (parsed.manifest.pages[0]!.placements[0] as RuntimeImagePlacement).content.items[0]!;
    expect(item.mediaId).toBe(mediaId);
    const media = await renderer.fetch(item.src);
    expect(media.status).toBe(200);
    expect(Buffer.from(await media.arrayBuffer()).equals(bytes)).toBe(true);
    const ranged = await renderer.fetch(item.src, { headers: { range: 'bytes=100-199' } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
    // The key file is the owner's only.
    expect(fs.statSync(`${agent.options.dataDir}/identity/device-key.pem`).mode & 0o777).toBe(0o600);
  });

  it('tells the renderer of a new manifest only once its content is on disk', async () => {
    const agent = await agentAt(tempDataDir());
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(2000)));
    const cursor = agent.events.head();
    const second = crypto.randomBytes(2000);
    const sha = crypto.createHash('sha256').update(second).digest('hex');
    const seen: boolean[] = [];
    const off = agent.events.subscribe((event) => {
      if (event.type === 'screen.manifest_changed') seen.push(agent.mirror.has(sha));
    });
    const before = agent.status();
    const assigned = Date.now();
    await showImage(screen.id, second);
    await until(() => seen.length > 0);
    off();
    expect(seen).toEqual([true]);
    expect(agent.events.after(cursor)).toHaveLength(1);
    // The status says when the new manifest went on glass: after the assignment, before the event.
    const after = agent.status();
    expect(after.active_manifest).not.toBe(before.active_manifest);
    const since = Date.parse(after.active_since!);
    expect(since).toBeGreaterThanOrEqual(assigned);
    expect(since).toBeGreaterThan(Date.parse(before.active_since!));
    expect(since).toBeLessThanOrEqual(Date.now());
  });

  it("announces a new manifest on the renderer's stream in the runtime contract's shape", async () => {
    const agent = await agentAt(tempDataDir());
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(2000)));
    // The player's own client and parser: an event it cannot parse, it ignores (and never refetches).
    const heard: (RuntimeEvent | undefined)[] = [];
    const stream = new RuntimeClient({ runtimeOrigin: agent.origin }).events({
      cursor: agent.events.head(),
      onEvent: (message) => void heard.push(parseRuntimeEvent(message.data)),
    });
    try {
      await showImage(screen.id, crypto.randomBytes(2000));
      await until(() => heard.length > 0);
      expect(heard[0]).toMatchObject({ type: 'screen.manifest_changed', details: { reason: 'playlist_assigned' } });
    } finally {
      stream.close();
    }
  });

  it('boots with no upstream and plays the last-known-good manifest from disk', async () => {
    const dataDir = tempDataDir();
    const agent = await agentAt(dataDir);
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    const bytes = crypto.randomBytes(4000);
    const mediaId = await showImage(screen.id, bytes);
    const revision = await showing(agent, mediaId);
    await agent.stop();

    // The same data dir, an upstream that does not answer.
    const offline = await agentAt(dataDir, 'http://127.0.0.1:9');
    const again = new Renderer(offline);
    expect((await again.post('/runtime/v1/device-sessions', {})).status).toBe(201);
    const res = await again.fetch('/runtime/v1/manifest');
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as { manifestRevision: string };
    expect(manifest.manifestRevision).toBe(revision);
    const media = await again.fetch(`/content/v1/manifests/${revision}/media/${mediaId}`);
    expect(media.status, await media.clone().text()).toBe(200);
    expect(Buffer.from(await media.arrayBuffer()).equals(bytes)).toBe(true);
    expect(offline.isOnline).toBe(false);
  });

  it('never serves a file that rotted on disk while it was down, and fetches it again', async () => {
    const dataDir = tempDataDir();
    const agent = await agentAt(dataDir);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    const bytes = crypto.randomBytes(4000);
    const mediaId = await showImage(screen.id, bytes);
    const revision = await showing(agent, mediaId);
    await agent.stop();
    // Same size, other bytes: the boot's size check passes; the renderer would cache it for good.
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    const file = `${dataDir}/mirror/blobs/${sha256}`;
    const rotten = fs.readFileSync(file);
    rotten[10] = rotten[10]! ^ 0xff;
    fs.writeFileSync(file, rotten);

    const again = await agentAt(dataDir);
    const renderer = new Renderer(again);
    expect((await renderer.post('/runtime/v1/device-sessions', {})).status).toBe(201);
    const url = `/content/v1/manifests/${revision}/media/${mediaId}`;
    const first = await renderer.fetch(url);
    expect(first.status).toBe(503);
    // Dropped and fetched again from upstream: then served whole.
    const media = await until(async () => {
      const res = await renderer.fetch(url);
      return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
    });
    expect(media.equals(bytes)).toBe(true);
  });
});

describe('identity reset', () => {
  it('tombstones the screen upstream and the agent asks its renderer to pair again', async () => {
    const agent = await agentAt(tempDataDir());
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(1100)));
    expect(agent.mirror.usage()).toBeGreaterThan(0);
    const sealedWith = Buffer.from(agent.localKey);
    await agent.upstream.reset();
    expect((await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).status).toBe(404);
    await until(async () => (await renderer.post('/runtime/v1/device-sessions', {})).status === 401);
    expect(agent.enrollment()).toBeUndefined();
    // The owner's content leaves the box, and grants sealed for its screen open nothing.
    expect(agent.mirror.usage()).toBe(0);
    expect(fs.readdirSync(path.join(agent.options.dataDir, 'mirror', 'blobs'))).toEqual([]);
    expect(agent.localKey.equals(sealedWith)).toBe(false);
  });
});

describe('the report queue', () => {
  it('is emptied with the key/value queue when the screen is gone: a later pairing never sends them as its own', async () => {
    const dataDir = tempDataDir();
    const agent = await agentAt(dataDir);
    await new Renderer(agent).pair(server.origin, token);
    await until(() => agent.isOnline);
    await agent.stop();

    const offline = await agentAt(dataDir, 'http://127.0.0.1:9');
    const queued = await new Renderer(offline).post('/runtime/v1/reports', {
      severity: 'warning',
      code: 'kiosk.old_screen',
      context: null,
    });
    expect(queued.status).toBe(202);
    offline.db
      .prepare(
        `INSERT INTO kv_queue (application_id, placement, method, key, body, if_match, idempotency_key, queued_at)
       VALUES ('app_old', 'pg/pl', 'DELETE', 'k', NULL, NULL, 'idem-old-screen', 0)`,
      )
      .run();
    // The screen is unbound while the kiosk is offline (its key's signed reset).
    await new Upstream(server.origin, offline.identity).reset();
    await offline.stop();

    const online = await agentAt(dataDir);
    await until(() => online.enrollment() === undefined);
    expect(online.reports.size()).toBe(0);
    expect(online.kv.pending()).toBe(0);
  });

  it('keeps reports made offline and uploads them in order when upstream is back', async () => {
    const dataDir = tempDataDir();
    const agent = await agentAt(dataDir);
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    const revision = await showing(agent, await showImage(screen.id, crypto.randomBytes(1000)));
    await agent.stop();

    const offline = await agentAt(dataDir, 'http://127.0.0.1:9');
    const r = new Renderer(offline);
    for (const code of ['kiosk.first', 'kiosk.second']) {
      const res = await r.post('/runtime/v1/reports', { severity: 'warning', code, context: null });
      expect(res.status).toBe(202);
    }
    const activated = await r.post('/runtime/v1/reports', {
      severity: 'info',
      code: 'manifest.activated',
      context: { manifest_revision: revision },
    });
    expect(activated.status).toBe(202);
    expect(offline.reports.size()).toBe(3);
    await offline.stop();

    // Back online: the queue survived the restart and goes upstream in order.
    const online = await agentAt(dataDir);
    await until(() => online.reports.size() === 0);
    const types = (await allEvents())
      .filter((e) => e.type === 'runtime.reported' || e.type === 'manifest.activated')
      .map((e) => (e.type === 'manifest.activated' ? e.type : e.details?.code));
    expect(types.slice(-3)).toEqual(['kiosk.first', 'kiosk.second', 'manifest.activated']);
  });
});

describe('renderer recoveries', () => {
  it('are counted and reported upstream like any runtime condition', async () => {
    const agent = await agentAt(tempDataDir());
    await new Renderer(agent).pair(server.origin, token);
    agent.recordRecovery('hang');
    agent.recordRecovery('hang');
    expect(agent.status().recoveries).toEqual({ hang: 2 });
    await until(() => agent.reports.size() === 0);
    const reported = (await allEvents()).filter(
      (e) => e.type === 'runtime.reported' && e.details?.code === 'kiosk.renderer_recovered',
    );
    expect(reported.slice(-2).map((e) => e.details?.context)).toEqual([
      { reason: 'hang', count: 1 },
      { reason: 'hang', count: 2 },
    ]);
  });
});

describe('a refresh that fails', () => {
  it('is tried again soon, not at the next poll (a transfer cut off mid-way)', async () => {
    let cut = 0;
    const flaky =
      (download: ContentFetch): ContentFetch =>
      async (p, options) => {
        if (cut++ === 0) throw new MarqueeNetworkError('GET got no answer: the uplink dropped', 1);
        return download(p, options);
      };
    const agent = await startAgent(server.origin, tempDataDir(), { contentFetch: flaky });
    agents.push(agent);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(1500)));
    expect(cut).toBeGreaterThan(1);
  });
});

describe('a manifest larger than the disk budget', () => {
  it('keeps the agent online and tells the owner once, however often the refresh is tried', async () => {
    const logged: string[] = [];
    const agent = await startAgent(server.origin, tempDataDir(), {
      budgetBytes: 2000,
      log: (_level, message) => void logged.push(message),
    });
    agents.push(agent);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await showImage(screen.id, crypto.randomBytes(4000));
    const reports = async () =>
      (await allEvents()).filter(
        (e) =>
          e.type === 'runtime.reported' &&
          e.details?.code === 'kiosk.mirror_full' &&
          (e as { resource?: { id?: string } }).resource?.id === screen.id,
      );
    await until(async () => (await reports()).length > 0);
    // Tried again with backoff (1 s, 2 s, ...): the server stayed reachable all along.
    await until(() => logged.filter((m) => m === 'manifest refresh failed').length >= 3, 20_000);
    expect(logged).not.toContain('upstream unreachable: playing from the mirror');
    expect(agent.isOnline).toBe(true);
    const [report] = await reports();
    expect(await reports()).toHaveLength(1);
    expect(report!.details?.context).toMatchObject({ budget_bytes: 2000 });
  });
});

describe('forgetting a kiosk (--reset-identity after the server unbound it)', () => {
  it('removes everything the kiosk wrote and nothing else of its data dir', async () => {
    const dir = tempDataDir();
    const agent = await startAgent(server.origin, dir);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(600)));
    await agent.stop();
    fs.mkdirSync(path.join(dir, 'chromium'), { recursive: true }); // the shell's profile
    // Everything the kiosk writes is one of the entries it forgets: a new one must join the list.
    expect(fs.readdirSync(dir).filter((entry) => !KIOSK_ENTRIES.includes(entry))).toEqual([]);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'a data dir set to a folder that holds other files');
    forgetLocalState(dir);
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
    fs.rmSync(path.join(dir, 'notes.txt'));
    await startAgent(server.origin, dir).then((again) => again.stop()); // an empty dir is a new kiosk's
    forgetLocalState(dir);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('a manifest whose content upstream refuses', () => {
  it('keeps the agent online, keeps what it plays, and tells the owner once', async () => {
    let refusing = false;
    const refusingMedia =
      (download: ContentFetch): ContentFetch =>
      async (p, options) => {
        // What a grant revoked or a blob lost upstream answers, every time it is asked.
        if (refusing && p.includes('/media/'))
          throw new MarqueeProblem(404, { code: 'not_found', detail: 'this manifest shows no such media' });
        return download(p, options);
      };
    const logged: string[] = [];
    const agent = await startAgent(server.origin, tempDataDir(), {
      contentFetch: refusingMedia,
      log: (_level, message) => void logged.push(message),
    });
    agents.push(agent);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    const first = await showing(agent, await showImage(screen.id, crypto.randomBytes(700)));
    refusing = true;
    await showImage(screen.id, crypto.randomBytes(900));
    const reports = async () =>
      (await allEvents()).filter(
        (e) =>
          e.type === 'runtime.reported' &&
          e.details?.code === 'kiosk.content_unavailable' &&
          (e as { resource?: { id?: string } }).resource?.id === screen.id,
      );
    await until(async () => (await reports()).length > 0);
    await until(() => logged.filter((m) => m === 'manifest refresh failed').length >= 3, 20_000);
    expect(agent.isOnline).toBe(true);
    expect(await reports()).toHaveLength(1);
    const [report] = await reports();
    expect(report!.details?.context).toMatchObject({ status: 404, problem_code: 'not_found' });
    expect((report as { severity?: string }).severity).toBe('error');
    // The screen keeps playing what it had.
    expect(agent.book.active()?.manifest.manifestRevision).toBe(first);
  });
});

describe('an upstream event the agent fails on', () => {
  it('is passed over once, not delivered again and again ahead of the events after it', async () => {
    const agent = await agentAt(tempDataDir());
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await until(() => agent.isOnline);
    let failed = 0;
    agent.events.subscribe((event) => {
      if (event.type === 'screen.display_changed' && ++failed) throw new Error('a renderer channel that broke');
    });
    await server.request('POST', `/api/v1/screens/${screen.id}/display`, { token, json: { power: 'off' } });
    await showing(agent, await showImage(screen.id, crypto.randomBytes(800)));
    await until(() => agent.display().power === 'off');
    await new Promise((r) => setTimeout(r, 1000));
    expect(failed).toBe(1);
  });
});

describe('the display', () => {
  it("mirrors the screen's display state, and hands it to a renderer that starts with no network", async () => {
    const dataDir = tempDataDir();
    const agent = await agentAt(dataDir);
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    await until(() => agent.isOnline);
    expect(agent.display()).toEqual({ power: null, schedule: null });
    const night = { on: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '07:00', end: '19:00' }] };
    await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { timezone: 'Europe/Berlin' } });
    const put = await server.request('PUT', `/api/v1/screens/${screen.id}/display-schedule`, { token, json: night });
    expect(put.status, put.text).toBe(200);
    const off = await server.request('POST', `/api/v1/screens/${screen.id}/display`, { token, json: { power: 'off' } });
    expect(off.status, off.text).toBe(200);
    await until(() => agent.display().power === 'off');
    expect(agent.display()).toEqual({ power: 'off', schedule: night });
    await agent.stop();

    const offline = await agentAt(dataDir, 'http://127.0.0.1:9');
    const session = await new Renderer(offline).post('/runtime/v1/device-sessions', {});
    expect(session.status).toBe(201);
    expect(((await session.json()) as { display: unknown }).display).toEqual({ power: 'off', schedule: night });
  });

  it('expects no content on glass while the display is off (black glass is no fault for the watchdog)', async () => {
    const agent = await agentAt(tempDataDir());
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(1000)));
    expect(agent.contentExpected()).toBe(true);
    const power = (value: 'on' | 'off' | null) =>
      server.request('POST', `/api/v1/screens/${screen.id}/display`, { token, json: { power: value } });
    expect((await power('off')).status).toBe(200);
    await until(() => agent.display().power === 'off');
    expect(agent.contentExpected()).toBe(false);
    expect((await power('on')).status).toBe(200);
    await until(() => agent.display().power === 'on');
    expect(agent.contentExpected()).toBe(true);
  });

  it("keeps the server's time for the renderer and itself, on a device whose clock is ten minutes behind", async () => {
    const AHEAD_MS = 10 * 60_000;
    // Upstream's answers carry its Date; this device's clock reads ten minutes less.
    const skewed: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.set('date', new Date(Date.now() + AHEAD_MS).toUTCString());
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
    };
    const agent = await startAgent(server.origin, tempDataDir(), { fetch: skewed });
    agents.push(agent);
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(1000)));
    // The player takes its clock from the Date headers of its runtime, which is this agent.
    const answered = Date.parse((await renderer.fetch('/runtime/v1/manifest')).headers.get('date')!);
    expect(Math.abs(answered - (Date.now() + AHEAD_MS))).toBeLessThan(3000);
    // A display schedule that turns on five minutes from the device's now: on the server's, it is on.
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const start = Math.floor((Date.now() + 5 * 60_000) / 60_000) * 60_000;
    const on = {
      on: [
        { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: hhmm(start), end: hhmm(start + 3_600_000) },
      ],
    };
    await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { timezone: 'UTC' } });
    const put = await server.request('PUT', `/api/v1/screens/${screen.id}/display-schedule`, { token, json: on });
    expect(put.status, put.text).toBe(200);
    await until(() => agent.display().schedule !== null && agent.book.active()?.manifest.timezone === 'UTC');
    expect(agent.contentExpected()).toBe(true);
  });

  it("acts on the page's display power and reboot calls through the platform adapter, ignoring anything else", async () => {
    const platform = new FakePlatform(fixedHostFacts(HOST));
    const agent = await startAgent(server.origin, tempDataDir(), { platform });
    agents.push(agent);
    await agent.pageCall('{"op":"display_power","on":false}');
    await agent.pageCall({ op: 'display_power', on: true });
    await agent.pageCall({ op: 'display_power', on: 'yes' });
    await agent.pageCall('{"op":"shutdown"}');
    await agent.pageCall('not json');
    await agent.pageCall({ op: 'reboot' });
    expect(platform.calls).toEqual(['display off', 'display on', 'reboot']);
  });
});
