// A reproducible tar.gz: ustar entries sorted by the UTF-8 bytes of their names, directories 0755
// and files 0644, owner 0:0, mtime 0, no user or group names, then raw deflate (level 9) inside a
// fixed gzip header (no name, no mtime, OS unknown). Same entries and bytes give the same archive
// with the same zlib; nothing from the machine or the clock gets in.
import { once } from 'node:events';
import zlib from 'node:zlib';
import tar from 'tar-stream';

/** 1f8b, deflate, no flags, mtime 0, XFL 2 (best compression), OS 255 (unknown). */
export const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff]);
const DIRECTORY_MODE = 0o755;
const FILE_MODE = 0o644;
const EPOCH = new Date(0);

export interface ArchiveEntry {
  /** Relative, `/`-separated, no trailing slash. */
  path: string;
  type: 'directory' | 'file';
  /** Files: the bytes, read when the entry is written (one file in memory at a time). */
  read?: () => Promise<Buffer>;
}

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** CRC-32 (IEEE), continuing from `crc`: the gzip trailer's checksum. */
export function crc32(data: Uint8Array, crc = 0): number {
  let c = ~crc;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

function entryName(entry: ArchiveEntry): string {
  return entry.type === 'directory' ? `${entry.path}/` : entry.path;
}

/** Sorted the way the archive lists them: by the UTF-8 bytes of the entry name. */
export function sortEntries(entries: readonly ArchiveEntry[]): ArchiveEntry[] {
  return [...entries].sort((a, b) => Buffer.compare(Buffer.from(entryName(a)), Buffer.from(entryName(b))));
}

export class ArchiveTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the compressed archive exceeds ${limit} bytes`);
    this.name = 'ArchiveTooLargeError';
  }
}

/** Writes the archive; stops with ArchiveTooLargeError as soon as the gzip output passes `maxCompressedBytes`. */
export async function writeDeterministicArchive(
  entries: readonly ArchiveEntry[],
  maxCompressedBytes = Infinity,
): Promise<Buffer> {
  const pack = tar.pack();
  const deflate = zlib.createDeflateRaw({ level: 9 });
  const compressed: Buffer[] = [GZIP_HEADER];
  let compressedBytes = GZIP_HEADER.length;
  let failure: Error | undefined;
  deflate.on('data', (chunk: Buffer) => {
    compressed.push(chunk);
    compressedBytes += chunk.length;
    if (compressedBytes + 8 > maxCompressedBytes && !failure) {
      failure = new ArchiveTooLargeError(maxCompressedBytes);
      pack.destroy(failure);
    }
  });
  const deflated = once(deflate, 'end');

  const writer = (async () => {
    for (const entry of sortEntries(entries)) {
      if (failure) return;
      const common = {
        name: entryName(entry),
        mode: entry.type === 'directory' ? DIRECTORY_MODE : FILE_MODE,
        uid: 0,
        gid: 0,
        uname: '',
        gname: '',
        mtime: EPOCH,
      };
      if (entry.type === 'directory') {
        await new Promise<void>((resolve, reject) =>
          pack.entry({ ...common, type: 'directory' }, (error) => (error ? reject(error) : resolve())),
        );
      } else {
        const bytes = await entry.read!();
        await new Promise<void>((resolve, reject) =>
          pack.entry({ ...common, type: 'file', size: bytes.length }, bytes, (error) =>
            error ? reject(error) : resolve(),
          ),
        );
      }
    }
    pack.finalize();
  })().catch((error: unknown) => {
    // A failed read ends the stream too, so the reader below stops instead of waiting forever.
    pack.destroy(error as Error);
    throw error;
  });

  let crc = 0;
  let size = 0;
  try {
    for await (const chunk of pack as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      size = (size + chunk.length) % 2 ** 32;
      if (!deflate.write(chunk)) await once(deflate, 'drain');
    }
    await writer;
  } catch (error) {
    deflate.destroy();
    await writer.catch(() => undefined);
    throw failure ?? error;
  }
  deflate.end();
  await deflated;
  if (failure) throw failure;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc, 0);
  trailer.writeUInt32LE(size, 4);
  compressed.push(trailer);
  const archive = Buffer.concat(compressed);
  if (archive.length > maxCompressedBytes) throw new ArchiveTooLargeError(maxCompressedBytes);
  return archive;
}
