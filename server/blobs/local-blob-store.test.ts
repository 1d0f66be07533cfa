import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Keys } from '../keys';
import { BlobExistsError, BlobTooLargeError } from './blob-store';
import { LocalBlobStore } from './local-blob-store';
import { PutSigner, SIGNED_PUT_PREFIX } from './signed-put';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-blobs-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const keys = new Keys(Buffer.alloc(32, 9));
const store = new LocalBlobStore(root, new PutSigner(keys, 'http://localhost:8080'));

const readAll = async (stream: Readable) => Buffer.concat(await stream.toArray());

describe('LocalBlobStore', () => {
  it('writes buffers and streams atomically and reads them back, whole or by range', async () => {
    expect(await store.write('media/a', Buffer.from('hello'))).toEqual({
      bytes: 5,
      sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    });
    await store.write('media/b', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect((await readAll(store.read('media/b'))).toString()).toBe('hello world');
    expect((await readAll(store.read('media/b', { start: 6, end: 10 }))).toString()).toBe('world');
    expect(await store.stat('media/b')).toEqual({ bytes: 11 });
  });

  it('refuses more than maxBytes and leaves nothing behind', async () => {
    await expect(store.write('media/c', Buffer.alloc(10), { maxBytes: 9 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await store.stat('media/c')).toBeUndefined();
    expect(fs.readdirSync(path.join(root, '.tmp', 'local'))).toEqual([]);
  });
});

describe('exclusive writes', () => {
  it('never replace an existing object, and leave no temp file behind', async () => {
    await store.write('media/only-once', Buffer.from('first'), { exclusive: true });
    await expect(store.write('media/only-once', Buffer.from('second'), { exclusive: true })).rejects.toBeInstanceOf(
      BlobExistsError,
    );
    expect((await readAll(store.read('media/only-once'))).toString()).toBe('first');
    expect(fs.readdirSync(path.join(root, '.tmp', 'local'))).toEqual([]);
  });

  it('let exactly one of several racing writes store the object', async () => {
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((v) => store.write('media/raced', Buffer.from(v.repeat(1000)), { exclusive: true })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r as PromiseRejectedResult).reason instanceof BlobExistsError),
    ).toBe(true);
    expect((await store.stat('media/raced'))?.bytes).toBe(1000);
  });
});

describe('a blob directory that replicas share', () => {
  it('is started on by another replica without losing this one’s write in progress', async () => {
    const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-blobs-shared-'));
    try {
      const a = new LocalBlobStore(shared, undefined, 'wkr_a');
      const body = new PassThrough();
      const writing = a.write('media/med_during_restart', body);
      body.write(Buffer.from('first half, '));
      await new Promise((resolve) => setTimeout(resolve, 50));
      new LocalBlobStore(shared, undefined, 'wkr_b'); // the other replica (re)starts
      body.end(Buffer.from('second half'));
      expect(await writing).toMatchObject({ bytes: 23 });
      expect((await readAll(a.read('media/med_during_restart'))).toString()).toBe('first half, second half');
    } finally {
      fs.rmSync(shared, { recursive: true, force: true });
    }
  });

  it('removes at start its own crashed writes, and anyone’s untouched for a day', () => {
    const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-blobs-shared-'));
    try {
      const temp = (...names: string[]) => path.join(shared, '.tmp', ...names);
      const dayAndMore = new Date(Date.now() - 25 * 60 * 60_000);
      for (const [file, old] of [
        [temp('wkr_a', 'crashed'), false],
        [temp('wkr_b', 'in-progress'), false],
        [temp('wkr_b', 'abandoned'), true],
        [temp('written-before-per-process-dirs'), true],
      ] as const) {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, 'bytes');
        if (old) fs.utimesSync(file, dayAndMore, dayAndMore);
      }
      new LocalBlobStore(shared, undefined, 'wkr_a');
      expect(fs.readdirSync(temp('wkr_a'))).toEqual([]);
      expect(fs.readdirSync(temp('wkr_b'))).toEqual(['in-progress']);
      expect(fs.readdirSync(temp()).sort()).toEqual(['wkr_a', 'wkr_b']);
    } finally {
      fs.rmSync(shared, { recursive: true, force: true });
    }
  });
});

describe('signed PUT URLs', () => {
  const grant = { key: 'media/med_x', bytes: 42, contentType: 'image/png', expiresAt: 2_000_000_000_000 };

  it('binds key, length, content type and expiry, and names every header to send', async () => {
    const signed = await store.presignPut(grant);
    const url = new URL(signed.url);
    expect(url.origin + url.pathname).toBe(`http://localhost:8080${SIGNED_PUT_PREFIX}media/med_x`);
    expect(signed.method).toBe('PUT');
    expect(signed.headers).toEqual({ 'Content-Type': 'image/png', 'Content-Length': '42' });
    expect(store.verifyPut('media/med_x', url.searchParams, grant.expiresAt - 1)).toEqual({ ok: true, grant });
  });

  it('refuses an expired, altered or foreign signature', async () => {
    const url = new URL((await store.presignPut(grant)).url);
    expect(store.verifyPut('media/med_x', url.searchParams, grant.expiresAt)).toEqual({ ok: false, reason: 'expired' });
    expect(store.verifyPut('media/med_y', url.searchParams, 0)).toEqual({ ok: false, reason: 'signature' });
    for (const [name, value] of [
      ['bytes', '43'],
      ['content_type', 'image/gif'],
      ['expires', '2000000000001'],
    ]) {
      const altered = new URLSearchParams(url.searchParams);
      altered.set(name!, value!);
      expect(store.verifyPut('media/med_x', altered, 0)).toEqual({ ok: false, reason: 'signature' });
    }
    const other = new LocalBlobStore(root, new PutSigner(new Keys(Buffer.alloc(32, 1)), 'http://localhost:8080'));
    expect(other.verifyPut('media/med_x', url.searchParams, 0)).toEqual({ ok: false, reason: 'signature' });
    const missing = new URLSearchParams(url.searchParams);
    missing.delete('bytes');
    expect(store.verifyPut('media/med_x', missing, 0)).toEqual({ ok: false, reason: 'malformed' });
  });
});
