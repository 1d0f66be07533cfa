import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { utcDay } from '../tenants/credits';
import { TestServer } from '../testing/harness';
import { watchedWritesSettled } from '../testing/test-store';
import { MEDIA_EXPORT_EGRESS } from './egress';
import { cachedReadyMedia } from './ready-media-cache';
import { sha256, uploadReady, video } from './media.fixtures';

let server: TestServer;
let token: string;
let projectId: string;
let bytes: Buffer;
let media: { id: string };

beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z') });
});
afterAll(async () => server.stop());
beforeEach(async () => {
  ({ token, projectId } = await server.enroll());
  bytes = await video('mp4', { seconds: 2 });
  media = await uploadReady(server, token, bytes, 'video/mp4');
});

const content = () => `/api/v1/media/${media.id}/content`;

async function egress(): Promise<{ bytes: number; count: number } | undefined> {
  // Recorded once the response finished; give the after-response write a moment.
  await new Promise((r) => setTimeout(r, 30));
  await server.services.egressLedger.flush();
  return server.services.store.db
    .selectFrom('egress_ledger')
    .select(['bytes', 'count'])
    .where('tenant_id', '=', projectId)
    .where('kind', '=', MEDIA_EXPORT_EGRESS)
    .where('day', '=', utcDay(server.clock.now()))
    .executeTakeFirst();
}

describe('GET /api/v1/media/{id}/content', () => {
  it('exports the original bytes with the contract headers', async () => {
    const res = await server.request('GET', content(), { token });
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
    expect(res.headers).toMatchObject({
      'accept-ranges': 'bytes',
      'content-length': String(bytes.length),
      'content-type': 'video/mp4',
      'content-disposition': `attachment; filename="${media.id}.mp4"`,
      etag: `"${sha256(bytes)}"`,
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
    });
    expect(res.headers['content-range']).toBeUndefined();
  });

  it.each([
    ['bytes=0-9', 0, 9],
    ['bytes=100-', 100, -1],
    ['bytes=-16', -16, -1],
    ['bytes=-99999999', 0, -1],
    ['bytes=5-99999999', 5, -1],
  ])('serves one range %s with 206 and Content-Range', async (range, first, last) => {
    const start = first < 0 ? bytes.length + first : first;
    const end = last < 0 ? bytes.length - 1 : last;
    const res = await server.request('GET', content(), { token, headers: { range } });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
    expect(res.headers['content-length']).toBe(String(end - start + 1));
    expect(res.body.equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  it.each([['bytes=0-1,4-5'], ['bytes=999999-'], ['bytes=9-3'], ['bytes=-0'], ['items=0-1'], ['bytes=x-y']])(
    'refuses %s with 416 invalid_range, Content-Range and Accept-Ranges',
    async (range) => {
      const res = await server.request('GET', content(), { token, headers: { range } });
      expect(res.status).toBe(416);
      expect(res.json().code).toBe('invalid_range');
      expect(res.headers['content-range']).toBe(`bytes */${bytes.length}`);
      expect(res.headers['accept-ranges']).toBe('bytes');
    },
  );

  it('answers 304 with no body to If-None-Match of the strong SHA-256 ETag', async () => {
    const etag = `"${sha256(bytes)}"`;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const res = await server.request('GET', content(), {
        token,
        headers: { 'if-none-match': header, range: 'bytes=0-1' },
      });
      expect(res.status).toBe(304);
      expect(res.body.length).toBe(0);
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
    expect((await server.request('GET', content(), { token, headers: { 'if-none-match': '"other"' } })).status).toBe(
      200,
    );
  });

  it('ignores the range when If-Range names another representation', async () => {
    const res = await server.request('GET', content(), {
      token,
      headers: { range: 'bytes=0-9', 'if-range': '"stale"' },
    });
    expect(res.status).toBe(200);
    const same = await server.request('GET', content(), {
      token,
      headers: { range: 'bytes=0-9', 'if-range': `"${sha256(bytes)}"` },
    });
    expect(same.status).toBe(206);
  });

  it('answers HEAD with the same status and headers and no body', async () => {
    const whole = await server.request('HEAD', content(), { token });
    expect(whole.status).toBe(200);
    expect(whole.body.length).toBe(0);
    expect(whole.headers['content-length']).toBe(String(bytes.length));
    expect(whole.headers.etag).toBe(`"${sha256(bytes)}"`);
    const part = await server.request('HEAD', content(), { token, headers: { range: 'bytes=-4' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes ${bytes.length - 4}-${bytes.length - 1}/${bytes.length}`);
    expect((await server.request('HEAD', content(), { token, headers: { range: 'bytes=0-1,2-3' } })).status).toBe(416);
  });

  it('records completed response bytes as project_media_export egress; HEAD, 304 and 416 record nothing', async () => {
    await server.request('HEAD', content(), { token });
    await server.request('GET', content(), { token, headers: { 'if-none-match': `"${sha256(bytes)}"` } });
    await server.request('GET', content(), { token, headers: { range: 'bytes=0-1,2-3' } });
    expect(await egress()).toBeUndefined();
    await server.request('GET', content(), { token });
    await server.request('GET', content(), { token, headers: { range: 'bytes=0-9' } });
    expect(await egress()).toEqual({ bytes: bytes.length + 10, count: 2 });
  });

  it('records nothing for a transfer the client abandoned', async () => {
    // 40 MB: more than loopback socket buffers hold, so the response cannot finish by itself.
    const big = await uploadReady(
      server,
      token,
      await video('mp4', { seconds: 20, packetBytes: 200_000 }),
      'video/mp4',
    );
    await new Promise<void>((resolve) => {
      const req = server.rawRequest('GET', `/api/v1/media/${big.id}/content`, { token }, (res) => {
        res.destroy();
        resolve();
      });
      req.on('error', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(await egress()).toBeUndefined();
    expect(server.logText()).not.toContain('unexpected error');
  });

  it('charges the normal request credit', async () => {
    const before = Number(
      (await server.request('GET', '/api/v1/project', { token })).headers['marquee-credits-remaining'],
    );
    await server.request('GET', content(), { token });
    const after = Number(
      (await server.request('GET', '/api/v1/project', { token })).headers['marquee-credits-remaining'],
    );
    expect(before - after).toBe(1);
  });

  it('is a project (Model P) route', async () => {
    const { token: account } = await server.createAccount();
    const own = await uploadReady(server, account, bytes, 'video/mp4');
    const res = await server.request('GET', `/api/v1/media/${own.id}/content`, { token: account });
    expect(res.status).toBe(403);
  });

  it('answers a problem of its own, none of the media headers, when the stored bytes are gone', async () => {
    await server.services.blobs.delete(`media/${media.id}`); // lost from the blob directory behind Marquee's back
    const res = await server.request('GET', content(), { token, headers: { range: 'bytes=0-9' } });
    expect(res.status, res.text).toBe(500);
    expect(res.json()).toMatchObject({ code: 'internal_error' });
    expect(res.headers['content-length']).toBe(String(res.body.length));
    for (const name of ['content-range', 'content-disposition', 'etag', 'accept-ranges'])
      expect(res.headers[name], name).toBeUndefined();
  });
});

describe('the ready media cache of the byte routes', () => {
  it('answers not_found for a media deleted by this process at once, though it was just exported', async () => {
    const one = await uploadReady(server, token, bytes, 'video/mp4');
    const path = `/api/v1/media/${one.id}/content`;
    expect((await server.request('GET', path, { token, headers: { range: 'bytes=0-9' } })).status).toBe(206);
    const deleted = await server.request('DELETE', `/api/v1/media/${one.id}`, { token });
    expect(deleted.status).toBe(204);
    const after = await server.request('GET', path, { token, headers: { range: 'bytes=0-9' } });
    expect(after.status).toBe(404);
  });

  it('keeps a media across a retag (no column it holds changed) and drops it when its state changes', async () => {
    const one = await uploadReady(server, token, bytes, 'video/mp4');
    const { store } = server.services;
    await watchedWritesSettled(store);
    const first = await cachedReadyMedia(store, projectId, one.id);
    const retag = await server.request('PATCH', `/api/v1/media/${one.id}`, { token, json: { tag: 'lobby' } });
    expect(retag.status).toBe(200);
    expect(await cachedReadyMedia(store, projectId, one.id)).toBe(first);
    await store.db.updateTable('media').set({ state: 'failed' }).where('id', '=', one.id).execute();
    await expect(cachedReadyMedia(store, projectId, one.id)).rejects.toMatchObject({ code: 'not_found' });
  });
});
