// BlobStore on a local directory: temp file, fsync, rename, so a crash never leaves a torn object.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertBlobKey,
  collect,
  WritesInFlight,
  BlobExistsError,
  BlobTooLargeError,
  type BlobInfo,
  type BlobStore,
  type ByteRange,
  type OpenBlob,
  type PutGrant,
  type PutVerdict,
  type SignedPut,
  type TreeOptions,
  type TreeStaging,
} from './blob-store';
import { DescriptorCache } from './descriptor-cache';
import type { PutSigner } from './signed-put';

/** Staged trees live here, beside `.tmp` but kept across restarts so accepted uploads can still publish. */
const STAGING = '.staging';
/** Files up to this size are read whole and written in one call. */
const SMALL_FILE_BYTES = 256 * 1024;
/** Durable small-file writes (each with its fsync) in flight at once: about 4 MiB per staging tree. */
const WRITES_IN_FLIGHT = 16;

/** Temp files of writes in progress, one directory per process that shares the blob directory. */
const TEMP = '.tmp';
/**
 * A temp file untouched this long is a write no process will finish (a replica gone for good, or a
 * layout before per-process directories): bodies must keep moving (60 s idle, D-011).
 */
const ABANDONED_TEMP_MS = 24 * 60 * 60_000;

function removeAbandonedTemps(dir: string, before: number): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    try {
      if (entry.isDirectory()) removeAbandonedTemps(at, before);
      else if (fs.statSync(at).mtimeMs < before) fs.rmSync(at, { force: true });
    } catch (error) {
      // Renamed into place or removed by its writer meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

export class LocalBlobStore implements BlobStore {
  private readonly tmpDir: string;
  private readonly descriptors = new DescriptorCache();

  /**
   * `signer` lets the store hand out signed PUT URLs that the control plane receives for it. `owner`
   * names this process's temp files among those of other replicas sharing the directory (its worker
   * id, which a restart keeps).
   */
  constructor(
    readonly root: string,
    private readonly signer?: PutSigner,
    owner = 'local',
  ) {
    const temps = path.join(root, TEMP);
    this.tmpDir = path.join(temps, owner);
    // This process's temp files are from its own crashed writes: nothing was renamed into place.
    fs.rmSync(this.tmpDir, { force: true, recursive: true });
    fs.mkdirSync(this.tmpDir, { recursive: true });
    // Another replica's may be writes in progress: only those untouched for a day are abandoned.
    removeAbandonedTemps(temps, Date.now() - ABANDONED_TEMP_MS);
  }

  /** Absolute path of a key; the key grammar keeps it beneath the root. */
  pathOf(key: string): string {
    assertBlobKey(key);
    return path.join(this.root, key);
  }

  async write(
    key: string,
    source: Readable | Buffer,
    options: { maxBytes?: number; exclusive?: boolean } = {},
  ): Promise<BlobInfo> {
    const target = this.pathOf(key);
    const temp = path.join(this.tmpDir, crypto.randomBytes(12).toString('hex'));
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (options.maxBytes !== undefined && bytes > options.maxBytes)
          return done(new BlobTooLargeError(options.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      // flush: fsync before the stream closes. (A FileHandle stream with autoClose: false never
      // releases its handle, so closing that handle afterwards waited forever.)
      await pipeline(
        Buffer.isBuffer(source) ? Readable.from([source]) : source,
        meter,
        fs.createWriteStream(temp, { flags: 'wx', mode: 0o644, flush: true }),
      );
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
    await fsp.mkdir(path.dirname(target), { recursive: true });
    if (options.exclusive) {
      // link(2) fails with EEXIST instead of replacing the target, as rename(2) would.
      try {
        await fsp.link(temp, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BlobExistsError(key);
        throw error;
      } finally {
        await fsp.rm(temp, { force: true });
      }
    } else {
      await fsp.rename(temp, target);
      this.descriptors.invalidate(key);
    }
    await syncDir(path.dirname(target));
    return { bytes, sha256: hash.digest('hex') };
  }

  read(key: string, range?: ByteRange): Readable {
    return fs.createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
  }

  open(key: string): Promise<OpenBlob> {
    return this.descriptors.acquire(key, this.pathOf(key));
  }

  directoryPath(key: string): string {
    assertBlobKey(key);
    return key;
  }

  localFile(key: string): string {
    return this.pathOf(key);
  }

  async stat(key: string): Promise<{ bytes: number } | undefined> {
    try {
      const s = await fsp.stat(this.pathOf(key));
      return s.isFile() ? { bytes: s.size } : undefined;
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
    this.descriptors.invalidate(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    await fsp.rm(this.pathOf(prefix), { force: true, recursive: true });
    this.descriptors.invalidate(prefix);
  }

  async presignPut(grant: PutGrant): Promise<SignedPut> {
    if (!this.signer) throw new Error('this blob store was built without a signer for PUT URLs');
    return this.signer.sign(grant);
  }

  verifyPut(key: string, query: URLSearchParams, now: number): PutVerdict {
    if (!this.signer) return { ok: false, reason: 'signature' };
    return this.signer.verify(key, query, now);
  }

  private stagingPath(name: string): string {
    if (name.includes('/')) throw new Error(`invalid staging name ${JSON.stringify(name)}`);
    return this.pathOf(`${STAGING}/${name}`);
  }

  async stageTree(name: string, options: TreeOptions = {}): Promise<TreeStaging> {
    const dir = this.stagingPath(name);
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.mkdir(dir, { recursive: true });
    return new LocalTreeStaging(dir, options.durable ?? false);
  }

  async hasStagedTree(name: string): Promise<boolean> {
    try {
      return (await fsp.stat(this.stagingPath(name))).isDirectory();
    } catch {
      return false;
    }
  }

  async publishTree(name: string, prefix: string, options: TreeOptions = {}): Promise<void> {
    const from = this.stagingPath(name);
    const to = this.pathOf(prefix);
    await fsp.mkdir(path.dirname(to), { recursive: true });
    await fsp.rm(to, { recursive: true, force: true });
    await fsp.rename(from, to);
    this.descriptors.invalidate(prefix);
    if (options.durable) {
      await syncDir(path.dirname(to));
      await syncDir(path.dirname(from));
    }
  }

  async discardTree(name: string): Promise<void> {
    await fsp.rm(this.stagingPath(name), { recursive: true, force: true });
  }

  async stagedTrees(): Promise<string[]> {
    try {
      return await fsp.readdir(path.join(this.root, STAGING));
    } catch {
      return [];
    }
  }

  async writable(): Promise<boolean> {
    try {
      await fsp.access(this.tmpDir, fs.constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

class LocalTreeStaging implements TreeStaging {
  private readonly writes = new WritesInFlight(WRITES_IN_FLIGHT);

  constructor(
    private readonly dir: string,
    private readonly durable: boolean,
  ) {}

  async add(name: string, data: AsyncIterable<Uint8Array>, bytes: number): Promise<void> {
    assertBlobKey(name);
    this.writes.throwIfFailed();
    const file = path.join(this.dir, name);
    if (name.includes('/')) await fsp.mkdir(path.dirname(file), { recursive: true });
    if (bytes > SMALL_FILE_BYTES) {
      await this.writes.track(
        pipeline(Readable.from(data), fs.createWriteStream(file, { flags: 'wx', flush: this.durable })),
      );
      return;
    }
    const buffer = await collect(data);
    if (!this.durable) {
      // A page-cache write of a small file takes microseconds; a thread-pool round trip for each of
      // open, write and close costs more than that, and thousands of files add up to seconds.
      fs.writeFileSync(file, buffer, { flag: 'wx' });
      return;
    }
    await this.writes.start(() => fsp.writeFile(file, buffer, { flag: 'wx', flush: true }));
  }

  async finish(): Promise<void> {
    await this.writes.finish();
    if (this.durable) await syncDir(this.dir);
  }

  async abort(): Promise<void> {
    await this.writes.settle();
    await fsp.rm(this.dir, { recursive: true, force: true });
  }
}
