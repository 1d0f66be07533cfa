// Media on an S3 bucket, end to end through the server's routes: the server is configured with
// MARQUEE_BLOB_URL and the standard AWS credential variables, exactly as an operator would, against
// a real S3-protocol server started here (s3rver, D-350).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClient } from '../../sdk/testing/client-fixture';
import { S3BlobStore } from '../blobs/s3-blob-store';
import type { Config } from '../config';
import { imageDoc } from '../playlists/content.fixtures';
import { createPlaylist, patchScreen, useEnrolledServer, validManifest } from '../runtime/runtime.fixtures';
import { credentialsInEnvironment, startS3Server, type TestS3Server } from '../testing/s3-server';
import { commit, declare, image, sha256 } from './media.fixtures';
import { UPLOAD_URL_TTL_MS } from './media-uploads';

let s3: TestS3Server;
let restoreEnvironment: () => void;
const config: { -readonly [K in keyof Config]?: Config[K] } = {};
// Registered before the server's own beforeAll: the bucket must exist when the server is built.
beforeAll(async () => {
  s3 = await startS3Server();
  config.blobUrl = s3.blobUrl('marquee');
  restoreEnvironment = credentialsInEnvironment();
});
const env = useEnrolledServer({ config });
let bucketStopped = false;
afterAll(async () => {
  if (!bucketStopped) await s3.stop();
  restoreEnvironment();
});

const blobs = () => env.server.services.blobs as S3BlobStore;

/** Sends the PUT exactly as the session says, straight to the bucket. */
async function putToBucket(
  session: { upload_url: string; method: string; headers: Record<string, string> },
  body: Buffer,
) {
  const { 'Content-Length': _length, ...headers } = session.headers; // fetch sets it from the body
  return fetch(session.upload_url, { method: session.method, headers, body: new Uint8Array(body) });
}

async function waitFor(operationId: string) {
  await env.server.services.operations.idle();
  return (await env.server.request('GET', `/api/v1/operations/${operationId}`, { token: env.token })).json();
}

describe('media on S3', () => {
  let bytes: Buffer;
  let mediaId: string;

  beforeAll(async () => {
    bytes = await image('png', 640, 480);
  });

  it('composes an S3 store from MARQUEE_BLOB_URL, and reports it ready', async () => {
    expect(blobs()).toBeInstanceOf(S3BlobStore);
    expect(blobs().location.prefix).toBe('marquee');
    const ready = await env.server.request('GET', '/.ready');
    expect(ready.status, ready.text).toBe(200);
    const missing = new S3BlobStore({ ...blobs().location, bucket: 'no-such-bucket' });
    expect(await missing.writable()).toBe(false);
  });

  it('hands out a presigned PUT to the bucket, binding type, length and no-replace', async () => {
    const { session } = await declare(env.server, env.token, bytes, 'image/png');
    const url = new URL(session.upload_url);
    expect(url.origin).toBe(s3.endpoint);
    expect(url.pathname).toMatch(/^\/marquee-test-[^/]+\/marquee\/media\/med_/);
    expect(session.headers).toEqual({
      'Content-Type': 'image/png',
      'Content-Length': String(bytes.length),
      'If-None-Match': '*',
    });
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host;if-none-match');
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(UPLOAD_URL_TTL_MS / 1000));
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^S3RVER\//);
    // Nothing a browser's PUT could not match: no checksum of an empty body baked in.
    expect([...url.searchParams.keys()].filter((k) => /checksum/i.test(k))).toEqual([]);
    // The control plane does not receive this upload.
    const local = await env.server.request('PUT', `/private-storage/media/x${url.search}`, { body: bytes });
    expect(local.status).toBe(404);
  });

  it('uploads straight to the bucket, verifies from it, and exports with ranges', async () => {
    const declared = await declare(env.server, env.token, bytes, 'image/png');
    const early = await commit(env.server, env.token, declared);
    expect(early.status).toBe(409);
    const put = await putToBucket(declared.session, bytes);
    expect(put.status, await put.text()).toBe(200);
    const committed = await commit(env.server, env.token, declared);
    expect(committed.status, committed.text).toBe(202);
    const op = await waitFor(declared.session.operation.id);
    expect(op.state, JSON.stringify(op)).toBe('succeeded');
    mediaId = op.result.media_id;
    const media = (await env.server.request('GET', `/api/v1/media/${mediaId}`, { token: env.token })).json();
    expect(media).toMatchObject({ state: 'ready', width: 640, height: 480, bytes: bytes.length });
    expect(await blobs().stat(`media/${mediaId}`)).toEqual({ bytes: bytes.length });

    const whole = await env.server.request('GET', `/api/v1/media/${mediaId}/content`, { token: env.token });
    expect(whole.status).toBe(200);
    expect(whole.headers.etag).toBe(`"${sha256(bytes)}"`);
    expect(whole.body.equals(bytes)).toBe(true);
    for (const [range, start, end] of [
      ['bytes=0-0', 0, 0],
      ['bytes=100-4195', 100, 4195],
      ['bytes=-10', bytes.length - 10, bytes.length - 1],
    ] as const) {
      const part = await env.server.request('GET', `/api/v1/media/${mediaId}/content`, {
        token: env.token,
        headers: { range },
      });
      expect(part.status, range).toBe(206);
      expect(part.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
      expect(part.body.equals(bytes.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it("uploads through the SDK's media.upload, which sends the session's headers to the bucket", async () => {
    const client = testClient(env.server.origin, { token: env.token });
    const gif = await image('gif', 32, 24);
    const uploaded = await client.media.upload(new Uint8Array(gif), { filename: 'small.gif' });
    expect(uploaded.data).toMatchObject({ state: 'ready', content_type: 'image/gif', width: 32, height: 24 });
    expect(await blobs().stat(`media/${uploaded.data.id}`)).toEqual({ bytes: gif.length });
  });

  it('fails verification when the bucket holds other bytes than declared', async () => {
    const declared = await declare(env.server, env.token, bytes, 'image/png');
    const forged = Buffer.from(bytes);
    forged[forged.length - 20] ^= 0xff;
    expect((await putToBucket(declared.session, forged)).status).toBe(200);
    expect((await commit(env.server, env.token, declared)).status).toBe(202);
    const op = await waitFor(declared.session.operation.id);
    expect(op.state).toBe('failed');
    // The rejected bytes do not stay in the bucket.
    const { object_key } = await env.server.services.store.db
      .selectFrom('media_uploads')
      .select('object_key')
      .where('id', '=', declared.session.id)
      .executeTakeFirstOrThrow();
    expect(declared.session.upload_url).toContain(`/marquee/${object_key}?`);
    await expect.poll(() => blobs().stat(object_key)).toBeUndefined();
  });

  it("streams the player's media from the bucket, whole and by range", async () => {
    const p = await env.player();
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(mediaId)),
    });
    const { manifest } = await validManifest(env.server, p);
    const path = `/content/v1/manifests/${manifest.manifestRevision}/media/${mediaId}`;
    const whole = await env.server.request('GET', path, { cookies: p.cookies });
    expect(whole.status).toBe(200);
    expect(whole.body.equals(bytes)).toBe(true);
    const part = await env.server.request('GET', path, { cookies: p.cookies, headers: { range: 'bytes=8-15' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 8-15/${bytes.length}`);
    expect(part.body.equals(bytes.subarray(8, 16))).toBe(true);
  });

  it('answers a problem, not a cut connection, when the bucket cannot give the bytes', async () => {
    const client = testClient(env.server.origin, { token: env.token });
    const gif = await image('gif', 40, 30);
    const { id } = (await client.media.upload(new Uint8Array(gif), { filename: 'gone.gif' })).data;
    const p = await env.player();
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(id)),
    });
    const { manifest } = await validManifest(env.server, p);
    await blobs().delete(`media/${id}`); // the object is lost from the bucket behind Marquee's back
    const exported = await env.server.request('GET', `/api/v1/media/${id}/content`, { token: env.token });
    const played = await env.server.request('GET', `/content/v1/manifests/${manifest.manifestRevision}/media/${id}`, {
      cookies: p.cookies,
      headers: { range: 'bytes=0-9' },
    });
    for (const answer of [exported, played]) {
      expect(answer.status, answer.text).toBe(500);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({ code: 'internal_error' });
      // The bucket's own words (its error, its key) stay in the log.
      expect(answer.text).not.toMatch(/NoSuchKey|marquee\/media/);
    }
  });

  it("lets the dashboard's pages PUT to the bucket: its origin is in their connect-src", async () => {
    const bucket = new URL((await declare(env.server, env.token, bytes, 'image/png')).session.upload_url).origin;
    const host = new URL(env.server.config.dashboardOrigin).host;
    for (const path of ['/', '/media', '/no-such-page']) {
      const page = await env.server.request('GET', path, { host, headers: { accept: 'text/html' } });
      expect([200, 404, 503], path).toContain(page.status);
      // Before `npm run build:web` a mistyped address is the API's 404 problem, not a page.
      if (page.status === 404 && page.headers['content-type']?.startsWith('application/problem+json')) continue;
      expect(page.headers['content-security-policy'], path).toContain(`connect-src 'self' ${bucket};`);
    }
  });

  // Last: it stops the bucket.
  it('answers dependency_unavailable with Retry-After 5 while the bucket is out of reach', async () => {
    const declared = await declare(env.server, env.token, bytes, 'image/png');
    expect((await putToBucket(declared.session, bytes)).status).toBe(200);
    const p = await env.player();
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(mediaId)),
    });
    const { manifest } = await validManifest(env.server, p);
    await s3.stop();
    bucketStopped = true;
    const committed = await commit(env.server, env.token, declared);
    const played = await env.server.request(
      'GET',
      `/content/v1/manifests/${manifest.manifestRevision}/media/${mediaId}`,
      {
        cookies: p.cookies,
        headers: { range: 'bytes=0-9' },
      },
    );
    for (const answer of [committed, played]) {
      expect(answer.status, answer.text).toBe(500);
      expect(answer.json()).toMatchObject({ code: 'dependency_unavailable' });
      expect(answer.headers['retry-after']).toBe('5');
      expect(answer.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    }
  });
});
