// The mirror: every media item and application package the kiosk's active and next manifests
// name, on local disk by SHA-256. Downloads run a few at a time, resume with a byte range after an
// interruption (the partial file is kept), are verified against the manifest's digest and size
// (hashed on a worker thread as they are written, file-hash.ts), flushed, and land by atomic
// rename, so a file under its final name is always whole. A disk budget is kept by evicting the
// least recently used entries, never one the active or next manifest needs; a file found corrupt
// or missing is dropped and fetched again.
import fs from 'node:fs';
import path from 'node:path';
import type { AgentDb } from './agent-db';
import { FileHasher, type HashStream } from './file-hash';

export interface MirrorItem {
  /** The content's SHA-256 (hex): its name on disk. */
  sha256: string;
  bytes: number;
  /** Upstream path to fetch it from (a manifest-bound content route). */
  path: string;
  kind: 'media' | 'package';
}

/** An upstream answer to a content request: its status, its headers (lower-case names) and its body. */
export interface ContentResponse {
  status: number;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * Writes the body into `file` (appending or from scratch), and every byte it writes, in order,
   * into `hash` if given. On a failure what reached the disk stays: the file is always a prefix of the
   * content, which the next attempt resumes after. A body longer than `maxBytes` fails with
   * BodyTooLongError as soon as it is, with nothing past `maxBytes` written.
   */
  saveTo(file: string, flags: 'a' | 'w', hash?: HashStream, maxBytes?: number): Promise<void>;
  /** Leaves the body unread (its transfer is stopped). */
  discard(): void;
}

/** Fetches an upstream content path; `range` asks for the rest of a partial file. */
export type ContentFetch = (
  path: string,
  options: { range?: string; ifRange?: string; signal?: AbortSignal },
) => Promise<ContentResponse>;

/** Not enough room within the budget (or on the disk) for what the manifests need. */
export class MirrorFullError extends Error {
  constructor(readonly neededBytes: number) {
    super(`the mirror has no room for ${neededBytes} more bytes within its budget`);
    this.name = 'MirrorFullError';
  }
}

/** An answer's body runs past the size of the content asked for (a captive portal, a broken proxy). */
export class BodyTooLongError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer's body is longer than the ${maxBytes} bytes asked for`);
    this.name = 'BodyTooLongError';
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
  /** Hashes whole files off the main thread (default: HASH_WORKERS workers). */
  hasher?: FileHasher;
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
 * Downloads under way at once. One transfer leaves the link idle between requests; two or three
 * keep it busy. More would only split the same uplink further.
 */
export const MIRROR_CONCURRENCY = 3;
/**
 * Hashing threads. One keeps up with the downloads (SHA-256 runs near 1 GB/s a core; each chunk is
 * hashed once written, D-384) and never holds a download back; each further thread cost its
 * start-up (tens of milliseconds of CPU) on the same cores the downloads need, for no gain (D-380).
 */
export const HASH_WORKERS = 1;

async function flush(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function header(response: ContentResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export class Mirror {
  readonly blobDir: string;
  private readonly now: () => number;
  private readonly touched = new Map<string, number>();
  /** How entries that are not blobs are removed, by kind (release trees register theirs). */
  private readonly removers = new Map<string, (key: string) => void>();
  /**
   * Downloads under way, by sha256, with their full size: each counts against the budget at its
   * final size from the moment it starts (its partial file is not counted again), so downloads
   * running side by side never promise the same free bytes twice.
   */
  private readonly downloading = new Map<string, number>();
  private readonly hasher: FileHasher;
  /**
   * Blobs this process hashed to their name (landed or verified): served without hashing again.
   * Any other is hashed once before it is first served (servable).
   */
  private readonly hashedThisRun = new Set<string>();
  private readonly checking = new Map<string, Promise<boolean>>();

  constructor(
    private readonly db: AgentDb,
    readonly dir: string,
    private readonly options: MirrorOptions,
  ) {
    this.blobDir = path.join(dir, 'blobs');
    fs.mkdirSync(this.blobDir, { recursive: true });
    this.now = options.now ?? Date.now;
    this.hasher = options.hasher ?? new FileHasher(HASH_WORKERS);
  }

  /** Ends the hashing workers (the agent stops). */
  close(): Promise<void> {
    return this.hasher.close();
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
    this.note('UPDATE entries SET last_used = ? WHERE key = ?', now, key);
  }

  /**
   * A write of bookkeeping only (last use, last verification), made while serving: a disk too full
   * for it (SQLITE_FULL) must not keep a whole file from glass, so it is skipped when it fails.
   */
  private note(sql: string, ...values: unknown[]): void {
    try {
      this.db.prepare(sql).run(...values);
    } catch {
      // Next time, or never: LRU order and the verification time are hints.
    }
  }

  /**
   * Bytes held or promised: complete entries, partial files, and each download under way at its
   * full size (what it will hold once done).
   */
  usage(): number {
    const rows = this.db.prepare('SELECT COALESCE(SUM(bytes), 0) AS n FROM entries').get() as { n: number };
    let partial = 0;
    for (const name of fs.readdirSync(this.blobDir)) {
      if (name.endsWith('.part') && !this.downloading.has(name.slice(0, -5)))
        partial += fs.statSync(path.join(this.blobDir, name)).size;
    }
    let promised = 0;
    for (const bytes of this.downloading.values()) promised += bytes;
    return rows.n + partial + promised;
  }

  /** Records an entry that is not a blob (an extracted release tree; its kind's remover is set with onRemove). */
  register(key: string, kind: string, bytes: number): void {
    const now = this.now();
    this.db
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
    this.hashedThisRun.delete(row.key);
  }

  /**
   * Frees room for `needed` more bytes by evicting least recently used entries outside `keep`.
   * Throws MirrorFullError when even that is not enough: what the manifests need stays whole.
   */
  makeRoom(needed: number, keep: ReadonlySet<string>): void {
    let free = this.options.budgetBytes - this.usage();
    if (free >= needed) return;
    const rows = this.db
      .prepare('SELECT key, kind, bytes, last_used FROM entries ORDER BY last_used, key')
      .all() as EntryRow[];
    for (const row of rows) {
      if (free >= needed) break;
      if (keep.has(row.key)) continue;
      this.remove(row);
      free += row.bytes;
    }
    // Partial downloads of content no manifest needs any more go too (never one under way).
    for (const name of fs.readdirSync(this.blobDir)) {
      if (free >= needed) break;
      const key = name.slice(0, -5);
      if (!name.endsWith('.part') || keep.has(key) || this.downloading.has(key)) continue;
      const file = path.join(this.blobDir, name);
      free += fs.statSync(file).size;
      fs.rmSync(file, { force: true });
    }
    if (free < needed) throw new MirrorFullError(needed - free);
  }

  /**
   * Makes every item present and verified, up to MIRROR_CONCURRENCY downloads at once; `keep`
   * names what must not be evicted meanwhile (the active and next manifests' needs). Each download
   * lands (verified, flushed to disk, renamed, recorded) as soon as it is whole, while the others
   * go on and its own lane already fetches the next item. After a failure no further download
   * starts; those under way finish (their bytes are kept either way) and every landing under way
   * ends, then the first failure is thrown.
   */
  async ensure(items: MirrorItem[], keep: ReadonlySet<string>, signal?: AbortSignal): Promise<void> {
    const queue = [...new Map(items.map((i) => [i.sha256, i])).values()];
    let failure: { error: unknown } | undefined;
    const landings: Promise<void>[] = [];
    const worker = async () => {
      for (let item = queue.shift(); item && !failure; item = queue.shift()) {
        try {
          signal?.throwIfAborted();
          if (this.has(item.sha256, item.bytes)) this.touch(item.sha256);
          else {
            const { landed } = await this.fetchItem(item, keep, signal);
            landings.push(landed.catch((error) => void (failure ??= { error })));
          }
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(MIRROR_CONCURRENCY, queue.length) }, worker));
    await Promise.all(landings);
    if (failure) throw failure.error;
  }

  /** One item: resumed from its partial file when there is one, verified, renamed into place. */
  async download(item: MirrorItem, keep: ReadonlySet<string>, signal?: AbortSignal): Promise<void> {
    await (await this.fetchItem(item, keep, signal)).landed;
  }

  /**
   * Fetches an item's bytes (resumed from its partial file when there is one); resolves once they
   * are on disk with the promise of its landing (verified, flushed, renamed), so the caller may
   * start the next download meanwhile.
   */
  private async fetchItem(
    item: MirrorItem,
    keep: ReadonlySet<string>,
    signal?: AbortSignal,
  ): Promise<{ landed: Promise<void> }> {
    if (this.downloading.has(item.sha256)) throw new Error(`${item.sha256.slice(0, 12)}… is downloading already`);
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
    // Room for the rest, then the whole item counts as promised (no await between the two).
    this.makeRoom(item.bytes - offset, keep);
    this.downloading.set(item.sha256, item.bytes);
    let hash: HashStream | undefined;
    try {
      hash = await this.fetchToPart(item, part, offset, keep, signal);
    } catch (error) {
      this.downloading.delete(item.sha256);
      throw error;
    }
    return { landed: this.land(item, hash).finally(() => this.downloading.delete(item.sha256)) };
  }

  /**
   * Fetches an item into its partial file, resuming after the `offset` bytes it holds; answers the
   * hash of the whole file as written (none when the file was whole already).
   */
  private async fetchToPart(
    item: MirrorItem,
    part: string,
    offset: number,
    keep: ReadonlySet<string>,
    signal?: AbortSignal,
  ): Promise<HashStream | undefined> {
    if (offset === item.bytes) return undefined;
    if (offset > 0) {
      const response = await this.options.fetch(item.path, {
        range: `bytes=${offset}-`,
        ifRange: `"${item.sha256}"`,
        signal,
      });
      const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header(response, 'content-range') ?? '');
      if (response.status === 206 && range && Number(range[1]) === offset)
        return this.receive(item, response, part, offset, keep);
      // The whole file came back (the server ignores ranges, or If-Range failed): start over with it.
      if (response.status === 200) return this.receive(item, response, part, 0, keep);
      response.discard();
    }
    const response = await this.options.fetch(item.path, { signal });
    return this.receive(item, response, part, 0, keep);
  }

  /** Writes the body after the first `offset` bytes of the partial file (from scratch at 0), hashing the whole. */
  private async receive(
    item: MirrorItem,
    response: ContentResponse,
    part: string,
    offset: number,
    keep: ReadonlySet<string>,
  ): Promise<HashStream> {
    const hash = this.hasher.stream(part, offset);
    try {
      // Never more than the item's size: a longer body is not this content, however long it runs.
      await response.saveTo(part, offset > 0 ? 'a' : 'w', hash, item.bytes - offset);
      return hash;
    } catch (error) {
      hash.drop();
      if (error instanceof BodyTooLongError) {
        fs.rmSync(part, { force: true });
        throw new IntegrityError(item.sha256);
      }
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
        // The disk filled before the budget did: free what is not needed; the next pass resumes.
        this.evictAllBut(keep);
        throw new MirrorFullError(item.bytes - fs.statSync(part).size);
      }
      throw error;
    }
  }

  /** Every entry and partial file goes (the screen it was mirrored for is no longer this kiosk's). */
  forgetAll(): void {
    this.evictAllBut(new Set());
  }

  /** Every entry and partial file outside `keep` goes. */
  private evictAllBut(keep: ReadonlySet<string>): void {
    try {
      this.makeRoom(Number.MAX_SAFE_INTEGER, keep);
    } catch (error) {
      if (!(error instanceof MirrorFullError)) throw error;
    }
  }

  /**
   * Verifies the complete partial file (by the hash of what was written, or else by reading it),
   * flushes it to disk and renames it into place.
   */
  private async land(item: MirrorItem, hash?: HashStream): Promise<void> {
    const part = this.partPath(item.sha256);
    const size = fs.statSync(part).size;
    if (size !== item.bytes) hash?.drop();
    // Hashed (on a worker) while flushed: on disk before the blob has its final name, so after a
    // power cut a named blob is whole.
    const digest =
      size === item.bytes
        ? (await Promise.all([hash ? hash.digest() : this.hasher.sha256(part), flush(part)]))[0]
        : undefined;
    if (digest !== item.sha256) {
      fs.rmSync(part, { force: true });
      throw new IntegrityError(item.sha256);
    }
    fs.renameSync(part, this.filePath(item.sha256));
    this.hashedThisRun.add(item.sha256);
    const now = this.now();
    // Not flushed on its own: lost in a power cut, the file is only fetched again (it is found by
    // its row); the manifest that needs it is committed with a flush, which takes this row along.
    this.db.relaxed(() =>
      this.db
        .prepare(
          `INSERT INTO entries (key, kind, bytes, last_used, verified_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET bytes = excluded.bytes, last_used = excluded.last_used, verified_at = excluded.verified_at`,
        )
        .run(item.sha256, item.kind, item.bytes, now, now),
    );
  }

  /**
   * Re-hashes stored blobs (all, or `keys`) and drops any whose bytes are not their name or that
   * went missing; returns the dropped keys (the next ensure fetches them again).
   */
  async verify(keys?: Iterable<string>): Promise<string[]> {
    const wanted = keys ? new Set(keys) : undefined;
    const rows = (
      this.db.prepare(`SELECT key, kind, bytes FROM entries WHERE kind IN ('media', 'package')`).all() as EntryRow[]
    ).filter((r) => !wanted || wanted.has(r.key));
    const dropped: string[] = [];
    for (const row of rows) {
      const file = this.filePath(row.key);
      let ok = false;
      try {
        ok = fs.statSync(file).size === row.bytes && (await this.hasher.sha256(file)) === row.key;
      } catch {
        ok = false;
      }
      if (!ok) {
        this.remove(row);
        dropped.push(row.key);
      } else {
        this.hashedThisRun.add(row.key);
        this.note('UPDATE entries SET verified_at = ? WHERE key = ?', this.now(), row.key);
      }
    }
    return dropped;
  }

  /**
   * Whether the blob may be served to the renderer: intact, and its bytes hashed to its name once
   * by this process. The renderer keeps what it is given for good (its HTTP cache and service
   * worker hold media by id), so bytes that rotted on disk while the agent was down must never
   * leave; a blob that fails is dropped like one verify finds (fetched again on the next refresh).
   */
  servable(sha256: string): Promise<boolean> {
    if (!this.intact(sha256)) return Promise.resolve(false);
    if (this.hashedThisRun.has(sha256)) return Promise.resolve(true);
    let check = this.checking.get(sha256);
    if (!check) {
      check = this.verify([sha256])
        .then((dropped) => dropped.length === 0 && this.hashedThisRun.has(sha256))
        .finally(() => this.checking.delete(sha256));
      this.checking.set(sha256, check);
    }
    return check;
  }

  /** A cheap check before serving: the file is there with its size; otherwise it is dropped (refetched later). */
  intact(sha256: string): boolean {
    if (this.has(sha256)) return true;
    const row = this.db.prepare('SELECT key, kind FROM entries WHERE key = ?').get(sha256) as EntryRow | undefined;
    if (row) this.remove(row);
    return false;
  }
}
