// Streams an uploaded archive once: hashes the gzip bytes as they arrive, inflates them, parses
// the tar with tar-stream and applies archive-rules.ts to every entry before its bytes are read,
// handing each accepted file to a sink. It stops the moment a rule fails (a gzip bomb is cut off
// at the bound its declaration allows), so memory stays bounded whatever the archive holds.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import { RELEASE_ENTRY, UPLOAD_HEADERS } from '../../sdk/contract/applications';
import { BodyStalled } from '../http/body-progress';
import { ProblemError } from '../problem';
import {
  ArchiveTotals,
  COMPRESSED_BYTES_MAX,
  EndOfArchive,
  ReleasePaths,
  archiveRejection,
  entryKind,
  entryPath,
  inflatedBytesBound,
  missingEntry,
  paddedDataBytes,
} from './archive-rules';
import type { ArchiveDeclaration } from './upload-headers';

export interface ReleaseFile {
  /** NFC archive path, `/`-separated. */
  path: string;
  /** Storage name of the file's bytes within the release. */
  ordinal: number;
  bytes: number;
}

/** Where accepted files go while the archive streams (a staged release tree). */
export interface FileSink {
  /** Stores file `ordinal`; resolves once `data` has been read (the write itself may still be under way). */
  add(ordinal: number, data: AsyncIterable<Uint8Array>, bytes: number): Promise<void>;
}

export interface ScanResult {
  files: ReleaseFile[];
  compressedBytes: number;
  expandedBytes: number;
}

/** The request body stopped before its end (the client went away or stalled). Not the archive's fault. */
export class UploadInterrupted extends Error {
  constructor(detail = 'the request body ended before the archive was complete') {
    super(detail);
  }
}

export function scanArchive(
  source: Readable,
  declared: ArchiveDeclaration,
  sink: FileSink,
  signal?: AbortSignal,
): Promise<ScanResult> {
  return new Promise<ScanResult>((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    const gunzip = zlib.createGunzip({ chunkSize: 64 * 1024 });
    const extract = tarExtract();
    const inflateBound = inflatedBytesBound(declared);
    const paths = new ReleasePaths();
    const totals = new ArchiveTotals(declared);
    const endOfArchive = new EndOfArchive();
    const files: ReleaseFile[] = [];
    let compressed = 0;
    let inflated = 0;
    let failure: unknown;
    let sourceEnded = false;
    let pending = 2; // the body has ended (hash complete) and the tar has been read to its end

    const onData = (chunk: Buffer) => {
      compressed += chunk.length;
      if (compressed > COMPRESSED_BYTES_MAX) {
        fail(archiveRejection('compressed_too_large', `the archive is larger than ${COMPRESSED_BYTES_MAX} bytes`));
        return;
      }
      hash.update(chunk);
      if (!gunzip.write(chunk)) {
        source.pause();
        gunzip.once('drain', () => failure === undefined && source.resume());
      }
    };
    const onEnd = () => {
      sourceEnded = true;
      gunzip.end();
      settled();
    };
    const onSourceError = (error: unknown) =>
      fail(new UploadInterrupted(error instanceof BodyStalled ? `${error.message}; nothing was accepted` : undefined));
    const onClose = () => {
      if (!sourceEnded) fail(new UploadInterrupted());
    };
    const detachSource = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onSourceError);
      source.off('close', onClose);
      // Nothing more is read; the HTTP server discards the rest once the answer is sent.
      source.pause();
    };
    const onAbort = () => fail(signal!.reason ?? new Error('aborted'));

    function fail(error: unknown): void {
      if (failure !== undefined) return;
      failure = error;
      detachSource();
      signal?.removeEventListener('abort', onAbort);
      gunzip.destroy();
      extract.destroy();
      reject(error);
    }

    function settled(): void {
      if (--pending > 0 || failure !== undefined) return;
      signal?.removeEventListener('abort', onAbort);
      detachSource();
      const sha256 = hash.digest('hex');
      const mismatch =
        sha256 !== declared.sha256
          ? archiveRejection(
              'sha256_mismatch',
              `the archive's SHA-256 is ${sha256}, not the ${declared.sha256} declared in ${UPLOAD_HEADERS.archiveSha256}`,
              UPLOAD_HEADERS.archiveSha256,
            )
          : (endOfArchive.end() ??
            totals.finalMismatch() ??
            (paths.hasFile(RELEASE_ENTRY) ? undefined : missingEntry()));
      if (mismatch) {
        failure = mismatch;
        reject(mismatch);
        return;
      }
      resolve({ files, compressedBytes: compressed, expandedBytes: totals.expandedBytes });
    }

    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });

    gunzip.on('data', (chunk: Buffer) => {
      inflated += chunk.length;
      if (inflated > inflateBound) {
        fail(
          archiveRejection(
            'expansion_exceeded',
            `the archive inflates past ${inflateBound} bytes, more than its declared files can need; it looks like a gzip bomb`,
          ),
        );
        return;
      }
      endOfArchive.feed(chunk);
      if (!extract.write(chunk)) {
        gunzip.pause();
        extract.once('drain', () => failure === undefined && gunzip.resume());
      }
    });
    // streamx's typings want an argument; end(undefined) is plain end().
    gunzip.once('end', () => extract.end(undefined));
    gunzip.once('error', (error: Error) => {
      fail(archiveRejection('not_gzip', `the body is not a complete, valid gzip stream (${error.message})`));
    });

    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onSourceError);
    source.once('close', onClose);

    readEntries().then(settled, (error: unknown) => fail(error));

    async function readEntries(): Promise<void> {
      const entries = extract[Symbol.asyncIterator]();
      for (;;) {
        let next: Awaited<ReturnType<typeof entries.next>>;
        try {
          next = await entries.next();
        } catch (error) {
          throw asArchiveError(error);
        }
        if (next.done) return;
        const entry = next.value;
        const header = entry.header;
        const kind = entryKind(header);
        if (kind instanceof ProblemError) throw kind;
        const where = entryPath(header.name, kind);
        if (where instanceof ProblemError) throw where;
        const clash = paths.add(where, kind);
        if (clash) throw clash;
        // tar-stream's entry knows where its header starts in the tar stream.
        const headerAt = (entry as unknown as { offset: number }).offset;
        const hidden = endOfArchive.entry(where.path, headerAt, paddedDataBytes(kind, header.size));
        if (hidden) throw hidden;
        if (kind === 'directory') {
          entry.resume();
          continue;
        }
        const over = totals.admitFile(where.path, header.size);
        if (over) throw over;
        const file: ReleaseFile = { path: where.path, ordinal: files.length, bytes: header.size };
        files.push(file);
        await sink.add(file.ordinal, guarded(entry as AsyncIterable<Uint8Array>), file.bytes);
      }
    }

    /** A tar error while a file's bytes are read is the archive's fault; errors of the sink itself are not. */
    async function* guarded(entry: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
      try {
        for await (const chunk of entry) yield chunk;
      } catch (error) {
        throw asArchiveError(error);
      }
    }

    function asArchiveError(error: unknown): unknown {
      if (failure !== undefined) return failure;
      if (error instanceof ProblemError) return error;
      return archiveRejection('corrupt_tar', `the archive is not a valid tar stream (${(error as Error).message})`);
    }
  });
}
