// BlobStore on a local directory: temp file, fsync, rename, so a crash never leaves a torn object.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertBlobKey, BlobTooLargeError, type BlobInfo, type BlobStore, type ByteRange } from './blob-store';
import type { PutGrant, PutSigner, PutVerdict, SignedPut } from './signed-put';

export class LocalBlobStore implements BlobStore {
  private readonly tmpDir: string;

  /** `signer` lets the store hand out signed PUT URLs that the control plane receives for it. */
  constructor(
    readonly root: string,
    private readonly signer?: PutSigner,
  ) {
    this.tmpDir = path.join(root, '.tmp');
    fs.mkdirSync(this.tmpDir, { recursive: true });
    // Temp files of a crashed write are garbage: nothing was renamed into place.
    for (const name of fs.readdirSync(this.tmpDir)) fs.rmSync(path.join(this.tmpDir, name), { force: true, recursive: true });
  }

  /** Absolute path of a key; the key grammar keeps it beneath the root. */
  pathOf(key: string): string {
    assertBlobKey(key);
    return path.join(this.root, key);
  }

  async write(key: string, source: Readable | Buffer, options: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const target = this.pathOf(key);
    const temp = path.join(this.tmpDir, crypto.randomBytes(12).toString('hex'));
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (options.maxBytes !== undefined && bytes > options.maxBytes) return done(new BlobTooLargeError(options.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      // flush: fsync before the stream closes. (A FileHandle stream with autoClose: false never
      // releases its handle, so closing that handle afterwards waited forever.)
      await pipeline(Buffer.isBuffer(source) ? Readable.from([source]) : source, meter, fs.createWriteStream(temp, { flags: 'wx', mode: 0o644, flush: true }));
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.rename(temp, target);
    await syncDir(path.dirname(target));
    return { bytes, sha256: hash.digest('hex') };
  }

  read(key: string, range?: ByteRange): Readable {
    return fs.createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
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
  }

  async deletePrefix(prefix: string): Promise<void> {
    await fsp.rm(this.pathOf(prefix), { force: true, recursive: true });
  }

  presignPut(grant: PutGrant): SignedPut {
    if (!this.signer) throw new Error('this blob store was built without a signer for PUT URLs');
    return this.signer.sign(grant);
  }

  verifyPut(key: string, query: URLSearchParams, now: number): PutVerdict {
    if (!this.signer) return { ok: false, reason: 'signature' };
    return this.signer.verify(key, query, now);
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
