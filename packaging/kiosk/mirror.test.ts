import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentDb } from './agent-db';
import { IntegrityError, Mirror, MirrorFullError, writeAll, type ContentFetch, type MirrorItem } from './mirror';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A content origin in memory: serves `files` by path with one byte range, and records each request. */
class FakeOrigin {
  readonly files = new Map<string, Buffer>();
  readonly requests: { path: string; range?: string }[] = [];
  /** Cut the next response after this many bytes (a dropped connection). */
  cutAfter: number | undefined;
  /** Fail the next response's body with this error code after a few bytes. */
  failWith: string | undefined;
  ignoreRanges = false;

  add(bytes: Buffer, kind: MirrorItem['kind'] = 'media'): MirrorItem {
    const item = { sha256: sha(bytes), bytes: bytes.length, path: `/content/v1/x/${sha(bytes)}`, kind };
    this.files.set(item.path, bytes);
    return item;
  }

  fetch: ContentFetch = async (p, options) => {
    this.requests.push({ path: p, range: options.range });
    const bytes = this.files.get(p)!;
    let body = bytes;
    let status = 200;
    const headers: Record<string, string> = {};
    const m = options.range && !this.ignoreRanges ? /^bytes=(\d+)-$/.exec(options.range) : null;
    if (m) {
      const start = Number(m[1]);
      body = bytes.subarray(start);
      status = 206;
      headers['content-range'] = `bytes ${start}-${bytes.length - 1}/${bytes.length}`;
    }
    const cut = this.cutAfter;
    const failWith = this.failWith;
    this.cutAfter = undefined;
    this.failWith = undefined;
    // Bytes first, then the failure on the next read (an errored stream drops what it queued).
    let pulls = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pulls++ === 0) {
          const first = cut ?? (failWith ? 10 : body.length);
          controller.enqueue(new Uint8Array(body.subarray(0, first)));
          if (cut === undefined && !failWith) controller.close();
        } else {
          await new Promise((r) => setTimeout(r, 50)); // the connection drops a moment later
          if (cut !== undefined) controller.error(new Error('connection reset'));
          else controller.error(Object.assign(new Error(failWith), { code: failWith }));
        }
      },
    });
    return new Response(stream, { status, headers });
  };
}

function setup(budgetBytes = 10_000_000) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-mirror-'));
  dirs.push(dir);
  const origin = new FakeOrigin();
  let now = 1_000_000;
  const db = new AgentDb(dir);
  const mirror = new Mirror(db, path.join(dir, 'mirror'), {
    budgetBytes,
    fetch: origin.fetch,
    now: () => (now += 61_000),
  });
  return { dir, origin, mirror, db };
}

describe('the mirror', () => {
  it('downloads, verifies and lands each item under its digest', async () => {
    const { origin, mirror } = setup();
    const a = origin.add(crypto.randomBytes(5000));
    await mirror.ensure([a], new Set([a.sha256]));
    expect(mirror.has(a.sha256, a.bytes)).toBe(true);
    expect(fs.readFileSync(mirror.filePath(a.sha256)).equals(origin.files.get(a.path)!)).toBe(true);
    expect(fs.readdirSync(mirror.blobDir)).toEqual([a.sha256]);
    // Present: nothing is fetched again.
    await mirror.ensure([a], new Set([a.sha256]));
    expect(origin.requests).toHaveLength(1);
  });

  it('writes a body of many small chunks whole, in batches (the hot path)', async () => {
    const { dir } = setup();
    const bytes = crypto.randomBytes(3 * 1024 * 1024 + 777);
    const item: MirrorItem = { sha256: sha(bytes), bytes: bytes.length, path: '/content/v1/big', kind: 'media' };
    const chunked: ContentFetch = async () => {
      let at = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= bytes.length) return controller.close();
          controller.enqueue(new Uint8Array(bytes.subarray(at, (at += 16 * 1024))));
        },
      });
      return new Response(stream, { status: 200 });
    };
    const big = new Mirror(new AgentDb(dir), path.join(dir, 'mirror-big'), { budgetBytes: 10_000_000, fetch: chunked });
    await big.ensure([item], new Set([item.sha256]));
    expect(fs.readFileSync(big.filePath(item.sha256)).equals(bytes)).toBe(true);
  });

  it('writes again what a short write left', async () => {
    const written: number[] = [];
    const handle = {
      // At most 5 bytes a call, like a disk that takes a little at a time.
      async writev(chunks: Uint8Array[]) {
        const all = Buffer.concat(chunks);
        const n = Math.min(5, all.length);
        written.push(...all.subarray(0, n));
        return { bytesWritten: n, buffers: chunks };
      },
    };
    await writeAll(handle as never, [Buffer.from([1, 2, 3]), Buffer.from([4, 5, 6, 7, 8, 9]), Buffer.from([10, 11])]);
    expect(written).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('resumes an interrupted download with a byte range and keeps the bytes it had', async () => {
    const { origin, mirror } = setup();
    const a = origin.add(crypto.randomBytes(100_000));
    origin.cutAfter = 40_000;
    await expect(mirror.ensure([a], new Set([a.sha256]))).rejects.toThrow('connection reset');
    expect(mirror.has(a.sha256)).toBe(false);
    expect(fs.statSync(`${mirror.filePath(a.sha256)}.part`).size).toBe(40_000);
    await mirror.ensure([a], new Set([a.sha256]));
    expect(origin.requests.at(-1)).toEqual({ path: a.path, range: 'bytes=40000-' });
    expect(sha(fs.readFileSync(mirror.filePath(a.sha256)))).toBe(a.sha256);
  });

  it('starts over when the origin answers a resume with the whole file', async () => {
    const { origin, mirror } = setup();
    const a = origin.add(crypto.randomBytes(50_000));
    origin.cutAfter = 20_000;
    await expect(mirror.ensure([a], new Set([a.sha256]))).rejects.toThrow();
    origin.ignoreRanges = true;
    await mirror.ensure([a], new Set([a.sha256]));
    expect(sha(fs.readFileSync(mirror.filePath(a.sha256)))).toBe(a.sha256);
  });

  it("refuses bytes that are not the manifest's digest: nothing lands, nothing is kept", async () => {
    const { origin, mirror } = setup();
    const a = origin.add(crypto.randomBytes(3000));
    origin.files.set(a.path, crypto.randomBytes(3000)); // the origin serves other bytes
    await expect(mirror.ensure([a], new Set([a.sha256]))).rejects.toBeInstanceOf(IntegrityError);
    expect(mirror.has(a.sha256)).toBe(false);
    expect(fs.readdirSync(mirror.blobDir)).toEqual([]);
  });

  it('evicts the least recently used entries for new content, never what the manifests need', async () => {
    const { origin, mirror } = setup(3000);
    const [a, b, c, d] = [1, 2, 3, 4].map(() => origin.add(crypto.randomBytes(1000)));
    await mirror.ensure([a!, b!, c!], new Set([a!.sha256, b!.sha256, c!.sha256]));
    mirror.touch(a!.sha256); // a is used again: b is now the least recently used
    await mirror.ensure([d!], new Set([a!.sha256, d!.sha256]));
    expect([a, b, c, d].map((i) => mirror.has(i!.sha256))).toEqual([true, false, true, true]);
    // Everything stored is needed: a new item does not fit, and nothing needed goes for it.
    const e = origin.add(crypto.randomBytes(1500));
    const keep = new Set([a!.sha256, c!.sha256, d!.sha256, e.sha256]);
    await expect(mirror.ensure([e], keep)).rejects.toBeInstanceOf(MirrorFullError);
    expect([a, c, d].map((i) => mirror.has(i!.sha256))).toEqual([true, true, true]);
    expect(mirror.usage()).toBeLessThanOrEqual(3000);
  });

  it('on a full disk frees everything not needed and keeps the partial file for later', async () => {
    const { origin, mirror } = setup();
    const old = origin.add(crypto.randomBytes(2000));
    await mirror.ensure([old], new Set([old.sha256]));
    const a = origin.add(crypto.randomBytes(5000));
    origin.failWith = 'ENOSPC';
    await expect(mirror.ensure([a], new Set([a.sha256]))).rejects.toBeInstanceOf(MirrorFullError);
    expect(mirror.has(old.sha256)).toBe(false);
    expect(fs.statSync(`${mirror.filePath(a.sha256)}.part`).size).toBe(10);
    await mirror.ensure([a], new Set([a.sha256]));
    expect(origin.requests.at(-1)?.range).toBe('bytes=10-');
    expect(mirror.has(a.sha256)).toBe(true);
  });

  it('finds a corrupt or missing file, drops it and fetches it again', async () => {
    const { origin, mirror } = setup();
    const a = origin.add(crypto.randomBytes(4000));
    const b = origin.add(crypto.randomBytes(4000));
    await mirror.ensure([a, b], new Set([a.sha256, b.sha256]));
    const file = mirror.filePath(a.sha256);
    const bytes = fs.readFileSync(file);
    bytes[100] = bytes[100]! ^ 0xff; // same size, other content
    fs.writeFileSync(file, bytes);
    fs.rmSync(mirror.filePath(b.sha256));
    expect(mirror.intact(b.sha256)).toBe(false);
    expect(await mirror.verify()).toEqual([a.sha256]);
    expect(mirror.has(a.sha256)).toBe(false);
    await mirror.ensure([a, b], new Set([a.sha256, b.sha256]));
    expect(sha(fs.readFileSync(mirror.filePath(a.sha256)))).toBe(a.sha256);
    expect(sha(fs.readFileSync(mirror.filePath(b.sha256)))).toBe(b.sha256);
  });

  it('keeps what it stored across a restart (a new Mirror on the same data dir)', async () => {
    const { origin, mirror, dir, db } = setup();
    const a = origin.add(crypto.randomBytes(1000));
    await mirror.ensure([a], new Set([a.sha256]));
    db.close();
    const again = new Mirror(new AgentDb(dir), path.join(dir, 'mirror'), { budgetBytes: 10_000, fetch: origin.fetch });
    expect(again.has(a.sha256, a.bytes)).toBe(true);
  });
});
