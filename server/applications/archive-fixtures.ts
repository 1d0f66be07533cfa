// Test and benchmark support: builds tar.gz archives byte by byte, including the hostile ones no
// well-behaved packer would write (links, devices, traversal, bad checksums, bombs, pax tricks).
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ARCHIVE_CONTENT_TYPE, UPLOAD_HEADERS } from '../../sdk/contract/applications';
import type { ArchiveDeclaration } from './upload-headers';

export interface FixtureEntry {
  name: string;
  /** Raw bytes for the header's name field instead of `name` in UTF-8 (invalid UTF-8). */
  nameBytes?: Buffer;
  /** Emits these bytes (or zeros) as they are, with no header: garbage or padding inside the tar stream. */
  raw?: Buffer | { zeros: number };
  /** Typeflag character: '0' regular file (default), '5' directory, '1' hard link, '2' symlink, '3'/'4' devices, '6' FIFO, '7', 'S'… */
  type?: string;
  data?: Buffer | string;
  /** Streams this many zero bytes as the data (large files without large buffers). */
  zeros?: number;
  /** Size written in the header when it should lie about the data. */
  size?: number;
  linkname?: string;
  /** pax records written in an 'x' header before the entry (a `path` record renames it). */
  pax?: Record<string, string>;
  /** Writes the name through a GNU long-name ('L') entry. */
  gnuLongName?: boolean;
  /** Splits a long name into the ustar prefix and name fields. */
  ustarPrefix?: boolean;
  badChecksum?: boolean;
}

const BLOCK = 512;
const ZERO_CHUNK = Buffer.alloc(1 << 20);

export function isRegularFile(entry: FixtureEntry): boolean {
  return entry.raw === undefined && (entry.type ?? '0') === '0' && !entry.name.endsWith('/');
}

function dataSize(entry: FixtureEntry): number {
  if (entry.zeros !== undefined) return entry.zeros;
  return entry.data === undefined ? 0 : Buffer.byteLength(entry.data);
}

function* zeros(count: number): Generator<Buffer> {
  for (let left = count; left > 0; left -= ZERO_CHUNK.length)
    yield ZERO_CHUNK.subarray(0, Math.min(left, ZERO_CHUNK.length));
}

function field(buf: Buffer, offset: number, length: number, value: string | Buffer): void {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  bytes.copy(buf, offset, 0, Math.min(bytes.length, length));
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

function header(
  name: Buffer,
  type: string,
  size: number,
  options: { linkname?: string; prefix?: Buffer; badChecksum?: boolean } = {},
): Buffer {
  const block = Buffer.alloc(BLOCK);
  field(block, 0, 100, name);
  field(block, 100, 8, octal(type === '5' ? 0o755 : 0o644, 8));
  field(block, 108, 8, octal(0, 8));
  field(block, 116, 8, octal(0, 8));
  field(block, 124, 12, octal(size, 12));
  field(block, 136, 12, octal(0, 12));
  block.write(type, 156, 'latin1');
  if (options.linkname) field(block, 157, 100, options.linkname);
  field(block, 257, 6, 'ustar\0');
  field(block, 263, 2, '00');
  if (options.prefix) field(block, 345, 155, options.prefix);
  block.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  if (options.badChecksum) sum += 1;
  field(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

function paxRecords(records: Record<string, string>): Buffer {
  let out = '';
  for (const [key, value] of Object.entries(records)) {
    const body = ` ${key}=${value}\n`;
    const base = Buffer.byteLength(body);
    let length = base + 1;
    while (base + String(length).length !== length) length = base + String(length).length;
    out += `${length}${body}`;
  }
  return Buffer.from(out, 'utf8');
}

/** The tar stream of `entries`, then (unless `trailer` is false) the two zero blocks that end an archive. */
export function* tarChunks(entries: FixtureEntry[], options: { trailer?: boolean } = {}): Generator<Buffer> {
  for (const entry of entries) {
    if (entry.raw !== undefined) {
      if (Buffer.isBuffer(entry.raw)) yield entry.raw;
      else yield* zeros(entry.raw.zeros);
      continue;
    }
    const type = entry.type ?? '0';
    let name = entry.nameBytes ?? Buffer.from(entry.name, 'utf8');
    let prefix: Buffer | undefined;
    const records = { ...entry.pax };
    if (name.length > 100) {
      if (entry.ustarPrefix) {
        const cut = entry.name.lastIndexOf('/', entry.name.length - 1);
        prefix = Buffer.from(entry.name.slice(0, cut), 'utf8');
        name = Buffer.from(entry.name.slice(cut + 1), 'utf8');
      } else if (entry.gnuLongName) {
        const long = Buffer.concat([name, Buffer.from([0])]);
        yield header(Buffer.from('././@LongLink'), 'L', long.length);
        yield long;
        yield padding(long.length);
        name = name.subarray(0, 100);
      } else if (records.path === undefined) {
        records.path = entry.name;
        name = name.subarray(0, 100);
      }
    }
    if (Object.keys(records).length > 0) {
      const pax = paxRecords(records);
      yield header(Buffer.from('PaxHeader'), 'x', pax.length);
      yield pax;
      yield padding(pax.length);
    }
    const size = dataSize(entry);
    yield header(name, type, entry.size ?? size, { linkname: entry.linkname, prefix, badChecksum: entry.badChecksum });
    if (entry.zeros !== undefined) {
      yield* zeros(entry.zeros);
    } else if (entry.data !== undefined) {
      yield Buffer.from(entry.data);
    }
    yield padding(size);
  }
  if (options.trailer !== false) yield Buffer.alloc(2 * BLOCK);
}

export function tarOf(entries: FixtureEntry[], options: { trailer?: boolean } = {}): Buffer {
  return Buffer.concat([...tarChunks(entries, options)]);
}

/** What an honest uploader would declare for these entries. */
export function declarationOf(entries: FixtureEntry[], body: Buffer | string): ArchiveDeclaration {
  const files = entries.filter(isRegularFile);
  return {
    sha256: crypto.createHash('sha256').update(body).digest('hex'),
    expandedBytes: files.reduce((sum, e) => sum + dataSize(e), 0),
    fileCount: files.length,
  };
}

export interface ArchiveFixture {
  body: Buffer;
  declaration: ArchiveDeclaration;
}

/** A gzip'd archive of `entries` with its honest declaration, figures overridable to lie. */
export function archiveOf(
  entries: FixtureEntry[],
  overrides: Partial<ArchiveDeclaration> = {},
  options: { level?: number; trailer?: boolean } = {},
): ArchiveFixture {
  const body = zlib.gzipSync(tarOf(entries, options), { level: options.level ?? 6 });
  return { body, declaration: { ...declarationOf(entries, body), ...overrides } };
}

export interface StreamedFixture {
  /** A fresh stream of the same compressed bytes. */
  open(): Readable;
  declaration: ArchiveDeclaration;
  compressedBytes: number;
}

/** Large archives (hundreds of MiB expanded) generated as streams, never held whole. */
export async function streamedArchiveOf(
  entries: FixtureEntry[],
  options: { level?: number; tail?: () => Iterable<Buffer>; overrides?: Partial<ArchiveDeclaration> } = {},
): Promise<StreamedFixture> {
  const open = () => {
    const gzip = Readable.from(tarChunks(entries)).pipe(zlib.createGzip({ level: options.level ?? 1 }));
    if (!options.tail) return gzip;
    const tail = options.tail;
    return Readable.from(
      (async function* () {
        for await (const chunk of gzip) yield chunk as Buffer;
        yield* tail();
      })(),
    );
  };
  const hash = crypto.createHash('sha256');
  let compressedBytes = 0;
  for await (const chunk of open()) {
    hash.update(chunk as Buffer);
    compressedBytes += (chunk as Buffer).length;
  }
  const files = entries.filter(isRegularFile);
  const declaration = {
    sha256: hash.digest('hex'),
    expandedBytes: files.reduce((s, e) => s + dataSize(e), 0),
    fileCount: files.length,
    ...options.overrides,
  };
  return { open, declaration, compressedBytes };
}

/**
 * A second gzip member that inflates to nothing and is exactly `bytes` long (a header comment
 * fills it): appended to an archive it moves the compressed size without changing the content.
 */
export function* emptyGzipMember(bytes: number): Generator<Buffer> {
  const empty = zlib.deflateRawSync(Buffer.alloc(0));
  const fixed = 10 + 1 + empty.length + 8;
  if (bytes < fixed) throw new Error(`an empty gzip member needs at least ${fixed} bytes`);
  yield Buffer.from([0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 0xff]); // FCOMMENT set
  const comment = Buffer.alloc(1 << 20, 0x61);
  for (let left = bytes - fixed; left > 0; left -= comment.length)
    yield comment.subarray(0, Math.min(left, comment.length));
  yield Buffer.concat([Buffer.from([0]), empty, Buffer.alloc(8)]);
}

/** The upload headers that declare `declaration`. */
export function uploadHeadersOf(
  declaration: ArchiveDeclaration,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'content-type': ARCHIVE_CONTENT_TYPE,
    [UPLOAD_HEADERS.archiveSha256]: declaration.sha256,
    [UPLOAD_HEADERS.expandedBytes]: String(declaration.expandedBytes),
    [UPLOAD_HEADERS.fileCount]: String(declaration.fileCount),
    ...extra,
  };
}

/** A small valid web application. */
export function sampleApp(marker = 'hello'): FixtureEntry[] {
  return [
    { name: 'assets/', type: '5' },
    { name: 'assets/app.js', data: `document.body.dataset.marker = ${JSON.stringify(marker)};\n` },
    { name: 'assets/style.css', data: 'body { background: #000; color: #fff; }\n' },
    {
      name: 'index.html',
      data: `<!doctype html><title>${marker}</title><link rel="stylesheet" href="assets/style.css"><script src="assets/app.js"></script>\n`,
    },
  ];
}
