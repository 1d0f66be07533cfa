// MARQUEE_ACCEL_REDIRECT on the player's route: /content/v1 behind a real nginx (Debian's, loopback,
// temp prefix) with the offload location of docs/operations.md. Marquee checks the session, grant,
// Fetch Metadata, budgets and range; nginx sends the bytes under Marquee's headers.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageDoc } from '../playlists/content.fixtures';
import { freePort } from '../testing/harness';
import {
  ACCEL_PREFIX,
  ACCEL_PROXY_ADDRESS,
  accelProxyConfig,
  hasNginx,
  type RawAnswer,
  rawGet,
  startNginx,
} from '../testing/nginx';
import { utcDay } from '../tenants/credits';
import { RUNTIME_MEDIA_EGRESS } from './content.routes';
import { createPlaylist, patchScreen, sha256, storedMedia, useEnrolledServer, validManifest } from './runtime.fixtures';

const BYTES = crypto.randomBytes(300_000);
const PLAYER_IMAGE = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' };

const env = useEnrolledServer({ config: { accelRedirect: ACCEL_PREFIX, trustedProxies: [ACCEL_PROXY_ADDRESS] } });
let nginx: { stop(): Promise<void> } | undefined;
let nginxPort = 0;
let root = '';
let mediaPath = '';
let cookie = '';

beforeAll(async () => {
  if (!hasNginx) return;
  const server = env.server;
  const p = await env.player();
  const mediaId = await storedMedia(server, env.tenantId, BYTES);
  await patchScreen(server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(server, env.token, imageDoc(mediaId)),
  });
  const { manifest } = await validManifest(server, p);
  mediaPath = `/content/v1/manifests/${manifest.manifestRevision}/media/${mediaId}`;
  cookie = p.cookies.header(server.host)!;

  root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-nginx-content-'));
  nginxPort = await freePort();
  nginx = await startNginx(root, accelProxyConfig(root, nginxPort, server.port, server.dataDir), nginxPort);
});
afterAll(async () => {
  await nginx?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function get(port: number, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return rawGet(port, mediaPath, { host: env.server.host, cookie, ...PLAYER_IMAGE, ...headers });
}

async function egressBytes(): Promise<number> {
  await new Promise((r) => setTimeout(r, 30));
  await env.server.services.egressLedger.flush();
  const row = await env.server.services.store.db
    .selectFrom('egress_ledger')
    .select('bytes')
    .where('tenant_id', '=', env.tenantId)
    .where('kind', '=', RUNTIME_MEDIA_EGRESS)
    .where('day', '=', utcDay(env.server.clock.now()))
    .executeTakeFirst();
  return row?.bytes ?? 0;
}

describe.skipIf(!hasNginx)('/content/v1 offloaded to nginx (X-Accel-Redirect)', () => {
  it('sends the whole media under the player route’s headers, with no trace of the storage key', async () => {
    const before = await egressBytes();
    const res = await get(nginxPort);
    expect(res.status).toBe(200);
    expect(res.body.equals(BYTES)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-length': String(BYTES.length),
      etag: `"${sha256(BYTES)}"`,
      'cache-control': 'private, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      'cross-origin-resource-policy': 'same-origin',
      'referrer-policy': 'no-referrer',
      vary: 'Cookie',
      'accept-ranges': 'bytes',
    });
    expect(res.headers['content-disposition']).toMatch(/^inline; filename="med_/);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    // nginx sent the file (Last-Modified is its own; Marquee never sends one).
    expect(res.headers['last-modified']).toBeDefined();
    expect(res.headers['x-accel-redirect']).toBeUndefined();
    expect(JSON.stringify(res.headers)).not.toContain('media/');
    expect((await egressBytes()) - before).toBe(BYTES.length);
  });

  it('serves one range as 206; Marquee still answers 304, bad ranges and refused sessions itself', async () => {
    const res = await get(nginxPort, { range: 'bytes=1000-66535' });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes 1000-66535/${BYTES.length}`);
    expect(res.body.equals(BYTES.subarray(1000, 66536))).toBe(true);
    expect(res.headers['last-modified']).toBeDefined();

    expect((await get(nginxPort, { 'if-none-match': `"${sha256(BYTES)}"` })).status).toBe(304);
    const refused = await get(nginxPort, { range: 'bytes=0-1,5-6' });
    expect(refused.status).toBe(416);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    const navigated = await get(nginxPort, { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' });
    expect(navigated.status).toBe(403);
    expect((await get(nginxPort, { cookie: '' })).status).toBe(401);
  });

  it('sends the bytes itself, never the header, to a client that is not the trusted proxy', async () => {
    const res = await get(env.server.port, { range: 'bytes=0-99' });
    expect(res.status).toBe(206);
    expect(res.headers['x-accel-redirect']).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
    expect(res.body.equals(BYTES.subarray(0, 100))).toBe(true);
  });
});
