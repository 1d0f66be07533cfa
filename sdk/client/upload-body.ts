// Request bodies of uploads: bytes, a Blob, or a function that opens a fresh stream for each attempt;
// their SHA-256 by WebCrypto; and progress on bytes sent where the platform can stream a request
// body. Browser-safe: no Node APIs.
import type { Operation } from '../contract/operations';

/** A raw request body. A stream is opened by a function, so a retry can open it again. */
export type RawBody = Uint8Array | Blob | string | (() => ReadableStream<Uint8Array>);

export interface UploadProgress {
  /** `upload` while bytes are sent; `processing` while the server's operation runs. */
  stage: 'upload' | 'processing';
  /** Bytes handed to the network so far. */
  sent: number;
  /** Bytes in all, when known. */
  total: number | undefined;
  /** While processing: the operation as last polled. */
  operation?: Operation;
}

/** Chunks a byte body is cut into when it is streamed to count progress. */
const PROGRESS_CHUNK_BYTES = 64 * 1024;

/** The size of a body, when it can be known without reading it. */
export function bodySize(body: RawBody): number | undefined {
  if (typeof body === 'string') return new TextEncoder().encode(body).length;
  if (body instanceof Uint8Array) return body.byteLength;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size;
  return undefined;
}

/**
 * Whether fetch can stream a request body here. Node's fetch can (with `duplex: 'half'`); browsers
 * stream request bodies only over HTTP/2 and fail on HTTP/1.1, so there a body is sent whole and
 * progress is reported when it starts and when the answer arrives.
 */
export function canStreamRequestBodies(): boolean {
  const runtime = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof runtime?.versions?.node === 'string';
}

function streamOf(body: Exclude<RawBody, string>): ReadableStream<Uint8Array> {
  if (typeof body === 'function') return body();
  if (body instanceof Uint8Array) {
    let offset = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= body.byteLength) return controller.close();
        controller.enqueue(body.subarray(offset, offset + PROGRESS_CHUNK_BYTES));
        offset += PROGRESS_CHUNK_BYTES;
      },
    });
  }
  return body.stream() as ReadableStream<Uint8Array>;
}

export interface PreparedBody {
  body: BodyInit | undefined;
  /** Set when the body is a stream (fetch needs `duplex: 'half'` for it). */
  streamed: boolean;
  /** Called once the answer arrived: reports the whole body as sent when it was not counted. */
  finish(): void;
}

/** The body for one attempt, counting bytes into `onProgress` as fetch pulls them when it can. */
export function prepareBody(body: RawBody | undefined, onProgress?: (progress: UploadProgress) => void): PreparedBody {
  if (body === undefined) return { body: undefined, streamed: false, finish: () => undefined };
  const total = bodySize(body);
  const report = (sent: number) => onProgress?.({ stage: 'upload', sent, total });
  if (typeof body === 'string' || (typeof body !== 'function' && (!onProgress || !canStreamRequestBodies()))) {
    report(0);
    return { body: body as BodyInit, streamed: false, finish: () => report(total ?? 0) };
  }
  let sent = 0;
  report(0);
  const counted = streamOf(body).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(chunk);
        sent += chunk.byteLength;
        report(sent);
      },
    }),
  );
  return { body: counted, streamed: true, finish: () => undefined };
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Lowercase hex SHA-256 by WebCrypto. WebCrypto has no incremental digest, so a Blob is read whole
 * into memory; for large files in Node use `sdk/client/node-files`, which hashes a stream.
 */
export async function sha256Hex(body: Uint8Array | Blob): Promise<string> {
  const bytes = body instanceof Uint8Array ? body : new Uint8Array(await body.arrayBuffer());
  return hex(await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}
