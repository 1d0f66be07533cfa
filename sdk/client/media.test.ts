// The client's media routes and upload helper against a real Marquee server (with a stand-in
// image vendor on 127.0.0.1 for generation).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import { recordingFetch, testClient } from '../testing/client-fixture';
import {
  type MarqueeProblem,
  OperationFailedError,
  parseContentRange,
  rangeHeader,
  type UploadProgress,
} from './marquee-client';
import { mediaFile, uploadMediaFile } from './node-files';

let server: TestServer;
let vendor: http.Server;
let baseUrl: string;
let png: Buffer;

beforeAll(async () => {
  png = await sharp({ create: { width: 96, height: 54, channels: 3, background: '#2a7ab0' } })
    .png()
    .toBuffer();
  vendor = http.createServer(async (req, res) => {
    for await (const _ of req);
    const image = await sharp({ create: { width: 1536, height: 1024, channels: 3, background: '#c04020' } })
      .png()
      .toBuffer();
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ created: 1, data: [{ b64_json: image.toString('base64') }] }));
  });
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
  const vendorUrl = `http://127.0.0.1:${(vendor.address() as { port: number }).port}/v1`;
  server = await TestServer.start({
    config: { imageVendorUrl: vendorUrl, imageVendorKey: 'sk-test', imageVendorModel: 'image-model-x' },
  });
  baseUrl = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => vendor?.close(resolve));
});

async function project(options: Parameters<typeof testClient>[1] = {}) {
  const { token } = await server.enroll();
  return Object.assign(testClient(baseUrl, { token, ...options }), { token });
}

const sha256 = (bytes: Uint8Array) => crypto.createHash('sha256').update(bytes).digest('hex');

describe('media.upload', () => {
  it('declares, PUTs exactly the issued method and headers without the bearer, commits, waits, and answers the ready media', async () => {
    const { calls, fetchImpl } = recordingFetch();
    const c = await project({ fetch: fetchImpl });
    const progress: UploadProgress[] = [];
    const uploaded = await c.media.upload(png, {
      filename: 'lobby.png',
      tag: 'lobby',
      onProgress: (p) => progress.push(p),
    });

    expect(uploaded.data).toMatchObject({
      filename: 'lobby.png',
      content_type: 'image/png',
      bytes: png.length,
      sha256: sha256(png),
      tag: 'lobby',
      width: 96,
      height: 54,
      state: 'ready',
    });
    expect(uploaded.operation).toMatchObject({
      kind: 'media.upload',
      state: 'succeeded',
      result: { media_id: uploaded.data.id },
    });
    expect(uploaded.revision).toBe(uploaded.data.revision);
    expect(uploaded.credits?.remaining).toBeTypeOf('number');

    const declaration = calls.find((call) => call.url.endsWith('/api/v1/media/uploads'))!;
    const put = calls.find((call) => call.method === 'PUT')!;
    const commit = calls.find((call) => call.url.endsWith('/commit'))!;
    expect(put.url).toMatch(/\/private-storage\//);
    // Exactly the session's headers: no bearer, no request id, no idempotency key of ours.
    expect(Object.keys(put.headers).sort()).toEqual(['content-length', 'content-type']);
    expect(put.headers).toEqual({ 'content-length': String(png.length), 'content-type': 'image/png' });
    expect(commit.headers['idempotency-key']).not.toBe(declaration.headers['idempotency-key']);

    expect(progress.filter((p) => p.stage === 'upload').at(-1)).toEqual({
      stage: 'upload',
      sent: png.length,
      total: png.length,
    });
    expect(progress.at(-1)).toMatchObject({ stage: 'processing', operation: { state: 'succeeded' } });
  });

  it('takes a Blob, with the content type from the Blob', async () => {
    const c = await project();
    const uploaded = await c.media.upload(new Blob([new Uint8Array(png)], { type: 'image/png' }), {
      filename: 'no-extension',
    });
    expect(uploaded.data).toMatchObject({ filename: 'no-extension', content_type: 'image/png' });
  });

  it('streams a file by path without reading it whole (node-files)', async () => {
    const c = await project();
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-client-')), 'foyer.png');
    fs.writeFileSync(file, png);
    const source = await mediaFile(file);
    expect(source).toMatchObject({ bytes: png.length, sha256: sha256(png), filename: 'foyer.png' });
    const uploaded = await uploadMediaFile(c, file, { sourceFilename: 'Foyer Photo.PNG' });
    expect(uploaded.data).toMatchObject({
      filename: 'Foyer Photo.png',
      source_filename: 'Foyer Photo.PNG',
      sha256: sha256(png),
    });
    fs.rmSync(path.dirname(file), { recursive: true });
  });

  it('goes on to commit when the PUT arrived but its answer was lost', async () => {
    const { calls, fetchImpl } = recordingFetch([{ when: (call) => call.method === 'PUT', steps: ['network-after'] }]);
    const c = await project({ fetch: fetchImpl });
    const uploaded = await c.media.upload(png, { filename: 'lost.png' });
    expect(uploaded.data.state).toBe('ready');
    expect(calls.filter((call) => call.method === 'PUT')).toHaveLength(2); // the second was refused as used
  });

  it('turns a failed verification into OperationFailedError naming the field', async () => {
    const c = await project();
    // Declared as JPEG: the PUT matches the declaration, the verification of the bytes does not.
    const error = (await c.media
      .upload(png, { filename: 'wrong.png', contentType: 'image/jpeg' })
      .catch((e: unknown) => e)) as OperationFailedError;
    expect(error).toBeInstanceOf(OperationFailedError);
    expect(error.problem.code).toBe('invalid_request');
    expect(error.problem.errors[0]?.field).toBe('content_type');
  });

  it('cancels the upload, giving its reserved bytes back, when the PUT is refused', async () => {
    const c = await project({
      fetch: recordingFetch([{ when: (call) => call.method === 'PUT', steps: [{ status: 403, code: 'forbidden' }] }])
        .fetchImpl,
    });
    const problem = (await c.media.upload(png, { filename: 'refused.png' }).catch((e: unknown) => e)) as MarqueeProblem;
    expect([problem.code, problem.status]).toEqual(['forbidden', 403]);
    expect((await c.project.get()).data.reserved_bytes).toBe(0);
    const failed = (await c.events.list()).data.items.find((e) => e.type === 'media.upload_failed');
    expect(failed?.details).toMatchObject({ state: 'cancelled' });
  });

  it('needs a name and a known type', async () => {
    const c = await project();
    await expect(c.media.upload(png)).rejects.toThrow(/filename/);
    await expect(c.media.upload(png, { filename: 'notes.txt' })).rejects.toThrow(/content type/);
  });
});

describe('media routes', () => {
  it('lists with filters and paging, reads, tags with If-Match from the resource, and deletes', async () => {
    const c = await project();
    const a = await c.media.upload(png, { filename: 'a.png', tag: 'lobby' });
    server.clock.advance(1000); // newest first: b must be created later
    const b = await c.media.upload(png, { filename: 'b.png' });
    const page = await c.media.list({ limit: 1 });
    expect(page.data.items.map((m) => m.id)).toEqual([b.data.id]);
    const next = await c.media.list({ limit: 1, cursor: page.data.next_cursor! });
    expect(next.data.items.map((m) => m.id)).toEqual([a.data.id]);
    expect((await c.media.list({ tag: 'lobby' })).data.items.map((m) => m.id)).toEqual([a.data.id]);

    const read = await c.media.get(b.data.id);
    const tagged = await c.media.update(b.data.id, { tag: 'foyer' }, { ifMatch: read.data });
    expect(tagged.data.tag).toBe('foyer');
    expect(tagged.revision).toBe(read.revision! + 1);
    const stale = (await c.media
      .update(b.data.id, { tag: null }, { ifMatch: read })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect([stale.code, stale.current_revision]).toEqual(['revision_conflict', tagged.revision]);

    expect((await c.media.delete(b.data.id, { ifMatch: tagged })).status).toBe(204);
    expect(((await c.media.get(b.data.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe('not_found');
  });

  it("answers not_found for another project's media", async () => {
    const c = await project();
    const other = await project();
    const { data } = await c.media.upload(png, { filename: 'mine.png' });
    expect(((await other.media.get(data.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe('not_found');
    expect(((await other.media.contentBytes(data.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe(
      'not_found',
    );
  });
});

describe('media content export', () => {
  it('exports the whole object, one range with the parsed Content-Range, a suffix, and nothing when unchanged', async () => {
    const c = await project();
    const { data: media } = await c.media.upload(png, { filename: 'export.png' });

    const whole = await c.media.contentBytes(media.id);
    expect(whole.status).toBe(200);
    expect(Buffer.from(whole.data).equals(png)).toBe(true);
    expect(whole).toMatchObject({
      size: png.length,
      contentLength: png.length,
      contentType: 'image/png',
      etag: `"${sha256(png)}"`,
      filename: `${media.id}.png`,
      range: undefined,
    });

    const part = await c.media.contentBytes(media.id, { range: { start: 10, end: 29 } });
    expect(part.status).toBe(206);
    expect(part.range).toEqual({ start: 10, end: 29, size: png.length });
    expect(part.size).toBe(png.length);
    expect(Buffer.from(part.data).equals(png.subarray(10, 30))).toBe(true);

    const tail = await c.media.contentBytes(media.id, { range: { suffix: 8 } });
    expect(Buffer.from(tail.data).equals(png.subarray(png.length - 8))).toBe(true);
    expect(tail.range).toEqual({ start: png.length - 8, end: png.length - 1, size: png.length });

    const stream = await c.media.content(media.id, { range: { start: 0 } });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream.body!) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(png)).toBe(true);

    const unchanged = await c.media.content(media.id, { ifNoneMatch: whole.etag });
    expect([unchanged.status, unchanged.notModified, unchanged.body]).toEqual([304, true, null]);

    const head = await c.media.contentInfo(media.id);
    expect([head.status, head.body, head.size, head.etag]).toEqual([200, null, png.length, whole.etag]);
  });

  it('throws invalid_range for a range past the end', async () => {
    const c = await project();
    const { data: media } = await c.media.upload(png, { filename: 'short.png' });
    const error = (await c.media
      .content(media.id, { range: { start: png.length + 5 } })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect([error.code, error.status]).toEqual(['invalid_range', 416]);
  });

  it('writes and parses range headers', () => {
    expect(rangeHeader({ start: 0, end: 99 })).toBe('bytes=0-99');
    expect(rangeHeader({ start: 5 })).toBe('bytes=5-');
    expect(rangeHeader({ suffix: 10 })).toBe('bytes=-10');
    expect(() => rangeHeader({ start: 9, end: 3 })).toThrow(RangeError);
    expect(() => rangeHeader({ start: -1 })).toThrow(RangeError);
    expect(parseContentRange('bytes 0-9/100')).toEqual({ start: 0, end: 9, size: 100 });
    expect(parseContentRange('bytes */100')).toBeUndefined();
  });
});

describe('media.generate', () => {
  it('answers the ready generated media with its usage and credits', async () => {
    const c = await project();
    const generated = await c.media.generate({ prompt: 'A calm harbour at dawn', aspect_ratio: '16:9', tag: 'lobby' });
    expect(generated.status).toBe(201);
    expect(generated.data).toMatchObject({
      content_type: 'image/webp',
      width: 1920,
      height: 1080,
      tag: 'lobby',
      usage: { quality: 'medium', credits: expect.any(Number) },
    });
    expect(generated.revision).toBe(generated.data.revision);
    expect(generated.credits?.remaining).toBeTypeOf('number');
    expect(generated.idempotencyKey).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
