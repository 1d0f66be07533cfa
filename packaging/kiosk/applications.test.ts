// Applications on a kiosk: each release plays from its package on a local origin of its own, with
// launch tickets minted by the agent, and its key/value reads and writes keep working offline.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLACEMENT_CAPABILITY_HEADER } from '../../sdk/contract/kv';
import type { RuntimeApplicationPlacement, RuntimeManifest } from '../../sdk/contract/manifest';
import { appPage, createPlaylist, patchScreen, publishApp } from '../../server/runtime/runtime.fixtures';
import { randomKey, TestServer } from '../../server/testing/harness';
import type { KioskAgent } from './agent';
import { Renderer, startAgent, tempDataDir, until } from './agent.fixtures';

let server: TestServer;
let token: string;
const agents: KioskAgent[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  token = (await server.enroll()).token;
});
afterAll(async () => {
  for (const agent of agents) await agent.stop().catch(() => undefined);
  await server.stop();
});

/** GET on a release's local origin (Node's fetch cannot send another Host). */
function releaseGet(
  agent: KioskAgent,
  origin: string,
  pathname: string,
  cookie?: string,
  extra: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: agent.listeningPort,
        path: pathname,
        method: extra.method ?? 'GET',
        headers: { host: new URL(origin).host, ...(cookie ? { cookie } : {}), ...extra.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function kioskShowingApp(dataDir = tempDataDir()) {
  const agent = await startAgent(server.origin, dataDir);
  agents.push(agent);
  const renderer = new Renderer(agent);
  const { screen } = await renderer.pair(server.origin, token);
  const app = await publishApp(server, token, 'kiosk app');
  const playlistId = await createPlaylist(server, token, { name: 'App', pages: [appPage('board', app.releaseId)] });
  await patchScreen(server, token, screen.id, { playlist_id: playlistId });
  await until(() => agent.book.active()?.manifest.pages.length === 1 && agent.trees.has(app.releaseId));
  const manifest = (await (await renderer.fetch('/runtime/v1/manifest')).json()) as RuntimeManifest;
  const placement = manifest.pages[0]!.placements[0] as RuntimeApplicationPlacement;
  return { agent, renderer, app, placement, dataDir };
}

describe('applications on a kiosk', () => {
  it('launch on a local origin per release with a single-use ticket, then a grant cookie', async () => {
    const { agent, renderer, app, placement } = await kioskShowingApp();
    const origin = placement.content.origin;
    expect(origin).toMatch(/^http:\/\/[a-f0-9]{40}\.release\.localhost:\d+$/);
    expect(origin).toBe(agent.releaseOrigin(app.releaseId));
    expect(placement.content.package.url.startsWith('/content/v1/')).toBe(true);

    const launch = await renderer.post(placement.content.launchUrl);
    expect(launch.status).toBe(201);
    const { launch_url } = (await launch.json()) as { launch_url: string };
    const url = new URL(launch_url);
    expect(url.origin).toBe(origin);
    const entered = await releaseGet(agent, origin, `${url.pathname}${url.search}`);
    expect(entered.status).toBe(302);
    const grant = String(entered.headers['set-cookie']).split(';')[0]!;
    expect(grant).toMatch(/^__Host-marquee-release=/);
    // A ticket is single use; the cookie opens the release's files and names the player origin.
    expect((await releaseGet(agent, origin, `${url.pathname}${url.search}`)).status).toBe(403);
    const index = await releaseGet(agent, origin, '/', grant);
    expect(index.status).toBe(200);
    expect(index.text).toContain('kiosk app');
    expect(JSON.parse((await releaseGet(agent, origin, '/.marquee/player-origin', grant)).text)).toEqual({
      player_origin: agent.origin,
    });
    expect((await releaseGet(agent, origin, '/', undefined)).status).toBe(403);
    expect((await releaseGet(agent, origin, '/../agent.db', grant)).status).toBe(404);
    // Another release's host does not take this grant.
    const other = `http://${'0'.repeat(40)}.release.localhost:${agent.listeningPort}`;
    expect((await releaseGet(agent, other, '/', grant)).status).toBe(403);

    // One byte range of a file, as the server's release hosts answer (an application's video seeks).
    const whole = Buffer.byteLength(index.text);
    expect(index.headers['content-length']).toBe(String(whole));
    const part = await releaseGet(agent, origin, '/', grant, { headers: { range: 'bytes=2-9' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 2-9/${whole}`);
    expect(part.text).toBe(index.text.slice(2, 10));
    const head = await releaseGet(agent, origin, '/', grant, { method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.text]).toEqual([200, String(whole), '']);
    const beyond = await releaseGet(agent, origin, '/', grant, { headers: { range: `bytes=${whole}-` } });
    expect([beyond.status, beyond.headers['content-range']]).toEqual([416, `bytes */${whole}`]);
    // An If-Range names a version these files do not carry: the whole file.
    const ifRange = await releaseGet(agent, origin, '/', grant, { headers: { range: 'bytes=2-9', 'if-range': '"x"' } });
    expect([ifRange.status, ifRange.text]).toEqual([200, index.text]);
  });

  it('unpacks a release again from its package when a power cut left a file of its tree short, offline too', async () => {
    const { agent, app, dataDir } = await kioskShowingApp();
    const index = path.join(agent.trees.treeDir(app.releaseId), 'index.html');
    await agent.stop();
    // What a power cut after the tree got its name leaves when its files had not reached the disk.
    fs.truncateSync(index, 0);

    const offline = await startAgent('http://127.0.0.1:9', dataDir);
    agents.push(offline);
    const r = new Renderer(offline);
    const manifest = (await (await r.fetch('/runtime/v1/manifest')).json()) as RuntimeManifest;
    const local = manifest.pages[0]!.placements[0] as RuntimeApplicationPlacement;
    // The tree is unpacked again under another name and renamed into place: between the two it is gone.
    await until(() => (fs.statSync(index, { throwIfNoEntry: false })?.size ?? 0) > 0);
    const launch = await r.post(local.content.launchUrl);
    const url = new URL(((await launch.json()) as { launch_url: string }).launch_url);
    const entered = await releaseGet(offline, local.content.origin, `${url.pathname}${url.search}`);
    const grant = String(entered.headers['set-cookie']).split(';')[0]!;
    expect((await releaseGet(offline, local.content.origin, '/', grant)).text).toContain('kiosk app');
  });

  it('plays offline from its package, with key/value reads from the mirror and writes queued', async () => {
    const { agent, renderer, app, placement, dataDir } = await kioskShowingApp();
    const kvPath = (key?: string) => `/runtime/v1/apps/${app.applicationId}/kv${key ? `/${key}` : ''}`;
    const headers = (extra: Record<string, string> = {}) => ({
      [PLACEMENT_CAPABILITY_HEADER]: placement.capabilityHandle,
      'content-type': 'application/json',
      ...extra,
    });
    const value = (s: string) =>
      JSON.stringify({ value_base64: Buffer.from(s).toString('base64'), content_type: 'text/plain' });
    // Online: the write goes upstream; the read is remembered.
    const created = await renderer.fetch(kvPath('visits'), {
      method: 'PUT',
      headers: headers({ 'idempotency-key': randomKey() }),
      body: value('1'),
    });
    expect(created.status, await created.clone().text()).toBe(200);
    expect(((await created.json()) as { revision: number }).revision).toBe(1);
    expect((await renderer.fetch(kvPath('visits'), { headers: headers() })).status).toBe(200);
    await agent.stop();

    // Offline: same data dir, no upstream.
    const offline = await startAgent('http://127.0.0.1:9', dataDir);
    agents.push(offline);
    const r = new Renderer(offline);
    const manifest = (await (await r.fetch('/runtime/v1/manifest')).json()) as RuntimeManifest;
    const local = manifest.pages[0]!.placements[0] as RuntimeApplicationPlacement;
    const h = (extra: Record<string, string> = {}) => ({
      [PLACEMENT_CAPABILITY_HEADER]: local.capabilityHandle,
      'content-type': 'application/json',
      ...extra,
    });
    const read = await r.fetch(kvPath('visits'), { headers: h() });
    expect(read.status).toBe(200);
    expect(Buffer.from(((await read.json()) as { value_base64: string }).value_base64, 'base64').toString()).toBe('1');
    const updated = await r.fetch(kvPath('visits'), {
      method: 'PUT',
      headers: h({ 'idempotency-key': randomKey(), 'if-match': '"1"' }),
      body: value('2'),
    });
    expect(updated.status).toBe(200);
    expect(((await updated.json()) as { revision: number }).revision).toBe(2);
    const stale = await r.fetch(kvPath('visits'), {
      method: 'PUT',
      headers: h({ 'idempotency-key': randomKey(), 'if-match': '"1"' }),
      body: value('3'),
    });
    expect(stale.status).toBe(412);
    expect(await stale.json()).toMatchObject({ code: 'revision_conflict', current_revision: 2 });
    expect(offline.kv.pending()).toBe(1);
    // The release still launches and serves its files from the mirror.
    const launch = await r.post(local.content.launchUrl);
    const url = new URL(((await launch.json()) as { launch_url: string }).launch_url);
    const entered = await releaseGet(offline, local.content.origin, `${url.pathname}${url.search}`);
    const grant = String(entered.headers['set-cookie']).split(';')[0]!;
    expect((await releaseGet(offline, local.content.origin, '/', grant)).text).toContain('kiosk app');
    // Without a capability of this application nothing is answered.
    expect((await r.fetch(kvPath('visits'))).status).toBe(403);
    await offline.stop();

    // Back online: the queued write reaches upstream.
    const online = await startAgent(server.origin, dataDir);
    agents.push(online);
    await until(() => online.kv.pending() === 0);
    // Read back through the kiosk while online: the answer comes from upstream.
    const fresh = new Renderer(online);
    const m = (await (await fresh.fetch('/runtime/v1/manifest')).json()) as RuntimeManifest;
    const p = m.pages[0]!.placements[0] as RuntimeApplicationPlacement;
    const back = await fresh.fetch(kvPath('visits'), {
      headers: { [PLACEMENT_CAPABILITY_HEADER]: p.capabilityHandle },
    });
    expect(back.status).toBe(200);
    const entry = (await back.json()) as { revision: number; value_base64: string };
    expect([entry.revision, Buffer.from(entry.value_base64, 'base64').toString()]).toEqual([2, '2']);
  });
});
