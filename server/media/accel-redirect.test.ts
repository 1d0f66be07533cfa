// MARQUEE_ACCEL_REDIRECT behind a real nginx (Debian's, unprivileged, on loopback) configured as
// docs/operations.md shows: nginx sends the bytes, under Marquee's headers, with ranges.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { freePort, TestServer } from '../testing/harness';
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
import { MEDIA_EXPORT_EGRESS } from './egress';
import { sha256, uploadReady, video } from './media.fixtures';

let server: TestServer;
let nginx: { stop(): Promise<void> } | undefined;
let nginxPort = 0;
let root = '';
let token = '';
let projectId = '';
let bytes: Buffer;
let media: { id: string };

beforeAll(async () => {
  if (!hasNginx) return;
  server = await TestServer.start({
    clock: new TestClock('2026-11-21T12:00:00Z'),
    config: { accelRedirect: ACCEL_PREFIX, trustedProxies: [ACCEL_PROXY_ADDRESS] },
  });
  ({ token, projectId } = await server.enroll());
  bytes = await video('mp4', { seconds: 2 });
  media = await uploadReady(server, token, bytes, 'video/mp4');
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-nginx-'));
  nginxPort = await freePort();
  nginx = await startNginx(root, accelProxyConfig(root, nginxPort, server.port, server.dataDir), nginxPort);
});
afterAll(async () => {
  await nginx?.stop();
  await server?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function get(port: number, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return rawGet(port, `/api/v1/media/${media.id}/content`, {
    host: server.host,
    authorization: `Bearer ${token}`,
    ...headers,
  });
}

async function egressBytes(): Promise<number> {
  await new Promise((r) => setTimeout(r, 30));
  await server.services.egressLedger.flush();
  const row = await server.services.store.db
    .selectFrom('egress_ledger')
    .select('bytes')
    .where('tenant_id', '=', projectId)
    .where('kind', '=', MEDIA_EXPORT_EGRESS)
    .where('day', '=', utcDay(server.clock.now()))
    .executeTakeFirst();
  return row?.bytes ?? 0;
}

describe.skipIf(!hasNginx)('media export offloaded to nginx (X-Accel-Redirect)', () => {
  it('sends the whole object under Marquee’s headers, with no trace of the storage key', async () => {
    const before = await egressBytes();
    const res = await get(nginxPort);
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-length': String(bytes.length),
      'content-type': 'video/mp4',
      'content-disposition': `attachment; filename="${media.id}.mp4"`,
      etag: `"${sha256(bytes)}"`,
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
      'accept-ranges': 'bytes',
    });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    // nginx sent the file (Last-Modified is its own; Marquee never sends one).
    expect(res.headers['last-modified']).toBeDefined();
    expect(res.headers['x-accel-redirect']).toBeUndefined();
    expect(JSON.stringify(res.headers)).not.toContain('media/');
    expect((await egressBytes()) - before).toBe(bytes.length);
  });

  it('serves one range as 206, and Marquee still refuses a bad one with its problem', async () => {
    const res = await get(nginxPort, { range: 'bytes=100-599' });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes 100-599/${bytes.length}`);
    expect(res.body.equals(bytes.subarray(100, 600))).toBe(true);
    expect(res.headers.etag).toBe(`"${sha256(bytes)}"`);
    expect(res.headers['last-modified']).toBeDefined();

    const suffix = await get(nginxPort, { range: 'bytes=-10' });
    expect(suffix.status).toBe(206);
    expect(suffix.body.equals(bytes.subarray(bytes.length - 10))).toBe(true);

    const refused = await get(nginxPort, { range: 'bytes=0-1,5-6' });
    expect(refused.status).toBe(416);
    expect(refused.headers['content-type']).toContain('application/problem+json');
  });

  it('answers conditionals itself: If-None-Match 304, and If-Range by its own entity tag', async () => {
    const etag = `"${sha256(bytes)}"`;
    expect((await get(nginxPort, { 'if-none-match': etag })).status).toBe(304);
    const matching = await get(nginxPort, { range: 'bytes=0-9', 'if-range': etag });
    expect(matching.status).toBe(206);
    expect(matching.body.equals(bytes.subarray(0, 10))).toBe(true);
    const stale = await get(nginxPort, { range: 'bytes=0-9', 'if-range': '"other"' });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(bytes)).toBe(true);
    expect(stale.headers['last-modified']).toBeUndefined(); // Marquee sent it
    // nginx does not answer If-Modified-Since from the file's time: Marquee's ETag is the validator.
    const since = await get(nginxPort, { 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() });
    expect(since.status).toBe(200);
  });

  it('sends the bytes itself, never the header, to a client that is not the trusted proxy', async () => {
    const res = await get(server.port, { range: 'bytes=0-99' });
    expect(res.status).toBe(206);
    expect(res.headers['x-accel-redirect']).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
    expect(res.body.equals(bytes.subarray(0, 100))).toBe(true);
  });
});
