import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { DescriptorCache } from './descriptor-cache';
import { LocalBlobStore } from './local-blob-store';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-descriptors-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function readAt(store: LocalBlobStore, key: string, position: number, length: number): Promise<string> {
  const blob = await store.open(key);
  try {
    const buffer = Buffer.alloc(length);
    const read = await blob.read(buffer, 0, length, position);
    return buffer.subarray(0, read).toString();
  } finally {
    blob.release();
  }
}

describe('LocalBlobStore.open (cached descriptors)', () => {
  it('reads what is stored, and the new bytes after a replacement, a deletion or a republished tree', async () => {
    const store = new LocalBlobStore(path.join(root, 'a'));
    await store.write('media/x', Buffer.from('hello world'));
    expect(await readAt(store, 'media/x', 6, 5)).toBe('world');
    await store.write('media/x', Buffer.from('HELLO WORLD'));
    expect(await readAt(store, 'media/x', 0, 5)).toBe('HELLO');
    await store.delete('media/x');
    await expect(store.open('media/x')).rejects.toMatchObject({ code: 'ENOENT' });

    const staged = await store.stageTree('t1');
    await staged.add('f', Readable.from([Buffer.from('one')]), 3);
    await staged.finish();
    await store.publishTree('t1', 'releases/r');
    expect(await readAt(store, 'releases/r/f', 0, 3)).toBe('one');
    const again = await store.stageTree('t2');
    await again.add('f', Readable.from([Buffer.from('two')]), 3);
    await again.finish();
    await store.publishTree('t2', 'releases/r');
    expect(await readAt(store, 'releases/r/f', 0, 3)).toBe('two');
  });

  it('keeps at most its bound of descriptors, closing only those no read holds', async () => {
    const dir = path.join(root, 'b');
    fs.mkdirSync(dir);
    const cache = new DescriptorCache(2);
    const files = ['1', '2', '3'].map((n) => {
      const file = path.join(dir, n);
      fs.writeFileSync(file, n.repeat(4));
      return file;
    });
    const held = await cache.acquire('1', files[0]!);
    for (const [i, file] of files.entries()) (await cache.acquire(String(i + 1), file)).release();
    expect(cache.size).toBe(2);
    // The evicted-while-held descriptor still reads its own file until released.
    const buffer = Buffer.alloc(4);
    await held.read(buffer, 0, 4, 0);
    expect(buffer.toString()).toBe('1111');
    held.release();
    held.release(); // twice is once
    expect(cache.size).toBeLessThanOrEqual(2);
  });

  it('closes idle descriptors', async () => {
    const file = path.join(root, 'idle');
    fs.writeFileSync(file, crypto.randomBytes(16));
    const cache = new DescriptorCache(8, 0);
    (await cache.acquire('idle', file)).release();
    expect(cache.size).toBe(1);
    (await cache.acquire('other', file)).release();
    expect(cache.size).toBe(1);
  });
});
