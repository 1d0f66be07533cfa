// Sending one byte range of a stored object as a response body, after its headers are set: media
// exports and protected runtime content. On a store that opens objects for positional reads (the
// local directory), a range up to SINGLE_READ_BYTES is one read and one socket write (headers and
// body together); a larger one goes in CHUNK_BYTES reads, the next read running while the socket
// drains the previous chunk. Chunk buffers are reused once the socket is done with them: fresh
// megabyte buffers cost page faults and garbage collection on every request. Other stores stream
// as before.
import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, OpenBlob } from '../blobs/blob-store';

/** Ranges up to this size are read whole and sent with their headers in one write. */
export const SINGLE_READ_BYTES = 1024 * 1024;
/** Larger ranges are read and written in chunks of this size. */
export const CHUNK_BYTES = 1024 * 1024;
/**
 * Ranges up to this size are read synchronously: from the page cache that takes tens of
 * microseconds, less than handing the read to the thread pool and back (the local store's small
 * writes make the same choice). A cold object costs the event loop one disk read of at most this.
 */
export const SYNC_READ_BYTES = 256 * 1024;
/**
 * Ranges below this get a buffer of their own (small allocations are cheap); others a pooled
 * chunk: a fresh 64 KiB buffer per range was a new off-heap allocation each, and garbage collection.
 */
const POOLED_FROM_BYTES = 16 * 1024;
/** Idle chunk buffers kept for reuse (16 MiB). */
const POOL_SIZE = 16;

const idleChunks: Buffer[] = [];

function takeChunk(length: number): Buffer {
  if (length < POOLED_FROM_BYTES) return Buffer.allocUnsafe(length);
  return (idleChunks.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES)).subarray(0, length);
}

/** Gives a chunk back once the socket no longer holds it (its write completed). */
function giveBack(chunk: Buffer): void {
  if (chunk.buffer.byteLength === CHUNK_BYTES && chunk.byteOffset === 0 && idleChunks.length < POOL_SIZE)
    idleChunks.push(Buffer.from(chunk.buffer, 0, CHUNK_BYTES));
}

/**
 * Hands the answer to nginx (MARQUEE_ACCEL_REDIRECT, D-334): after the headers are set and the
 * range was checked, an empty answer naming the object in `X-Accel-Redirect`; nginx then sends the
 * file (with the request's Range) under the headers the internal location copies from this answer.
 * Only when `prefix` is set, the store has a directory, the request came through a trusted proxy
 * (`viaProxy`: the header must never reach a client, it names a storage key) and it carries no
 * If-Range (nginx would compare it with an entity tag of its own). Returns whether it did.
 */
export function offloadToProxy(
  req: Request,
  res: Response,
  blobs: BlobStore,
  key: string,
  prefix: string | undefined,
  viaProxy: boolean,
): boolean {
  if (prefix === undefined || !blobs.directoryPath || !viaProxy || req.headers['if-range'] !== undefined) return false;
  res.statusCode = 200;
  // nginx computes these for the range it sends (and adds Accept-Ranges itself).
  res.removeHeader('Content-Range');
  res.removeHeader('Accept-Ranges');
  res.setHeader('Content-Length', '0');
  res.setHeader('X-Accel-Redirect', `${prefix}${blobs.directoryPath(key)}`);
  res.end();
  return true;
}

/**
 * Sends bytes `start`..`end` (inclusive) of `key` after the headers already set. `sent` is told of
 * every chunk handed to the socket. Resolves once the body was handed over, or once the client
 * went away mid-transfer (an ended answer, not a server error); rejects on a read error (before
 * the headers went out, that error still becomes a problem answer).
 */
export async function sendBlobRange(
  req: Request,
  res: Response,
  blobs: BlobStore,
  key: string,
  start: number,
  end: number,
  sent: (bytes: number) => void = () => {},
): Promise<void> {
  if (!blobs.open) return streamRange(req, res, blobs, key, start, end, sent);
  const blob = await blobs.open(key);
  try {
    const length = end - start + 1;
    if (length <= SINGLE_READ_BYTES) {
      const body =
        length <= SYNC_READ_BYTES && blob.readSync
          ? readFullySync(blob, start, length)
          : await readFully(blob, start, length);
      if (res.destroyed) return giveBack(body);
      sent(body.length);
      res.end(body, () => giveBack(body));
      return;
    }
    await sendChunks(res, blob, start, length, sent);
  } finally {
    blob.release();
  }
}

async function sendChunks(
  res: Response,
  blob: OpenBlob,
  start: number,
  length: number,
  sent: (bytes: number) => void,
): Promise<void> {
  let position = start;
  let left = length;
  let next: Promise<Buffer> | undefined = readFully(blob, position, Math.min(CHUNK_BYTES, left));
  try {
    while (next) {
      const chunk: Buffer = await next;
      next = undefined;
      position += chunk.length;
      left -= chunk.length;
      if (left > 0) next = readFully(blob, position, Math.min(CHUNK_BYTES, left));
      if (res.destroyed) return giveBack(chunk);
      sent(chunk.length);
      if (left === 0) {
        res.end(chunk, () => giveBack(chunk));
        return;
      }
      if (!res.write(chunk, (error) => error || giveBack(chunk)) && !(await drained(res))) return;
    }
  } finally {
    // The descriptor is released by the caller: no read may still be running on it then.
    if (next) await next.then(giveBack, () => {});
  }
}

/** Resolves true once the socket drained, false once the response closed (the client went away). */
function drained(res: Response): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const done = (value: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(value);
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

async function readFully(blob: OpenBlob, position: number, length: number): Promise<Buffer> {
  const buffer = takeChunk(length);
  let filled = 0;
  while (filled < length) {
    const read = await blob.read(buffer, filled, length - filled, position + filled);
    if (read === 0) throw new Error(`stored object ended ${length - filled} bytes early`);
    filled += read;
  }
  return buffer;
}

function readFullySync(blob: OpenBlob, position: number, length: number): Buffer {
  const buffer = takeChunk(length);
  let filled = 0;
  while (filled < length) {
    const read = blob.readSync!(buffer, filled, length - filled, position + filled);
    if (read === 0) throw new Error(`stored object ended ${length - filled} bytes early`);
    filled += read;
  }
  return buffer;
}

/** The general path: the store's stream, piped. */
async function streamRange(
  req: Request,
  res: Response,
  blobs: BlobStore,
  key: string,
  start: number,
  end: number,
  sent: (bytes: number) => void,
): Promise<void> {
  const source = blobs.read(key, { start, end });
  // Nothing goes out before the store has the first bytes: a read that fails at once (a bucket out
  // of reach, an object lost from it) still becomes a problem answer, not a cut connection.
  try {
    await once(source, 'readable');
  } catch (error) {
    source.destroy();
    throw error;
  }
  source.on('data', (chunk: Buffer) => sent(chunk.length));
  try {
    await pipeline(source, res);
  } catch (error) {
    // A client that hangs up mid-transfer is not a server error.
    if (!res.writableFinished && (req.destroyed || res.destroyed)) return;
    throw error;
  }
}
