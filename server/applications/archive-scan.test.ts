// The archive rules against a corpus of hostile and edge-case archives, without a server: each is
// streamed through scanArchive into a real staged tree, and must be refused with its own problem
// and leave nothing behind.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../blobs/local-blob-store';
import { ProblemError } from '../problem';
import {
  archiveOf,
  emptyGzipMember,
  streamedArchiveOf,
  tarOf,
  type ArchiveFixture,
  type FixtureEntry,
} from './archive-fixtures';
import { DIRECTORY_ENTRIES_MAX, inflatedBytesBound } from './archive-rules';
import { scanArchive, type FileSink, type ScanResult } from './archive-scan';
import type { ArchiveDeclaration } from './upload-headers';

const MiB = 1024 * 1024;
const sha256 = (body: Buffer) => crypto.createHash('sha256').update(body).digest('hex');
const index: FixtureEntry = { name: 'index.html', data: '<!doctype html><title>app</title>' };

let root: string;
let blobs: LocalBlobStore;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-scan-'));
  blobs = new LocalBlobStore(path.join(root, 'blobs'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every regular file under dir, relative. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((p) => fs.statSync(path.join(dir, p)).isFile())
    .sort();
}

let staged = 0;
/** Scans into a fresh staging tree the way an upload does; a refused archive's tree is aborted. */
async function scan(
  source: Readable | Buffer,
  declaration: ArchiveDeclaration,
): Promise<{ result: ScanResult; files: string[] }> {
  const name = `scan${++staged}`;
  const staging = await blobs.stageTree(name);
  try {
    const result = await scanArchive(Buffer.isBuffer(source) ? Readable.from([source]) : source, declaration, {
      add: (ordinal, data, bytes) => staging.add(String(ordinal), data, bytes),
    });
    await staging.finish();
    return { result, files: filesUnder(path.join(root, 'blobs', '.staging', name)) };
  } catch (error) {
    await staging.abort();
    throw error;
  }
}

/** A sink that reads and forgets (the hundreds-of-MiB bound tests). */
const nullSink: FileSink = {
  async add(_ordinal, data) {
    for await (const _chunk of data) void _chunk;
  },
};

async function refusal(promise: Promise<unknown>): Promise<{ code: string; field: string; detail: string }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ProblemError);
    const p = error as ProblemError;
    expect(p.code).toBe('invalid_request');
    const first = p.options.errors![0]!;
    expect(first.detail).toBe(p.detail);
    return { code: first.code, field: first.field, detail: p.detail };
  }
  throw new Error('the archive was accepted');
}

interface HostileCase {
  name: string;
  entries: FixtureEntry[];
  /** Figures the uploader lies about. */
  lie?: Partial<ArchiveDeclaration>;
  /** Replaces the honest gzip body. */
  body?: (honest: ArchiveFixture) => Buffer;
  code: string;
  field?: string;
  detail: RegExp;
}

const deep = (levels: number) => `${Array.from({ length: levels - 1 }, (_, i) => `d${i}`).join('/')}/f.js`;

const corpus: HostileCase[] = [
  {
    name: 'parent traversal',
    entries: [index, { name: '../evil.html', data: 'x' }],
    code: 'parent_segment',
    detail: /"\.\.\/evil\.html" contains a "\.\." segment/,
  },
  {
    name: 'nested traversal',
    entries: [index, { name: 'a/../../evil.html', data: 'x' }],
    code: 'parent_segment',
    detail: /"\.\." segment/,
  },
  {
    name: 'traversal hidden in a pax path',
    entries: [index, { name: 'ok.html', data: 'x', pax: { path: '../../evil.html' } }],
    code: 'parent_segment',
    detail: /"\.\.\/\.\.\/evil\.html"/,
  },
  {
    name: 'traversal hidden in a GNU long name',
    entries: [index, { name: `${'a/'.repeat(55)}../../../evil.js`, data: 'x', gnuLongName: true }],
    code: 'parent_segment',
    detail: /"\.\." segment/,
  },
  {
    name: 'traversal in the ustar prefix',
    entries: [index, { name: `../${'p'.repeat(60)}/${'n'.repeat(60)}.js`, data: 'x', ustarPrefix: true }],
    code: 'parent_segment',
    detail: /"\.\." segment/,
  },
  {
    name: 'absolute file path',
    entries: [index, { name: '/etc/cron.d/evil', data: 'x' }],
    code: 'absolute_path',
    detail: /"\/etc\/cron\.d\/evil" is absolute/,
  },
  {
    name: 'absolute directory',
    entries: [index, { name: '/tmp/', type: '5' }],
    code: 'absolute_path',
    detail: /is absolute/,
  },
  {
    name: 'drive-letter path',
    entries: [index, { name: 'C:/Windows/evil.dll', data: 'x' }],
    code: 'absolute_path',
    detail: /is absolute/,
  },
  {
    name: 'backslash traversal',
    entries: [index, { name: '..\\..\\evil.html', data: 'x' }],
    code: 'backslash',
    detail: /contains a backslash/,
  },
  {
    name: 'NUL inside a pax path',
    entries: [index, { name: 'ok.html', data: 'x', pax: { path: 'evil.html\u0000.png' } }],
    code: 'control_character',
    detail: /evil\.html\\u0000\.png/,
  },
  {
    name: 'control character',
    entries: [index, { name: 'bell\u0007.html', data: 'x' }],
    code: 'control_character',
    detail: /NUL or control character/,
  },
  {
    name: 'DEL character',
    entries: [index, { name: 'x\u007f.js', data: 'x' }],
    code: 'control_character',
    detail: /control character/,
  },
  {
    name: 'invalid UTF-8 name',
    entries: [index, { name: 'bad', nameBytes: Buffer.from([0x62, 0xff, 0xfe, 0x2e, 0x6a, 0x73]), data: 'x' }],
    code: 'invalid_utf8',
    detail: /is not valid UTF-8/,
  },
  {
    name: 'symbolic link',
    entries: [index, { name: 'passwd', type: '2', linkname: '/etc/passwd' }],
    code: 'unsupported_entry',
    detail: /"passwd" is a symbolic link/,
  },
  {
    name: 'symbolic link posing as the entry',
    entries: [{ name: 'index.html', type: '2', linkname: '../../secret' }],
    code: 'unsupported_entry',
    detail: /"index\.html" is a symbolic link/,
  },
  {
    name: 'hard link',
    entries: [index, { name: 'copy.html', type: '1', linkname: 'index.html' }],
    code: 'unsupported_entry',
    detail: /is a hard link/,
  },
  {
    name: 'character device',
    entries: [index, { name: 'null', type: '3' }],
    code: 'unsupported_entry',
    detail: /is a character device/,
  },
  {
    name: 'block device',
    entries: [index, { name: 'sda', type: '4' }],
    code: 'unsupported_entry',
    detail: /is a block device/,
  },
  { name: 'FIFO', entries: [index, { name: 'pipe', type: '6' }], code: 'unsupported_entry', detail: /is a FIFO/ },
  {
    name: 'contiguous file',
    entries: [index, { name: 'c.bin', type: '7', data: 'x' }],
    code: 'unsupported_entry',
    detail: /is a contiguous file/,
  },
  {
    name: 'GNU sparse entry',
    entries: [index, { name: 'sparse.bin', type: 'S', data: 'x' }],
    code: 'unsupported_entry',
    detail: /an entry of an unknown type/,
  },
  {
    name: 'pax sparse file',
    entries: [index, { name: 'sparse.bin', data: 'x', pax: { 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0' } }],
    code: 'unsupported_entry',
    detail: /is a sparse file/,
  },
  {
    name: 'duplicate file',
    entries: [index, { name: 'a.js', data: '1' }, { name: 'a.js', data: '2' }],
    code: 'duplicate_path',
    detail: /"a\.js" appears more than once/,
  },
  {
    name: 'duplicate after NFC',
    entries: [index, { name: 'caf\u00e9.html', data: '1' }, { name: 'cafe\u0301.html', data: '2' }],
    code: 'duplicate_path',
    detail: /appears more than once \(after NFC normalization\)/,
  },
  {
    name: 'case-fold collision',
    entries: [index, { name: 'Index.html', data: 'x' }],
    code: 'case_collision',
    detail: /"Index\.html" differs from "index\.html" only by letter case/,
  },
  {
    name: 'case-fold collision through a directory',
    entries: [index, { name: 'Assets/a.js', data: '1' }, { name: 'assets/b.js', data: '2' }],
    code: 'case_collision',
    detail: /"assets\/b\.js" differs from "Assets"/,
  },
  {
    name: 'sharp s folds to ss',
    entries: [index, { name: 'stra\u00dfe.html', data: '1' }, { name: 'STRASSE.html', data: '2' }],
    code: 'case_collision',
    detail: /only by letter case/,
  },
  {
    name: 'file where a directory is needed',
    entries: [index, { name: 'lib', data: '1' }, { name: 'lib/x.js', data: '2' }],
    code: 'path_conflict',
    detail: /needs "lib" to be a directory, but it is a file/,
  },
  {
    name: 'directory and file of one name',
    entries: [index, { name: 'lib/', type: '5' }, { name: 'lib', data: '1' }],
    code: 'path_conflict',
    detail: /"lib" is both a file and a directory/,
  },
  {
    name: 'empty segment',
    entries: [index, { name: 'a//b.js', data: 'x' }],
    code: 'empty_segment',
    detail: /contains an empty segment/,
  },
  {
    name: 'dot segment',
    entries: [index, { name: 'a/./b.js', data: 'x' }],
    code: 'dot_segment',
    detail: /contains a "\." segment/,
  },
  {
    name: 'path one byte over 255',
    entries: [index, { name: `${'p'.repeat(251)}/x.js`, data: 'x' }],
    code: 'path_too_long',
    detail: /is 256 bytes long; the limit is 255/,
  },
  {
    name: 'path over 255 bytes once UTF-8',
    entries: [index, { name: `${'\u00e9'.repeat(127)}.js`, data: 'x' }],
    code: 'path_too_long',
    detail: /is 257 bytes long/,
  },
  {
    name: 'path 17 levels deep',
    entries: [index, { name: deep(17), data: 'x' }],
    code: 'path_too_deep',
    detail: /is 17 levels deep; the limit is 16/,
  },
  {
    name: 'more files than declared',
    entries: [index, { name: 'a.js', data: '1' }, { name: 'b.js', data: '2' }],
    lie: { fileCount: 2 },
    code: 'file_count_exceeded',
    field: 'Marquee-File-Count',
    detail: /more files than the 2 declared/,
  },
  {
    name: 'fewer files than declared',
    entries: [index, { name: 'a.js', data: '1' }],
    lie: { fileCount: 3 },
    code: 'file_count_mismatch',
    field: 'Marquee-File-Count',
    detail: /has 2 files, not the 3 declared/,
  },
  {
    name: 'more bytes than declared',
    entries: [index, { name: 'a.js', data: '12345' }],
    lie: { expandedBytes: 35 },
    code: 'expanded_bytes_exceeded',
    field: 'Marquee-Expanded-Bytes',
    detail: /more than the 35 bytes declared/,
  },
  {
    name: 'fewer bytes than declared',
    entries: [index, { name: 'a.js', data: '12345' }],
    lie: { expandedBytes: 1000 },
    code: 'expanded_bytes_mismatch',
    field: 'Marquee-Expanded-Bytes',
    detail: /expand to 38 bytes, not the 1000 declared/,
  },
  {
    name: 'file header one byte over 32 MiB',
    entries: [index, { name: 'big.bin', size: 32 * MiB + 1 }],
    lie: { expandedBytes: 200 * MiB },
    code: 'file_too_large',
    detail: /"big\.bin" is 33554433 bytes; a single file may be at most 33554432/,
  },
  {
    name: 'gzip bomb announced by its header',
    entries: [index, { name: 'bomb.bin', size: 1024 * MiB }],
    lie: { expandedBytes: 1000 },
    code: 'file_too_large',
    detail: /is 1073741824 bytes/,
  },
  {
    name: 'no index.html',
    entries: [{ name: 'main.html', data: 'x' }],
    code: 'missing_entry',
    detail: /has no index\.html at its root/,
  },
  {
    name: 'index.html only in a subdirectory',
    entries: [{ name: 'app/index.html', data: 'x' }],
    code: 'missing_entry',
    detail: /no index\.html at its root/,
  },
  {
    name: 'index.html as a directory',
    entries: [
      { name: 'index.html/', type: '5' },
      { name: 'index.html/a.js', data: 'x' },
    ],
    code: 'missing_entry',
    detail: /no index\.html/,
  },
  {
    name: 'SHA-256 mismatch',
    entries: [index],
    lie: { sha256: '0'.repeat(64) },
    code: 'sha256_mismatch',
    field: 'Marquee-Archive-SHA256',
    detail: /SHA-256 is [0-9a-f]{64}, not the 0{64} declared/,
  },
  {
    name: 'plain tar, not gzip',
    entries: [index],
    body: () => tarOf([index]),
    code: 'not_gzip',
    detail: /not a complete, valid gzip stream/,
  },
  {
    name: 'truncated gzip',
    entries: [index],
    body: (f) => f.body.subarray(0, f.body.length - 12),
    code: 'not_gzip',
    detail: /valid gzip stream/,
  },
  { name: 'empty body', entries: [index], body: () => Buffer.alloc(0), code: 'not_gzip', detail: /valid gzip stream/ },
  {
    name: 'corrupt header checksum',
    entries: [index, { name: 'a.js', data: 'x', badChecksum: true }],
    code: 'corrupt_tar',
    detail: /not a valid tar stream/,
  },
  {
    name: 'tar cut off mid-file',
    entries: [{ name: 'index.html', data: 'x'.repeat(2000) }],
    body: () =>
      zlib.gzipSync(tarOf([{ name: 'index.html', data: 'x'.repeat(2000) }], { trailer: false }).subarray(0, 1200)),
    code: 'corrupt_tar',
    detail: /not a valid tar stream/,
  },
  {
    name: 'oversized pax header',
    entries: [index, { name: 'PaxHeader', type: 'x', size: 5 * MiB }],
    code: 'corrupt_tar',
    detail: /not a valid tar stream/,
  },
  {
    name: 'a file after the end-of-archive marker (two archives one after the other)',
    entries: [index, { name: 'hidden.js', data: 'x' }],
    body: () => zlib.gzipSync(Buffer.concat([tarOf([index]), tarOf([{ name: 'hidden.js', data: 'x' }])])),
    code: 'after_end_of_archive',
    detail: /"hidden.js" comes after the end-of-archive marker/,
  },
  {
    name: 'a file after one zero block',
    entries: [index, { name: 'pad', raw: { zeros: 512 } }, { name: 'hidden.js', data: 'x' }],
    code: 'after_end_of_archive',
    detail: /"hidden.js" comes after the end-of-archive marker/,
  },
  {
    name: 'a pax header after the end-of-archive marker',
    entries: [index],
    body: () =>
      zlib.gzipSync(
        Buffer.concat([tarOf([index]), tarOf([{ name: 'PaxHeader', type: 'x', data: '18 path=hidden.js\n' }])]),
      ),
    code: 'after_end_of_archive',
    detail: /data after its end-of-archive marker/,
  },
  {
    name: 'garbage after the archive',
    entries: [index, { name: 'junk', raw: Buffer.alloc(512, 0x41) }],
    code: 'corrupt_tar',
    detail: /not a valid tar stream/,
  },
];

describe('hostile and edge-case archives', () => {
  it('has at least 30 cases', () => expect(corpus.length).toBeGreaterThanOrEqual(30));

  it.each(corpus)('refuses: $name → $code', async (c) => {
    const honest = archiveOf(c.entries);
    const body = c.body ? c.body(honest) : honest.body;
    const declaration = { ...honest.declaration, sha256: sha256(body), ...c.lie };
    const got = await refusal(scan(body, declaration));
    expect(got.code).toBe(c.code);
    expect(got.field).toBe(c.field ?? 'archive');
    expect(got.detail).toMatch(c.detail);
    // Nothing staged survives a refusal, and nothing was ever written outside the staging root.
    expect(filesUnder(path.join(root, 'blobs'))).toEqual([]);
    expect(fs.readdirSync(root)).toEqual(['blobs']);
  });

  it('refuses more than 5000 directory entries', async () => {
    const dirs = Array.from({ length: DIRECTORY_ENTRIES_MAX + 1 }, (_, i) => ({ name: `d${i}/`, type: '5' }));
    const fixture = archiveOf([index, ...dirs]);
    const got = await refusal(scan(fixture.body, fixture.declaration));
    expect(got).toMatchObject({
      code: 'too_many_directories',
      detail: 'the archive has more than 5000 directory entries',
    });
  });

  it('refuses the 5001st file: past the declared count, and past the absolute limit', async () => {
    const many = [index, ...Array.from({ length: 5000 }, (_, i) => ({ name: `f/${i}.txt`, data: '' }))];
    const fixture = archiveOf(many);
    const declared = await refusal(
      scanArchive(Readable.from([fixture.body]), { ...fixture.declaration, fileCount: 5000 }, nullSink),
    );
    expect(declared).toMatchObject({ code: 'file_count_exceeded', field: 'Marquee-File-Count' });
    // The header rules cap the declaration at 5000; the scan holds the line on its own as well.
    const absolute = await refusal(scanArchive(Readable.from([fixture.body]), fixture.declaration, nullSink));
    expect(absolute).toMatchObject({
      code: 'file_count_exceeded',
      field: 'archive',
      detail: 'the archive has more than 5000 files',
    });
  });

  it('stops an endless gzip bomb at the bound its declaration allows', async () => {
    const start = archiveOf([index]);
    const declared = { ...start.declaration };
    // A valid archive, then zeros forever: the tar parser reads them as empty blocks.
    const bomb = zlib.createGzip({ level: 1 });
    const zeros = Buffer.alloc(MiB);
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += zeros.length;
        this.push(zeros);
      },
    });
    bomb.write(tarOf([index], { trailer: false }));
    endless.pipe(bomb);
    let compressedRead = 0;
    const counted = bomb.on('data', (c: Buffer) => (compressedRead += c.length));
    const got = await refusal(scanArchive(counted, declared, nullSink));
    endless.destroy();
    bomb.destroy();
    expect(got.code).toBe('expansion_exceeded');
    expect(got.detail).toContain(`inflates past ${inflatedBytesBound(declared)} bytes`);
    // It stopped near the bound (a few chunks in flight), not after the whole stream.
    expect(produced).toBeLessThan(inflatedBytesBound(declared) + 16 * MiB);
  });

  it('refuses trailing zeros that inflate past the bound', async () => {
    const fixture = await streamedArchiveOf([index, { name: '', raw: { zeros: 64 * MiB } }]);
    const got = await refusal(scanArchive(fixture.open(), fixture.declaration, nullSink));
    expect(got.code).toBe('expansion_exceeded');
  });
});

describe('archives at and just past each limit', () => {
  it('accepts a path of exactly 255 bytes and 16 levels', async () => {
    const longest = `${'p'.repeat(250)}/x.js`;
    const deepest = deep(16);
    const fixture = archiveOf([index, { name: longest, data: 'a' }, { name: deepest, data: 'b' }]);
    const { result } = await scan(fixture.body, fixture.declaration);
    expect(result.files.map((f) => f.path)).toEqual(['index.html', longest, deepest]);
    expect(Buffer.byteLength(longest)).toBe(255);
  });

  it('accepts exactly 5000 files', async () => {
    const files = Array.from({ length: 4999 }, (_, i) => ({ name: `f/${i}.txt`, data: String(i) }));
    const fixture = archiveOf([index, ...files]);
    const result = await scanArchive(Readable.from([fixture.body]), fixture.declaration, nullSink);
    expect(result.files).toHaveLength(5000);
    expect(result.files[4999]).toEqual({ path: 'f/4998.txt', ordinal: 4999, bytes: 4 });
  });

  it('accepts a single file of exactly 32 MiB and refuses one byte more', async () => {
    const at = await streamedArchiveOf([index, { name: 'big.bin', zeros: 32 * MiB }]);
    const { result } = await scan(at.open(), at.declaration);
    expect(result.files[1]).toEqual({ path: 'big.bin', ordinal: 1, bytes: 32 * MiB });
    const past = await streamedArchiveOf([index, { name: 'big.bin', zeros: 32 * MiB + 1 }]);
    expect((await refusal(scanArchive(past.open(), past.declaration, nullSink))).code).toBe('file_too_large');
  });

  it('accepts exactly 262144000 expanded bytes and refuses one byte more', async () => {
    const seven = Array.from({ length: 7 }, (_, i) => ({ name: `part${i}.bin`, zeros: 32 * MiB }));
    const rest = 262_144_000 - 7 * 32 * MiB - 33;
    const exact: FixtureEntry[] = [
      { name: 'index.html', data: 'x'.repeat(33) },
      ...seven,
      { name: 'rest.bin', zeros: rest },
    ];
    const at = await streamedArchiveOf(exact);
    expect(at.declaration.expandedBytes).toBe(262_144_000);
    expect((await scanArchive(at.open(), at.declaration, nullSink)).expandedBytes).toBe(262_144_000);
    const over = await streamedArchiveOf([...exact.slice(0, -1), { name: 'rest.bin', zeros: rest + 1 }], {
      overrides: { expandedBytes: 262_144_000 },
    });
    const got = await refusal(scanArchive(over.open(), over.declaration, nullSink));
    expect(got.code).toBe('expanded_bytes_exceeded');
  }, 60_000);

  it('accepts exactly 104857600 compressed bytes and refuses one byte more', async () => {
    const app = archiveOf([index]).body;
    const exact = fixtureOfChunks(
      () => [app, ...emptyGzipMember(104_857_600 - app.length)],
      archiveOf([index]).declaration,
    );
    expect(exact.bytes).toBe(104_857_600);
    const accepted = await scanArchive(exact.open(), exact.declaration, nullSink);
    expect(accepted.compressedBytes).toBe(104_857_600);
    const over = fixtureOfChunks(
      () => [app, ...emptyGzipMember(104_857_601 - app.length)],
      archiveOf([index]).declaration,
    );
    expect((await refusal(scanArchive(over.open(), over.declaration, nullSink))).code).toBe('compressed_too_large');
  }, 60_000);
});

function fixtureOfChunks(
  chunks: () => Iterable<Buffer>,
  base: ArchiveDeclaration,
): { open: () => Readable; declaration: ArchiveDeclaration; bytes: number } {
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  for (const chunk of chunks()) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { open: () => Readable.from(chunks()), declaration: { ...base, sha256: hash.digest('hex') }, bytes };
}

describe('archives that are fine', () => {
  it('stores each regular file under its ordinal with exactly its bytes', async () => {
    const fixture = archiveOf([
      index,
      { name: 'assets/', type: '5' },
      { name: 'assets/app.js', data: 'console.log(1)' },
      { name: 'empty.txt', data: '' },
    ]);
    const { result, files } = await scan(fixture.body, fixture.declaration);
    expect(result.files).toEqual([
      { path: 'index.html', ordinal: 0, bytes: 33 },
      { path: 'assets/app.js', ordinal: 1, bytes: 14 },
      { path: 'empty.txt', ordinal: 2, bytes: 0 },
    ]);
    expect(files).toEqual(['0', '1', '2']);
    expect(result).toMatchObject({ expandedBytes: 47, compressedBytes: fixture.body.length });
  });

  it('takes files without parent directory entries, a ./ prefix and long names in every tar dialect', async () => {
    const pax = `${'x'.repeat(120)}/pax.js`;
    const gnu = `${'y'.repeat(120)}/gnu.js`;
    const ustar = `${'z'.repeat(90)}/${'w'.repeat(60)}.js`;
    const fixture = archiveOf([
      { name: './', type: '5' },
      { name: './index.html', data: 'i' },
      { name: './deep/er/still/file.css', data: 'c' },
      { name: pax, data: 'p' },
      { name: gnu, data: 'g', gnuLongName: true },
      { name: ustar, data: 'u', ustarPrefix: true },
    ]);
    const { result } = await scan(fixture.body, fixture.declaration);
    expect(result.files.map((f) => f.path)).toEqual(['index.html', 'deep/er/still/file.css', pax, gnu, ustar]);
  });

  it('takes zero blocks inside files: only one where a header belongs ends the archive', async () => {
    const fixture = archiveOf([
      { name: 'blank/', type: '5' },
      { name: 'blank/zeros.bin', zeros: 4096 },
      { name: 'blank/empty.bin', data: '' },
      { name: 'tail.bin', data: Buffer.concat([Buffer.from('x'), Buffer.alloc(1500)]) },
      index,
    ]);
    const { result } = await scan(fixture.body, fixture.declaration);
    expect(result.files.map((f) => f.path)).toEqual(['blank/zeros.bin', 'blank/empty.bin', 'tail.bin', 'index.html']);
  });

  it('normalizes names to NFC', async () => {
    const fixture = archiveOf([index, { name: 'cafe\u0301/me\u0301nu.html', data: 'm' }]);
    const { result } = await scan(fixture.body, fixture.declaration);
    expect(result.files[1]!.path).toBe('caf\u00e9/m\u00e9nu.html');
  });

  it('reads an archive made by GNU tar -czf', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'src-'));
    fs.mkdirSync(path.join(dir, 'img'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html>');
    fs.writeFileSync(path.join(dir, 'img', 'logo.svg'), '<svg/>');
    fs.writeFileSync(path.join(dir, `${'n'.repeat(140)}.js`), 'long');
    const file = path.join(root, 'made-by-tar.tgz');
    execFileSync('tar', ['-czf', file, '-C', dir, '.']);
    fs.rmSync(dir, { recursive: true });
    const body = fs.readFileSync(file);
    fs.rmSync(file);
    const declaration = { sha256: sha256(body), expandedBytes: 15 + 6 + 4, fileCount: 3 };
    const { result } = await scan(body, declaration);
    expect(result.files.map((f) => f.path).sort()).toEqual(['img/logo.svg', 'index.html', `${'n'.repeat(140)}.js`]);
  });
});
