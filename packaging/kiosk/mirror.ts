// The mirror: every media item and application package the kiosk's active and next manifests
// name, on local disk by SHA-256. Downloads resume with a byte range after an interruption (the
// partial file is kept and hashed on), are verified against the manifest's digest and size, and
// land by atomic rename, so a file under its final name is always whole. A disk budget is kept
// by evicting the least recently used entries, never one the active or next manifest needs; a
// file found corrupt or missing is dropped and fetched again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AgentDb } from './agent-db';

export interface MirrorItem {
  /** The content's SHA-256 (hex): its name on disk. */
  sha256: string;
  bytes: number;
  /** Upstream path to fetch it from (a manifest-bound content route). */
  path: string;
  kind: 'media' | 'package';
}

/** Fetches an upstream content path; `range` asks for the rest of a partial file. */
export type ContentFetch = (
  path: string,
  options: { range?: string; ifRange?: string; signal?: AbortSignal },
) => Promise<Response>;

/** Not enough room within the budget (or on the disk) for what the manifests need. */
export class MirrorFullError extends Error {
  constructor(readonly neededBytes: number) {
    super(`the mirror has no room for ${neededBytes} more bytes within its budget`);
    this.name = 'MirrorFullError';
  }
}

/** Downloaded bytes that are not what the manifest names. */
export class IntegrityError extends Error {
  constructor(readonly sha256: string) {
    super(`downloaded content does not match sha256 ${sha256.slice(0, 12)}…`);
    this.name = 'IntegrityError';
  }
}

export interface MirrorOptions {
  /** Bytes the mirror may hold (complete entries, partial downloads and extracted releases). */
  budgetBytes: number;
  fetch: ContentFetch;
  now?: () => number;
}

interface EntryRow {
  key: string;
  kind: string;
  bytes: number;
  last_used: number;
}

const SHA256 = /^[a-f0-9]{64}$/;
/** Last-use times are written at most this often per entry (serving a video is many range reads). */
const TOUCH_EVERY_MS = 60_000;
/**
 * Downloaded chunks are gathered to this many bytes before one write: fetch hands over chunks of
 * tens of KB, and a write (and a stream hop) per chunk cost more than the transfer on a fast link.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;

/**
 * Streams a body to `file` (appending or from scratch), hashing as it goes: the web stream read
 * directly and written in batches, without Node stream adapters between (the mirror's hot path).
 */
async function writeHashed(
  body: ReadableStream<Uint8Array>,
  file: string,
  flags: 'a' | 'w',
  hash: crypto.Hash,
): Promise<void> {
  const handle = await fs.promises.open(file, flags);
  const reader = body.getReader();
  let batch: Uint8Array[] = [];
  let batched = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      hash.update(value);
      batch.push(value);
      batched += value.byteLength;
      if (batched >= WRITE_BATCH_BYTES) {
        await writeAll(handle, batch);
        batch = [];
        batched = 0;
      }
    }
    if (batched > 0) await writeAll(handle, batch);
  } catch (error) {
    // What arrived before the break is kept, so the next attempt resumes after it.
    if (batched > 0) await writeAll(handle, batch).catch(() => undefined);
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}

/** writev may write less than asked (a full disk, a signal): the rest goes again. */
export async function writeAll(handle: fs.promises.FileHandle, chunks: Uint8Array[]): Promise<void> {
  let pending = chunks;
  for (;;) {
    const total = pending.reduce((n, c) => n + c.byteLength, 0);
    const { bytesWritten } = await handle.writev(pending);
    if (bytesWritten >= total) return;
    let skip = bytesWritten;
    const rest: Uint8Array[] = [];
    for (const chunk of pending) {
      if (skip >= chunk.byteLength) {
        skip -= chunk.byteLength;
        continue;
      }
      rest.push(skip > 0 ? chunk.subarray(skip) : chunk);
      skip = 0;
    }
    pending = rest;
  }
}

export class Mirror {
  readonly blobDir: string;
  private readonly now: () => number;
  private readonly touched = new Map<string, number>();
  /** How entries that are not blobs are removed, by kind (release trees register theirs). */
  private readonly removers = new Map<string, (key: string) => void>();

  constructor(
    private readonly db: AgentDb,
    readonly dir: string,
    private readonly options: MirrorOptions,
  ) {
    this.blobDir = path.join(dir, 'blobs');
    fs.mkdirSync(this.blobDir, { recursive: true });
    this.now = options.now ?? Date.now;
  }

  get budgetBytes(): number {
    return this.options.budgetBytes;
  }

  filePath(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error('not a sha256');
    return path.join(this.blobDir, sha256);
  }

  private partPath(sha256: string): string {
    return `${this.filePath(sha256)}.part`;
  }

  /** Whether the blob is stored whole (its row and a file of its size). */
  has(sha256: string, bytes?: number): boolean {
    const row = this.db.prepare('SELECT bytes FROM entries WHERE key = ?').get(sha256) as { bytes: number } | undefined;
    if (!row || (bytes !== undefined && row.bytes !== bytes)) return false;
    try {
      return fs.statSync(this.filePath(sha256)).size === row.bytes;
    } catch {
      return false;
    }
  }

  /** Marks an entry used (LRU order), written at most once a minute per entry. */
  touch(key: string): void {
    const now = this.now();
    if (now - (this.touched.get(key) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(key, now);
    this.db.prepare('UPDATE entries SET last_used = ? WHERE key = ?').run(now, key);
  }

  /** Bytes held: complete entries plus partial downloads. */
  usage(): number {
    const rows = this.db.prepare('SELECT COALESCE(SUM(bytes), 0) AS n FROM entries').get() as { n: number };
    let partial = 0;
    for (const name of fs.readdirSync(this.blobDir)) {
      if (name.endsWith('.part')) partial += fs.statSync(path.join(this.blobDir, name)).size;
    }
    return rows.n + partial;
  }

  /** Records an entry that is not a blob (an extracted release tree; its kind's remover is set with onRemove). */
  register(key: string, kind: string, bytes: number): void {
    const now = this.now();
    this.db.sqlite
      .prepare(
        `INSERT INTO entries (key, kind, bytes, last_used, verified_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET bytes = excluded.bytes, last_used = excluded.last_used`,
      )
      .run(key, kind, bytes, now, now);
  }

  /** Tells the mirror how to remove entries of `kind` when it evicts them (set at start-up). */
  onRemove(kind: string, remove: (key: string) => void): void {
    this.removers.set(kind, remove);
  }

  private remove(row: Pick<EntryRow, 'key' | 'kind'>): void {
    const remover = this.removers.get(row.kind);
    if (remover) remover(row.key);
    else fs.rmSync(this.filePath(row.key), { force: true });
    this.db.prepare('DELETE FROM entries WHERE key = ?').run(row.key);
    this.touched.delete(row.key);
  }

  /**
   * Frees room for `needed` more bytes by evicting least recently used entries outside `keep`.
   * Throws MirrorFullError when even that is not enough: what the manifests need stays whole.
   */
  makeRoom(needed: number, keep: ReadonlySet<string>): void {
    let free = this.options.budgetBytes - this.usage();
    if (free >= needed) return;
    const rows = this.db.sqlite
      .prepare('SELECT key, kind, bytes, last_used FROM entries ORDER BY last_used, key')
      .all() as EntryRow[];
    for (const row of rows) {
      if (free >= needed) break;
      if (keep.has(row.key)) continue;
      this.remove(row);
      free += row.bytes;
    }
    // Partial downloads of content no manifest needs any more go too.
    for (const name of fs.readdirSync(this.blobDir)) {
      if (free >= needed) break;
      if (!name.endsWith('.part') || keep.has(name.slice(0, -5))) continue;
      const file = path.join(this.blobDir, name);
      free += fs.statSync(file).size;
      fs.rmSync(file, { force: true });
    }
    if (free < needed) throw new MirrorFullError(needed - free);
  }

  /**
   * Makes every item present and verified, one download after the other (a kiosk's uplink is one
   * pipe); `keep` names what must not be evicted meanwhile (the active and next manifests' needs).
   * A downloaded file lands (flushed to disk, renamed, recorded) while the next one downloads: the
   * flush is the disk's work, and waiting for it would leave the link idle.
   */
  async ensure(items: MirrorItem[], keep: ReadonlySet<string>, signal?: AbortSignal): Promise<void> {
    const unique = new Map(items.map((i) => [i.sha256, i]));
    let landing: Promise<void> | undefined;
    try {
      for (const item of unique.values()) {
        signal?.throwIfAborted();
        if (this.has(item.sha256, item.bytes)) {
          this.touch(item.sha256);
          continue;
        }
        const written = await this.fetchToPart(item, keep, signal);
        await landing; // one flush at a time, in order
        landing = this.land(item, written);
        landing.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      }
    } catch (error) {
      // The file already whole still lands before the failure is told.
      await landing?.catch(() => undefined);
      throw error;
    }
    await landing;
  }

  /** One item: resumed from its partial file when there is one, verified, renamed into place. */
  async download(item: MirrorItem, keep: ReadonlySet<string>, signal?: AbortSignal): Promise<void> {
    await this.land(item, await this.fetchToPart(item, keep, signal));
  }

  /** Fetches an item into its partial file (resuming what is there); returns the file's hash. */
  private async fetchToPart(item: MirrorItem, keep: ReadonlySet<string>, signal?: AbortSignal): Promise<crypto.Hash> {
    const part = this.partPath(item.sha256);
    let offset = 0;
    try {
      offset = fs.statSync(part).size;
    } catch {
      offset = 0;
    }
    if (offset > item.bytes) {
      fs.rmSync(part, { force: true });
      offset = 0;
    }
    this.makeRoom(item.bytes - offset, keep);

    if (offset > 0) {
      const hash = crypto.createHash('sha256');
      await pipeline(fs.createReadStream(part), hash, { end: false });
      if (offset === item.bytes) return hash;
      const response = await this.options.fetch(item.path, {
        range: `bytes=${offset}-`,
        ifRange: `"${item.sha256}"`,
        signal,
      });
      const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
      if (response.status === 206 && range && Number(range[1]) === offset)
        return this.writeBody(item, response, part, hash, 'a', keep);
      // The whole file came back (the server ignores ranges, or If-Range failed): start over with it.
      hash.destroy();
      if (response.status === 200) return this.writeBody(item, response, part, crypto.createHash('sha256'), 'w', keep);
      await response.body?.cancel();
    }
    const response = await this.options.fetch(item.path, { signal });
    return this.writeBody(item, response, part, crypto.createHash('sha256'), 'w', keep);
  }

  private async writeBody(
    item: MirrorItem,
    response: Response,
    part: string,
    hash: crypto.Hash,
    flags: 'a' | 'w',
    keep: ReadonlySet<string>,
  ): Promise<crypto.Hash> {
    if (response.body) {
      try {
        await writeHashed(response.body, part, flags, hash);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
          // The disk filled before the budget did: free what is not needed; the next pass resumes.
          this.evictAllBut(keep);
          throw new MirrorFullError(item.bytes - fs.statSync(part).size);
        }
        throw error;
      }
    }
    return hash;
  }

  /** Every entry and partial file outside `keep` goes. */
  private evictAllBut(keep: ReadonlySet<string>): void {
    try {
      this.makeRoom(Number.MAX_SAFE_INTEGER, keep);
    } catch (error) {
      if (!(error instanceof MirrorFullError)) throw error;
    }
  }

  /** Verifies the complete partial file, flushes it to disk and renames it into place. */
  private async land(item: MirrorItem, hash: crypto.Hash): Promise<void> {
    const part = this.partPath(item.sha256);
    const size = fs.statSync(part).size;
    const digest = hash.digest('hex');
    if (size !== item.bytes || digest !== item.sha256) {
      fs.rmSync(part, { force: true });
      throw new IntegrityError(item.sha256);
    }
    // On disk before it has its final name: after a power cut a named blob is whole.
    const handle = await fs.promises.open(part, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    fs.renameSync(part, this.filePath(item.sha256));
    const now = this.now();
    this.db.sqlite
      .prepare(
        `INSERT INTO entries (key, kind, bytes, last_used, verified_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET bytes = excluded.bytes, last_used = excluded.last_used, verified_at = excluded.verified_at`,
      )
      .run(item.sha256, item.kind, item.bytes, now, now);
  }

  /**
   * Re-hashes stored blobs (all, or `keys`) and drops any whose bytes are not their name or that
   * went missing; returns the dropped keys (the next ensure fetches them again).
   */
  async verify(keys?: Iterable<string>): Promise<string[]> {
    const wanted = keys ? new Set(keys) : undefined;
    const rows = (
      this.db.sqlite
        .prepare(`SELECT key, kind, bytes FROM entries WHERE kind IN ('media', 'package')`)
        .all() as EntryRow[]
    ).filter((r) => !wanted || wanted.has(r.key));
    const dropped: string[] = [];
    for (const row of rows) {
      const file = this.filePath(row.key);
      let ok = false;
      try {
        if (fs.statSync(file).size === row.bytes) {
          const hash = crypto.createHash('sha256');
          await pipeline(fs.createReadStream(file), hash);
          ok = hash.digest('hex') === row.key;
        }
      } catch {
        ok = false;
      }
      if (!ok) {
        this.remove(row);
        dropped.push(row.key);
      } else {
        this.db.prepare('UPDATE entries SET verified_at = ? WHERE key = ?').run(this.now(), row.key);
      }
    }
    return dropped;
  }

  /** A cheap check before serving: the file is there with its size; otherwise it is dropped (refetched later). */
  intact(sha256: string): boolean {
    if (this.has(sha256)) return true;
    const row = this.db.prepare('SELECT key, kind FROM entries WHERE key = ?').get(sha256) as EntryRow | undefined;
    if (row) this.remove(row);
    return false;
  }
}
