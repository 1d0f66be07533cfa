import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../blobs/blob-store';
import { LocalBlobStore } from '../blobs/local-blob-store';
import { CHUNK_BYTES, SINGLE_READ_BYTES, sendBlobRange } from './blob-delivery';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-delivery-'));
const store = new LocalBlobStore(root);
/** The same directory without the descriptor fast path: the streaming fallback. */
const streaming: BlobStore = Object.assign(Object.create(store) as LocalBlobStore, { open: undefined });
const bytes = crypto.randomBytes(3 * CHUNK_BYTES + 12_345);
let server: http.Server;
let port = 0;
const sentCounts: number[] = [];

beforeAll(async () => {
  await store.write('media/big', bytes);
  server = http.createServer((req, res) => {
    const [, from, to, mode] = /^\/(\d+)\/(\d+)\/(\w+)$/.exec(req.url!)!;
    const start = Number(from);
    const end = Number(to);
    res.setHeader('Content-Length', String(end - start + 1));
    let sent = 0;
    res.once('close', () => sentCounts.push(sent));
    void sendBlobRange(req, res, mode === 'fast' ? store : streaming, 'media/big', start, end, (n) => {
      sent += n;
    }).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(root, { recursive: true, force: true });
});

async function get(start: number, end: number, mode: 'fast' | 'stream'): Promise<Buffer> {
  const res = await fetch(`http://127.0.0.1:${port}/${start}/${end}/${mode}`);
  return Buffer.from(await res.arrayBuffer());
}

describe('sendBlobRange', () => {
  it.each([
    ['one byte', 0, 0],
    ['a small range', 100, 65_635],
    ['exactly one single read', 7, 7 + SINGLE_READ_BYTES - 1],
    ['one byte past a single read', 7, 7 + SINGLE_READ_BYTES],
    ['chunks with a short last one', 5, bytes.length - 1],
    ['the whole object', 0, bytes.length - 1],
    ['the last byte', bytes.length - 1, bytes.length - 1],
  ])('sends %s exactly, on both paths', async (_name, start, end) => {
    const expected = bytes.subarray(start, end + 1);
    for (const mode of ['fast', 'stream'] as const) {
      const body = await get(start, end, mode);
      expect(body.length).toBe(expected.length);
      expect(body.equals(expected)).toBe(true);
    }
  });

  it('counts what it handed to the socket, and stops for a client that went away', async () => {
    sentCounts.length = 0;
    await get(0, bytes.length - 1, 'fast');
    await new Promise((r) => setTimeout(r, 20));
    expect(sentCounts).toEqual([bytes.length]);

    sentCounts.length = 0;
    await new Promise<void>((resolve) => {
      const req = http.get(`http://127.0.0.1:${port}/0/${bytes.length - 1}/fast`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
    });
    for (let i = 0; i < 50 && sentCounts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sentCounts[0]).toBeGreaterThan(0);
    expect(sentCounts[0]).toBeLessThan(bytes.length);
    // The descriptor was given back: the store still serves the object afterwards.
    expect((await get(0, 9, 'fast')).equals(bytes.subarray(0, 10))).toBe(true);
  });

  it('fails when the stored object is shorter than the range asked for', async () => {
    await expect(get(bytes.length - 10, bytes.length + 100, 'fast')).rejects.toThrow();
  });
});
