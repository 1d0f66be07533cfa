import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentDb } from './agent-db';
import { FileHasher, type HashStream } from './file-hash';
import {
  IntegrityError,
  MIRROR_CONCURRENCY,
  Mirror,
  MirrorFullError,
  type ContentFetch,
  type ContentResponse,
  type MirrorItem,
} from './mirror';

/** A ContentResponse whose body is a Node stream: the fake origins' answers. */
function streamedResponse(status: number, headers: ContentResponse['headers'], body: Readable): ContentResponse {
  return {
    status,
    headers,
    saveTo: (file, flags, hash) =>
      pipeline(
        body,
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            if (hash) {
              // Handed over in memory of its own, as the content client hands over its chunks.
              const copy = Buffer.alloc(chunk.length);
              chunk.copy(copy);
              hash.give(copy, copy.length, () => {});
            }
            done(null, chunk);
          },
        }),
        fs.createWriteStream(file, { flags }),
      ),
    discard: () => body.destroy(),
  };
}

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
    if (cut === undefined && !failWith) return streamedResponse(status, headers, Readable.from([body]));
    // Bytes first, then the failure a moment later (the connection drops).
    const stream = new Readable({ read() {} });
    stream.push(body.subarray(0, cut ?? 10));
    setTimeout(() => {
      stream.destroy(
        cut !== undefined ? new Error('connection reset') : Object.assign(new Error(failWith), { code: failWith }),
      );
    }, 50);
    return streamedResponse(status, headers, stream);
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

  it('records a landed file with a commit that waits for no flush: a lost row costs only a download', async () => {
    const { origin, mirror, db } = setup();
    const a = origin.add(crypto.randomBytes(5000));
    const synchronous = () => db.sqlite.pragma('synchronous', { simple: true });
    const during: unknown[] = [];
    const relaxed = db.relaxed.bind(db);
    db.relaxed = <T>(fn: () => T): T =>
      relaxed(() => {
        during.push(synchronous());
        return fn();
      });
    await mirror.ensure([a], new Set([a.sha256]));
    expect(during).toEqual([1]); // NORMAL for the row
    expect(synchronous()).toBe(2); // FULL again for everything else
    expect(() =>
      db.relaxed(() => {
        throw new Error('a failed write');
      }),
    ).toThrow('a failed write');
    expect(synchronous()).toBe(2);
    // The row lost, as in a power cut before the next flush: the file is fetched again and found.
    db.sqlite.prepare('DELETE FROM entries WHERE key = ?').run(a.sha256);
    await mirror.ensure([a], new Set([a.sha256]));
    expect(origin.requests).toHaveLength(2);
    expect(mirror.has(a.sha256, a.bytes)).toBe(true);
  });

  it('writes a body of many small chunks whole, each into the hash in order', async () => {
    const { dir } = setup();
    const bytes = crypto.randomBytes(3 * 1024 * 1024 + 777);
    const item: MirrorItem = { sha256: sha(bytes), bytes: bytes.length, path: '/content/v1/big', kind: 'media' };
    const chunked: ContentFetch = async () => {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += 16 * 1024) chunks.push(bytes.subarray(at, at + 16 * 1024));
      return streamedResponse(200, {}, Readable.from(chunks));
    };
    const big = new Mirror(new AgentDb(dir), path.join(dir, 'mirror-big'), { budgetBytes: 10_000_000, fetch: chunked });
    await big.ensure([item], new Set([item.sha256]));
    expect(fs.readFileSync(big.filePath(item.sha256)).equals(bytes)).toBe(true);
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

  it('lands a partial file already whole by reading it, asking the origin for nothing, and drops a wrong one', async () => {
    const { origin, mirror } = setup();
    const a = origin.add(crypto.randomBytes(30_000));
    fs.mkdirSync(mirror.blobDir, { recursive: true });
    // Written whole before a crash stopped the landing: only the hash of the file can say it is right.
    fs.writeFileSync(`${mirror.filePath(a.sha256)}.part`, origin.files.get(a.path)!);
    await mirror.ensure([a], new Set([a.sha256]));
    expect(origin.requests).toEqual([]);
    expect(mirror.has(a.sha256)).toBe(true);
    const b = origin.add(crypto.randomBytes(30_000));
    fs.writeFileSync(`${mirror.filePath(b.sha256)}.part`, crypto.randomBytes(30_000));
    await expect(mirror.ensure([b], new Set([b.sha256]))).rejects.toBeInstanceOf(IntegrityError);
    expect(fs.existsSync(`${mirror.filePath(b.sha256)}.part`)).toBe(false);
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
    // One after the other: downloads side by side land in no set order, and this test needs one.
    for (const item of [a!, b!, c!]) await mirror.ensure([item], new Set([a!.sha256, b!.sha256, c!.sha256]));
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

  it('hashes a blob once before it first serves it after a restart, and drops one that rotted', async () => {
    const { dir, origin, mirror, db } = setup();
    const a = origin.add(crypto.randomBytes(4000));
    const b = origin.add(crypto.randomBytes(4000));
    await mirror.ensure([a, b], new Set([a.sha256, b.sha256]));
    // Landed by this process: served as they are.
    expect(await mirror.servable(a.sha256)).toBe(true);
    const file = mirror.filePath(a.sha256);
    const bytes = fs.readFileSync(file);
    bytes[100] = bytes[100]! ^ 0xff;
    fs.writeFileSync(file, bytes);
    // The agent starts again: a mirror over the same disk trusts nothing it has not hashed.
    const restarted = new Mirror(db, path.join(dir, 'mirror'), { budgetBytes: 10_000_000, fetch: origin.fetch });
    try {
      expect(await Promise.all([restarted.servable(a.sha256), restarted.servable(a.sha256)])).toEqual([false, false]);
      expect(restarted.has(a.sha256)).toBe(false);
      expect(await restarted.servable(b.sha256)).toBe(true);
    } finally {
      await restarted.close();
    }
  });

  it('serves what is whole from a full disk: its bookkeeping writes failing keep no file from glass', async () => {
    const { dir, origin, mirror, db } = setup();
    const a = origin.add(crypto.randomBytes(4000));
    await mirror.ensure([a], new Set([a.sha256]));
    // The disk filled while the agent was down (a log, another program): SQLite can write nothing.
    const prepare = db.prepare.bind(db);
    vi.spyOn(db, 'prepare').mockImplementation((sql) => {
      const statement = prepare(sql);
      if (!/^\s*(UPDATE|INSERT|DELETE)/.test(sql)) return statement;
      return {
        run: () => {
          throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
        },
      } as never;
    });
    const restarted = new Mirror(db, path.join(dir, 'mirror'), {
      budgetBytes: 10_000_000,
      fetch: origin.fetch,
      now: () => Date.now() + 3600_000,
    });
    try {
      // Hashed once (its verified time not recorded), then served; its last use not recorded either.
      expect(await restarted.servable(a.sha256)).toBe(true);
      expect(() => restarted.touch(a.sha256)).not.toThrow();
      expect(await restarted.servable(a.sha256)).toBe(true);
    } finally {
      vi.restoreAllMocks();
      await restarted.close();
    }
  });

  it('downloads side by side, never more than its concurrency, and lands each one whole', async () => {
    const { dir } = setup();
    const files = [1, 2, 3, 4, 5, 6, 7].map(() => crypto.randomBytes(64 * 1024));
    const items = files.map(
      (b, i): MirrorItem => ({ sha256: sha(b), bytes: b.length, path: `/f/${i}`, kind: 'media' }),
    );
    let open = 0;
    let most = 0;
    const slow: ContentFetch = async (p) => {
      const bytes = files[Number(p.slice(3))]!;
      most = Math.max(most, ++open);
      async function* trickle() {
        for (let at = 0; at < bytes.length; at += 16 * 1024) {
          await new Promise((r) => setTimeout(r, 5));
          yield bytes.subarray(at, at + 16 * 1024);
        }
        open--;
      }
      return streamedResponse(200, {}, Readable.from(trickle()));
    };
    const mirror = new Mirror(new AgentDb(dir), path.join(dir, 'side'), { budgetBytes: 10_000_000, fetch: slow });
    await mirror.ensure(items, new Set(items.map((i) => i.sha256)));
    expect(most).toBe(MIRROR_CONCURRENCY);
    for (const [i, item] of items.entries())
      expect(fs.readFileSync(mirror.filePath(item.sha256)).equals(files[i]!)).toBe(true);
    expect(fs.readdirSync(mirror.blobDir).filter((n) => n.endsWith('.part'))).toEqual([]);
  });

  it('fetches the next item while the one before is hashed and flushed', async () => {
    const { dir } = setup();
    const files = [1, 2, 3, 4, 5].map(() => crypto.randomBytes(4096));
    const items = files.map(
      (b, i): MirrorItem => ({ sha256: sha(b), bytes: b.length, path: `/f/${i}`, kind: 'media' }),
    );
    const requested: string[] = [];
    const fetch: ContentFetch = async (p) => {
      requested.push(p);
      return streamedResponse(200, {}, Readable.from([files[Number(p.slice(3))]!]));
    };
    // Hashing waits until every item was requested (or 3 s): with lanes that waited for
    // their landing, only MIRROR_CONCURRENCY would be.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const timer = setTimeout(release, 3000);
    let requestedBeforeRelease = 0;
    class HeldHasher extends FileHasher {
      override stream(file: string, prefixBytes: number): HashStream {
        const stream = super.stream(file, prefixBytes);
        return { ...stream, digest: () => released.then(() => stream.digest()) };
      }
    }
    const hasher = new HeldHasher(1);
    const mirror = new Mirror(new AgentDb(dir), path.join(dir, 'pipelined'), { budgetBytes: 1e6, fetch, hasher });
    const done = mirror.ensure(items, new Set(items.map((i) => i.sha256)));
    for (let i = 0; i < 50 && requested.length < items.length; i++) await new Promise((r) => setTimeout(r, 10));
    requestedBeforeRelease = requested.length;
    clearTimeout(timer);
    release();
    await done;
    await hasher.close();
    expect(requestedBeforeRelease).toBe(items.length);
    expect(items.every((i) => mirror.has(i.sha256, i.bytes))).toBe(true);
  });

  it('throws a landing that failed after its lane moved on, and lands the rest', async () => {
    const { origin, mirror } = setup();
    const good = [1, 2, 3, 4].map(() => origin.add(crypto.randomBytes(3000)));
    const bad = origin.add(crypto.randomBytes(3000));
    // The origin serves other bytes for `bad` than its digest names.
    origin.files.set(bad.path, crypto.randomBytes(3000));
    const items = [bad, ...good];
    await expect(mirror.ensure(items, new Set(items.map((i) => i.sha256)))).rejects.toBeInstanceOf(IntegrityError);
    expect(mirror.has(bad.sha256)).toBe(false);
    expect(fs.readdirSync(mirror.blobDir).filter((n) => n.endsWith('.part'))).toEqual([]);
    // What landed stays landed; the next pass completes the rest.
    origin.files.delete(bad.path);
    await mirror.ensure(good, new Set(good.map((i) => i.sha256)));
    expect(good.every((i) => mirror.has(i.sha256, i.bytes))).toBe(true);
  });

  it('keeps its budget with downloads side by side: each counts at its full size from its start', async () => {
    const { dir } = setup();
    const files = [1, 2, 3, 4].map(() => crypto.randomBytes(1000));
    const items = files.map(
      (b, i): MirrorItem => ({ sha256: sha(b), bytes: b.length, path: `/f/${i}`, kind: 'media' }),
    );
    const onDisk = (m: Mirror) =>
      fs.readdirSync(m.blobDir).reduce((n, name) => n + fs.statSync(path.join(m.blobDir, name)).size, 0);
    let peak = 0;
    let mirror: Mirror;
    // Each body arrives in two halves with a pause between, so the downloads overlap mid-file.
    const halting: ContentFetch = async (p) => {
      const bytes = files[Number(p.slice(3))]!;
      async function* halves() {
        yield bytes.subarray(0, 500);
        await new Promise((r) => setTimeout(r, 20));
        peak = Math.max(peak, onDisk(mirror));
        yield bytes.subarray(500);
      }
      return streamedResponse(200, {}, Readable.from(halves()));
    };
    mirror = new Mirror(new AgentDb(dir), path.join(dir, 'tight'), { budgetBytes: 2500, fetch: halting });
    const keep = new Set(items.map((i) => i.sha256));
    // Room for two of the three: two land, the third is refused before a byte of it is fetched.
    await expect(mirror.ensure(items.slice(0, 3), keep)).rejects.toBeInstanceOf(MirrorFullError);
    expect(items.slice(0, 3).filter((i) => mirror.has(i.sha256))).toHaveLength(2);
    expect(peak).toBeLessThanOrEqual(2500);
    expect(onDisk(mirror)).toBe(2000);
    // What no manifest needs any more makes room, least recently used first, while others download.
    await mirror.ensure(items.slice(2), new Set(items.slice(2).map((i) => i.sha256)));
    expect(items.map((i) => mirror.has(i.sha256)).filter(Boolean)).toHaveLength(2);
    expect(mirror.has(items[2]!.sha256) && mirror.has(items[3]!.sha256)).toBe(true);
    expect(peak).toBeLessThanOrEqual(2500);
    expect(mirror.usage()).toBeLessThanOrEqual(2500);
  });

  it('never evicts the partial file of a download under way to make room for another', async () => {
    const { dir } = setup();
    const big = crypto.randomBytes(2000);
    const small = crypto.randomBytes(1000);
    const [a, b] = [big, small].map(
      (bytes, i): MirrorItem => ({ sha256: sha(bytes), bytes: bytes.length, path: `/f/${i}`, kind: 'media' }),
    );
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const fetchIt: ContentFetch = async (p) => {
      const bytes = p === '/f/0' ? big : small;
      async function* body() {
        yield bytes.subarray(0, 100);
        if (p === '/f/0') await held;
        yield bytes.subarray(100);
      }
      return streamedResponse(200, {}, Readable.from(body()));
    };
    const mirror = new Mirror(new AgentDb(dir), path.join(dir, 'guard'), { budgetBytes: 2500, fetch: fetchIt });
    const first = mirror.ensure([a!], new Set([a!.sha256]));
    await new Promise((r) => setTimeout(r, 30));
    // Another pass that does not name `a` (say, another manifest): `a` is under way, so it stays.
    await expect(mirror.ensure([b!], new Set([b!.sha256]))).rejects.toBeInstanceOf(MirrorFullError);
    expect(fs.existsSync(`${mirror.filePath(a!.sha256)}.part`)).toBe(true);
    release();
    await first;
    expect(mirror.has(a!.sha256)).toBe(true);
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
