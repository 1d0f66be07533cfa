// The BlobStore contract, run over every implementation: the local directory and an S3 bucket on a
// real S3-protocol server started here (s3rver, D-350).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type TestS3Server } from '../testing/s3-server';
import { BlobExistsError, BlobTooLargeError, type BlobStore } from './blob-store';
import { LocalBlobStore } from './local-blob-store';

let s3: TestS3Server;
const roots: string[] = [];
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => {
  await s3.stop();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

const implementations: [string, () => BlobStore][] = [
  [
    'local directory',
    () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-blobs-'));
      roots.push(root);
      return new LocalBlobStore(root);
    },
  ],
  ['S3 bucket', () => s3.store()],
];

const readAll = async (stream: Readable) => Buffer.concat(await stream.toArray());
const text = async (blobs: BlobStore, key: string) => (await readAll(blobs.read(key))).toString();
async function* chunks(...parts: (string | Buffer)[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

describe.each(implementations)('BlobStore on a %s', (_name, open) => {
  let blobs: BlobStore;
  beforeAll(() => {
    blobs = open();
  });

  it('writes buffers and streams, and reads them back whole or by range', async () => {
    expect(await blobs.write('media/a', Buffer.from('hello'))).toEqual({
      bytes: 5,
      sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    });
    await blobs.write('media/b', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(await text(blobs, 'media/b')).toBe('hello world');
    expect((await readAll(blobs.read('media/b', { start: 6, end: 10 }))).toString()).toBe('world');
    expect((await readAll(blobs.read('media/b', { start: 0, end: 0 }))).toString()).toBe('h');
    expect(await blobs.stat('media/b')).toEqual({ bytes: 11 });
    expect(await blobs.stat('media/none')).toBeUndefined();
    await blobs.write('media/b', Buffer.from('replaced'));
    expect(await text(blobs, 'media/b')).toBe('replaced');
  });

  it('streams a large object in and out, hashing it on the way, and serves ranges deep inside it', async () => {
    const big = crypto.randomBytes(9 * 1024 * 1024 + 123);
    const parts = Array.from({ length: Math.ceil(big.length / 65536) }, (_, i) =>
      big.subarray(i * 65536, (i + 1) * 65536),
    );
    const info = await blobs.write('media/big', Readable.from(parts));
    expect(info).toEqual({ bytes: big.length, sha256: crypto.createHash('sha256').update(big).digest('hex') });
    expect(await blobs.stat('media/big')).toEqual({ bytes: big.length });
    const start = 8 * 1024 * 1024 - 7;
    const slice = await readAll(blobs.read('media/big', { start, end: start + 99_999 }));
    expect(slice.equals(big.subarray(start, start + 100_000))).toBe(true);
    expect((await readAll(blobs.read('media/big'))).equals(big)).toBe(true);
  });

  it('stops a reader that goes away without reading the rest', async () => {
    await blobs.write('media/stop', crypto.randomBytes(2 * 1024 * 1024));
    const stream = blobs.read('media/stop');
    for await (const chunk of stream) {
      expect((chunk as Buffer).length).toBeGreaterThan(0);
      break;
    }
    expect(stream.destroyed).toBe(true);
  });

  it('serves a reader while many others hold their streams open, unread', async () => {
    await blobs.write('media/held', crypto.randomBytes(4 * 1024 * 1024));
    await blobs.write('media/small', Buffer.from('small'));
    const held = await Promise.all(
      Array.from({ length: 60 }, async () => {
        const stream = blobs.read('media/held');
        await new Promise((resolve, reject) => stream.once('readable', resolve).once('error', reject));
        return stream;
      }),
    );
    expect((await readAll(blobs.read('media/small', { start: 1, end: 3 }))).toString()).toBe('mal');
    for (const stream of held) stream.destroy();
  });

  it('fails a read of a missing object as a stream error', async () => {
    await expect(readAll(blobs.read('media/missing'))).rejects.toThrow();
  });

  it('refuses more than maxBytes and leaves nothing behind', async () => {
    await expect(blobs.write('media/c', Buffer.alloc(10), { maxBytes: 9 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await blobs.stat('media/c')).toBeUndefined();
    const big = Readable.from(Array.from({ length: 200 }, () => Buffer.alloc(65536)));
    await expect(blobs.write('media/d', big, { maxBytes: 10 * 1024 * 1024 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await blobs.stat('media/d')).toBeUndefined();
    expect(big.destroyed).toBe(true);
  });

  it('never replaces an existing object on an exclusive write', async () => {
    await blobs.write('media/only-once', Buffer.from('first'), { exclusive: true });
    await expect(blobs.write('media/only-once', Buffer.from('second'), { exclusive: true })).rejects.toBeInstanceOf(
      BlobExistsError,
    );
    expect(await text(blobs, 'media/only-once')).toBe('first');
  });

  it('deletes one object, or every object under a prefix and nothing beside it', async () => {
    await blobs.write('releases/rel_1/0', Buffer.from('a'));
    await blobs.write('releases/rel_1/sub/1', Buffer.from('b'));
    await blobs.write('releases/rel_10/0', Buffer.from('c'));
    await blobs.deletePrefix('releases/rel_1');
    expect(await blobs.stat('releases/rel_1/0')).toBeUndefined();
    expect(await blobs.stat('releases/rel_1/sub/1')).toBeUndefined();
    expect(await text(blobs, 'releases/rel_10/0')).toBe('c');
    await blobs.delete('releases/rel_10/0');
    await blobs.delete('releases/rel_10/0');
    expect(await blobs.stat('releases/rel_10/0')).toBeUndefined();
  });

  it('refuses keys outside the grammar', async () => {
    await expect(blobs.write('../escape', Buffer.from('x'))).rejects.toThrow(/invalid blob key/);
    expect(() => blobs.read('a//b')).toThrow(/invalid blob key/);
  });

  it('is writable', async () => {
    expect(await blobs.writable()).toBe(true);
  });

  describe('trees', () => {
    it('stages small and large objects, then publishes them under a prefix at once', async () => {
      const large = Buffer.alloc(600 * 1024, 0x61);
      const staging = await blobs.stageTree('op_1');
      await staging.add('0', chunks('hello ', 'world'), 11);
      await staging.add('1', chunks(large.subarray(0, 100), large.subarray(100)), large.length);
      await staging.add('2', chunks(), 0);
      await staging.add('dir/3', chunks('deep'), 4);
      await staging.finish();
      expect(await blobs.stagedTrees()).toEqual(['op_1']);
      expect(await blobs.hasStagedTree('op_1')).toBe(true);
      await blobs.publishTree('op_1', 'trees/rel_1');
      expect(await blobs.hasStagedTree('op_1')).toBe(false);
      expect(await blobs.stagedTrees()).toEqual([]);
      expect(await text(blobs, 'trees/rel_1/0')).toBe('hello world');
      expect(await blobs.stat('trees/rel_1/1')).toEqual({ bytes: large.length });
      expect(await blobs.stat('trees/rel_1/2')).toEqual({ bytes: 0 });
      expect(await text(blobs, 'trees/rel_1/dir/3')).toBe('deep');
    });

    it('replaces whatever an earlier attempt left under the prefix', async () => {
      const first = await blobs.stageTree('op_a');
      await first.add('0', chunks('old'), 3);
      await first.add('9', chunks('stray'), 5);
      await first.finish();
      await blobs.publishTree('op_a', 'trees/rel_x');
      const second = await blobs.stageTree('op_b');
      await second.add('0', chunks('new'), 3);
      await second.finish();
      await blobs.publishTree('op_b', 'trees/rel_x', { durable: true });
      expect(await text(blobs, 'trees/rel_x/0')).toBe('new');
      expect(await blobs.stat('trees/rel_x/9')).toBeUndefined();
    });

    it('starts a reopened staging area empty, keeps an empty one, and removes it on abort or discard', async () => {
      const staging = await blobs.stageTree('op_r');
      await staging.add('0', chunks('x'), 1);
      await staging.finish();
      const reopened = await blobs.stageTree('op_r');
      await reopened.finish();
      expect(await blobs.hasStagedTree('op_r')).toBe(true);
      await blobs.publishTree('op_r', 'trees/rel_r');
      expect(await blobs.stat('trees/rel_r/0')).toBeUndefined();
      const again = await blobs.stageTree('op_r');
      await again.add('0', chunks('y'), 1);
      await again.abort();
      expect(await blobs.hasStagedTree('op_r')).toBe(false);
      await (await blobs.stageTree('op_s')).finish();
      await blobs.discardTree('op_s');
      expect(await blobs.stagedTrees()).toEqual([]);
    });

    it('waits on abort for a large object still being stored, and leaves nothing of it', async () => {
      const staging = await blobs.stageTree('op_w');
      let aborted: Promise<void> | undefined;
      async function* body(): AsyncIterable<Uint8Array> {
        yield Buffer.alloc(600 * 1024, 0x62);
        // The upload fails (its client went away) while this object is still being stored.
        aborted = staging.abort();
        await Promise.race([aborted, new Promise((resolve) => setTimeout(resolve, 300))]);
      }
      await staging.add('0', body(), 600 * 1024);
      await aborted;
      expect(await blobs.hasStagedTree('op_w')).toBe(false);
      expect(await blobs.stat('.staging/op_w/0')).toBeUndefined();
    });

    it('writes many objects with several in flight', async () => {
      const staging = await blobs.stageTree('op_d', { durable: true });
      for (let i = 0; i < 40; i++) await staging.add(String(i), chunks(`file ${i}`), `file ${i}`.length);
      await staging.finish();
      await blobs.publishTree('op_d', 'trees/rel_d', { durable: true });
      expect(await text(blobs, 'trees/rel_d/39')).toBe('file 39');
      expect(await text(blobs, 'trees/rel_d/0')).toBe('file 0');
    });

    it('refuses object names outside the key grammar and never writes twice to one name', async () => {
      const staging = await blobs.stageTree('op_n');
      await expect(staging.add('../escape', chunks('x'), 1)).rejects.toThrow(/invalid blob key/);
      await expect(staging.add('a/../../b', chunks('x'), 1)).rejects.toThrow(/invalid blob key/);
      await staging.add('0', chunks('x'), 1);
      await expect(staging.add('0', chunks('y'), 1)).rejects.toThrow(/EEXIST/);
      await expect(blobs.stageTree('a/b')).rejects.toThrow(/invalid staging name/);
      await staging.abort();
    });
  });
});
