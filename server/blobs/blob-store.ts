// Where bytes live: application release files and media objects. A local directory by default;
// an S3-compatible store implements the same interface later.
import type { Readable } from 'node:stream';
import type { PutGrant, PutVerdict, SignedPut } from './signed-put';

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
   */
  write(key: string, source: Readable | Buffer, options?: { maxBytes?: number }): Promise<BlobInfo>;
  read(key: string, range?: ByteRange): Readable;
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
  presignPut(grant: PutGrant): SignedPut;
  /** Only for a store that receives signed PUTs itself (the local one): checks one such request. */
  verifyPut?(key: string, query: URLSearchParams, now: number): PutVerdict;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
  }
}

/** Object keys are slash-separated segments of safe characters; nothing else reaches the disk. */
export function assertBlobKey(key: string): void {
  if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(key) || key.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  }
}
