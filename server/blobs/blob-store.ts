// Where bytes live: application release files and media objects. A local directory by default
// (local-blob-store.ts); an S3-compatible bucket when MARQUEE_BLOB_URL names one (s3-blob-store.ts).
import type { Readable } from 'node:stream';

/** What one signed PUT may write. */
export interface PutGrant {
  key: string;
  bytes: number;
  contentType: string;
  /** Milliseconds since the epoch; the PUT must start before it. */
  expiresAt: number;
}

/** Send `method` to `url` with every header verbatim. URL and headers are credentials. */
export interface SignedPut {
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expiresAt: number;
}

export type PutVerdict = { ok: true; grant: PutGrant } | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

export interface BlobInfo {
  bytes: number;
  sha256: string;
}

export interface ByteRange {
  /** Inclusive first byte. */
  start: number;
  /** Inclusive last byte. */
  end: number;
}

export interface BlobStore {
  /**
   * Streams `source` into `key` atomically: readers see either nothing or the whole object.
   * Rejects with BlobTooLargeError (leaving nothing behind) once more than `maxBytes` arrive.
   * With `exclusive`, an existing object is never replaced: the write rejects with BlobExistsError
   * and leaves it as it was (an S3-compatible store sends `If-None-Match: *`).
   */
  write(
    key: string,
    source: Readable | Buffer,
    options?: { maxBytes?: number; exclusive?: boolean },
  ): Promise<BlobInfo>;
  read(key: string, range?: ByteRange): Readable;
  /**
   * Optional fast path for delivery (a local directory): the object opened for positional reads,
   * its descriptor shared by concurrent requests and kept open between them. Release it once done.
   * Rejects when the object is absent.
   */
  open?(key: string): Promise<OpenBlob>;
  /**
   * Optional: the object's path below the store's directory, for a proxy that serves that directory
   * itself (nginx `X-Accel-Redirect`); undefined for a store that has no directory.
   */
  directoryPath?(key: string): string;
  /**
   * Optional: the object as a file on this machine (a local directory), for a reader that takes a
   * file and reads only the parts it needs (an image's header); undefined for a store without files.
   */
  localFile?(key: string): string;
  /** Size of the object, or undefined when absent. */
  stat(key: string): Promise<{ bytes: number } | undefined>;
  delete(key: string): Promise<void>;
  /** Removes every object under `prefix/`. */
  deletePrefix(prefix: string): Promise<void>;
  /** Cheap health probe for readiness. */
  writable(): Promise<boolean>;
  /**
   * Authorizes one PUT of exactly `grant.bytes` bytes of `grant.contentType` to `grant.key`, straight
   * to storage, until `grant.expiresAt` (an S3-compatible store returns a presigned PUT URL).
   */
  presignPut(grant: PutGrant): Promise<SignedPut>;
  /**
   * Optional: the origin signed PUTs go to when it is not this server's (a bucket), once known. A
   * page that sends them from a browser (the dashboard) must allow it in its `connect-src`.
   */
  readonly uploadOrigin?: string;
  /** Only for a store that receives signed PUTs itself (the local one): checks one such request. */
  verifyPut?(key: string, query: URLSearchParams, now: number): PutVerdict;

  // Trees: objects written one by one while an upload streams, then published together under one
  // prefix (an application release). Staging is durable, so a restart can still publish it. An
  // S3-compatible store stages under a `.staging/<name>/` key prefix and publishes by copying;
  // readers never see a partial tree because the database marks a release ready only afterwards.

  /** Opens staging area `name` (the blob-key grammar), discarding whatever it held before. */
  stageTree(name: string, options?: TreeOptions): Promise<TreeStaging>;
  /** Whether staging area `name` exists. */
  hasStagedTree(name: string): Promise<boolean>;
  /** Moves staged tree `name` to `prefix/…`, replacing anything there; the staging area is gone afterwards. */
  publishTree(name: string, prefix: string, options?: TreeOptions): Promise<void>;
  discardTree(name: string): Promise<void>;
  /** Names of every staging area (to sweep those whose upload ended). */
  stagedTrees(): Promise<string[]>;
}

/** An object opened for positional reads (BlobStore.open). */
export interface OpenBlob {
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`; resolves with the count read. */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** The same, blocking: for a few dozen KiB of a local file, cheaper than a thread-pool round trip. */
  readSync?(buffer: Buffer, offset: number, length: number, position: number): number;
  /** Ends this use; the descriptor closes once no use holds it and it is stale, idle or evicted. */
  release(): void;
}

export interface TreeOptions {
  /** fsync every object and directory (power-loss durability); off, a process crash still loses nothing written. */
  durable?: boolean;
}

export interface TreeStaging {
  /**
   * Adds object `name` (blob-key grammar, relative to the tree) with the `bytes` that `data` yields.
   * Resolves once `data` has been read; the write may still be under way until finish().
   */
  add(name: string, data: AsyncIterable<Uint8Array>, bytes: number): Promise<void>;
  /** Waits for every write; rejects with the first write error. */
  finish(): Promise<void>;
  /** Waits for writes in flight, then removes the staging area. */
  abort(): Promise<void>;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
  }
}

export class BlobExistsError extends Error {
  constructor(readonly key: string) {
    super(`blob ${key} already exists`);
  }
}

/** Object keys are slash-separated segments of safe characters; nothing else reaches the disk. */
export function assertBlobKey(key: string): void {
  if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(key) || key.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  }
}

/**
 * The writes of a tree being staged: small files written without waiting for each, at most `width`
 * at a time (the first failure fails the tree, at the next add or at finish), and large ones that
 * their add awaits itself, which an abort must still wait for.
 */
export class WritesInFlight {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly awaited = new Set<Promise<void>>();
  private failure: unknown;

  constructor(private readonly width: number) {}

  async start(write: () => Promise<void>): Promise<void> {
    this.throwIfFailed();
    while (this.inFlight.size >= this.width) await Promise.race(this.inFlight);
    this.throwIfFailed();
    const started: Promise<void> = write()
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => this.inFlight.delete(started));
    this.inFlight.add(started);
  }

  /** Waits for every write; throws the first failure. */
  async finish(): Promise<void> {
    await Promise.all(this.inFlight);
    this.throwIfFailed();
  }

  /**
   * A write its caller awaits (a large object stored as its bytes are read). The add resolves once
   * its data was read, which may be before the store has the object: an abort that did not wait
   * for it removed the tree, and the object was stored into the removed tree afterwards.
   */
  async track(write: Promise<void>): Promise<void> {
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.awaited.add(settled);
    try {
      await write;
    } finally {
      this.awaited.delete(settled);
    }
  }

  /** Waits for every write, failed or not (before the tree is thrown away). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight, ...this.awaited]);
  }

  throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}

/** A small file's bytes, gathered into one buffer. */
export async function collect(data: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of data) chunks.push(chunk);
  return chunks.length === 1
    ? Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength)
    : Buffer.concat(chunks);
}
