import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { afterEach, describe, expect, it } from 'vitest';
import { crc32, GZIP_HEADER } from './deterministic-archive';
import { applicationNameHeader, packApplication, PackError, type PackProblemCode } from './pack';
import { RUNTIME_MARKER } from './runtime-injection';

const RUNTIME = Buffer.from('/* bridge */window.marquee=1;');
const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-pack-'));
  dirs.push(dir);
  return dir;
}

/** Writes `files` (path → content) under a fresh directory, in the given order. */
function tree(files: Record<string, string | Buffer>): string {
  const dir = tempDir();
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

interface Extracted {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  uname: string;
  content: string;
}

async function extract(archive: Buffer): Promise<Extracted[]> {
  const out: Extracted[] = [];
  const extractor = tar.extract();
  extractor.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
    stream.on('end', () => {
      out.push({
        name: header.name,
        type: header.type,
        mode: header.mode,
        uid: header.uid,
        gid: header.gid,
        mtime: header.mtime.getTime(),
        uname: header.uname,
        content: Buffer.concat(chunks).toString('utf8'),
      });
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    extractor.on('finish', () => resolve());
    extractor.on('error', reject);
  });
  Readable.from([zlib.gunzipSync(archive)]).pipe(extractor as unknown as NodeJS.WritableStream);
  await done;
  return out;
}

async function problemCodes(
  dir: string,
  options: Parameters<typeof packApplication>[1] = {},
): Promise<PackProblemCode[]> {
  try {
    await packApplication(dir, options);
  } catch (error) {
    if (error instanceof PackError) return error.problems.map((p) => p.code);
    throw error;
  }
  return [];
}

describe('archive format', () => {
  it('writes sorted ustar entries with fixed modes, owners and times inside a fixed gzip header', async () => {
    const dir = tree({
      'index.html': '<html></html>',
      'js/app.js': 'run()',
      'css/site.css': 'body{}',
      'a-b.txt': 'dash',
      'img/ünï.png': 'png',
    });
    const packed = await packApplication(dir);
    expect(packed.archive.subarray(0, 10)).toEqual(GZIP_HEADER);
    const entries = await extract(packed.archive);
    expect(entries.map((e) => e.name)).toEqual([
      'a-b.txt',
      'css/',
      'css/site.css',
      'img/',
      'img/ünï.png',
      'index.html',
      'js/',
      'js/app.js',
    ]);
    for (const e of entries) {
      expect(e.mode).toBe(e.type === 'directory' ? 0o755 : 0o644);
      expect([e.uid, e.gid, e.mtime, e.uname]).toEqual([0, 0, 0, '']);
    }
    expect(entries.find((e) => e.name === 'js/app.js')!.content).toBe('run()');
    expect(entries.find((e) => e.name === 'img/ünï.png')!.content).toBe('png');
    // Plain ustar headers for ASCII names.
    const raw = zlib.gunzipSync(packed.archive);
    expect(raw.subarray(257, 265).toString('latin1')).toBe('ustar\u000000');
    // Two zero blocks end the archive.
    expect(raw.subarray(raw.length - 1024).every((b) => b === 0)).toBe(true);
  });

  it('computes the upload headers from the archive', async () => {
    const dir = tree({ 'index.html': '12345', 'data/x.json': '{}' });
    const packed = await packApplication(dir, { name: 'Lobby board' });
    expect(packed.sha256).toBe(crypto.createHash('sha256').update(packed.archive).digest('hex'));
    expect(packed.headers).toEqual({
      'Content-Type': 'application/gzip',
      'Marquee-Archive-SHA256': packed.sha256,
      'Marquee-Expanded-Bytes': '7',
      'Marquee-File-Count': '2',
      'Marquee-SDK-Version': '1',
      'Marquee-Application-Name': 'Lobby board',
    });
    expect(packed.files).toEqual([
      { path: 'data/x.json', bytes: 2 },
      { path: 'index.html', bytes: 5 },
    ]);
  });

  it('leaves empty directories out', async () => {
    const dir = tree({ 'index.html': 'x' });
    fs.mkdirSync(path.join(dir, 'empty/deeper'), { recursive: true });
    expect((await extract((await packApplication(dir)).archive)).map((e) => e.name)).toEqual(['index.html']);
  });

  it('computes the gzip CRC-32 (check value of "123456789")', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.from('6789'), crc32(Buffer.from('12345')))).toBe(0xcbf43926);
  });
});

describe('determinism', () => {
  it('gives the same bytes for the same content, whatever the creation order, times and permissions', async () => {
    const files = {
      'index.html': '<h1>hi</h1>',
      'b/2.txt': 'two',
      'a/1.txt': 'one',
      'z.css': 'z{}',
      'a/deep/er/x.js': 'x',
    };
    const one = tree(files);
    const reversed = Object.fromEntries(Object.entries(files).reverse());
    const two = tree(reversed);
    fs.utimesSync(path.join(two, 'z.css'), new Date('2001-01-01'), new Date('2001-01-01'));
    fs.chmodSync(path.join(two, 'b/2.txt'), 0o600);
    fs.chmodSync(path.join(two, 'a'), 0o700);
    const [a, b, again] = await Promise.all([packApplication(one), packApplication(two), packApplication(one)]);
    expect(b.archive.equals(a.archive)).toBe(true);
    expect(again.archive.equals(a.archive)).toBe(true);
    expect(b.sha256).toBe(a.sha256);
  });

  it('gives different bytes when one byte of content changes', async () => {
    const a = await packApplication(tree({ 'index.html': 'one' }));
    const b = await packApplication(tree({ 'index.html': 'onf' }));
    expect(a.sha256).not.toBe(b.sha256);
  });
});

describe('ignoring', () => {
  it('always leaves out dot-paths, dependency folders, maps, keys and secrets, and .marqueeignore cannot bring them back', async () => {
    const dir = tree({
      'index.html': 'x',
      '.env': 'SECRET=1',
      '.git/config': 'x',
      'assets/.DS_Store': 'x',
      'node_modules/lib/index.js': 'x',
      'app.js.map': '{}',
      'server.pem': 'x',
      'keys/id_rsa': 'x',
      'keys/id_ed25519.pub': 'x',
      'config/credentials.json': '{}',
      'secrets.json': '{}',
      'notes.txt~': 'x',
      'app.js': 'x',
      '.marqueeignore': '!.env\n!secrets.json\n!node_modules/\n',
    });
    const packed = await packApplication(dir);
    expect(packed.files.map((f) => f.path)).toEqual(['app.js', 'index.html']);
    expect(packed.ignored.sort()).toEqual(
      [
        '.env',
        '.git',
        '.marqueeignore',
        'app.js.map',
        'assets/.DS_Store',
        'config/credentials.json',
        'keys/id_ed25519.pub',
        'keys/id_rsa',
        'node_modules',
        'notes.txt~',
        'secrets.json',
        'server.pem',
      ].sort(),
    );
  });

  it('stops on a .marqueeignore that is not a regular file (a FIFO, a directory) instead of packing without its rules', async () => {
    const fifo = tree({ 'index.html': 'x' });
    execFileSync('mkfifo', [path.join(fifo, '.marqueeignore')]);
    expect(await problemCodes(fifo)).toEqual(['special_file']); // a read would have blocked for good
    const directory = tree({ 'index.html': 'x', 'secret.txt': 's' });
    fs.mkdirSync(path.join(directory, '.marqueeignore'));
    expect(await problemCodes(directory)).toEqual(['special_file']);
  });

  it('applies .marqueeignore rules with negation and directory patterns', async () => {
    const dir = tree({
      'index.html': 'x',
      'drafts/a.html': 'x',
      'logs/today.log': 'x',
      'keep.log': 'x',
      'src/main.ts': 'x',
      'src/main.js': 'x',
      'docs/readme.md': 'x',
      '.marqueeignore': '# authoring leftovers\n*.log\n!keep.log\ndrafts/\n/src/*.ts\ndocs\n',
    });
    const packed = await packApplication(dir);
    expect(packed.files.map((f) => f.path)).toEqual(['index.html', 'keep.log', 'src/main.js']);
  });
});

describe('runtime injection', () => {
  it('adds _marquee/runtime.js without a directory entry and marks every top-level HTML file', async () => {
    const dir = tree({
      'index.html': '<!doctype html><html><head><title>x</title></head><body></body></html>',
      'about.htm': '<!DOCTYPE html><p>no head here</p>',
      'nested/page.html': '<html><head></head></html>',
    });
    const packed = await packApplication(dir, { runtime: RUNTIME });
    const entries = await extract(packed.archive);
    expect(entries.map((e) => e.name)).toEqual([
      '_marquee/runtime.js',
      'about.htm',
      'index.html',
      'nested/',
      'nested/page.html',
    ]);
    expect(entries[0]!.content).toBe(RUNTIME.toString());
    const index = entries.find((e) => e.name === 'index.html')!.content;
    expect(index).toBe(`<!doctype html><html><head><title>x</title>${RUNTIME_MARKER}\n</head><body></body></html>`);
    expect(entries.find((e) => e.name === 'about.htm')!.content).toBe(
      `<!DOCTYPE html>\n${RUNTIME_MARKER}\n<p>no head here</p>`,
    );
    expect(entries.find((e) => e.name === 'nested/page.html')!.content).toBe('<html><head></head></html>');
    // Counts include the runtime and the injected markers.
    expect(packed.fileCount).toBe(4);
    expect(packed.expandedBytes).toBe(
      entries.filter((e) => e.type === 'file').reduce((n, e) => n + Buffer.byteLength(e.content), 0),
    );
  });

  it('keeps an exact existing marker and refuses a duplicated or altered one', async () => {
    const exact = await packApplication(tree({ 'index.html': `<head>${RUNTIME_MARKER}</head>` }), { runtime: RUNTIME });
    expect((await extract(exact.archive)).find((e) => e.name === 'index.html')!.content).toBe(
      `<head>${RUNTIME_MARKER}</head>`,
    );
    expect(
      await problemCodes(tree({ 'index.html': `${RUNTIME_MARKER}${RUNTIME_MARKER}` }), { runtime: RUNTIME }),
    ).toEqual(['runtime_marker']);
    expect(
      await problemCodes(tree({ 'index.html': RUNTIME_MARKER.replace('></script>', ' async></script>') }), {
        runtime: RUNTIME,
      }),
    ).toEqual(['runtime_marker']);
    expect(
      await problemCodes(tree({ 'index.html': '<script src="./_marquee/runtime.js" data-marquee-sdk="2"></script>' }), {
        runtime: RUNTIME,
      }),
    ).toEqual(['runtime_marker']);
  });

  it('refuses a marker without the runtime, and a marker below the top level', async () => {
    expect(await problemCodes(tree({ 'index.html': RUNTIME_MARKER }))).toEqual(['runtime_missing']);
    // A plain script tag for the runtime would load nothing on glass (a 404), leaving window.marquee unset.
    const plain = '<html><head><script src="_marquee/runtime.js"></script></head></html>';
    expect(await problemCodes(tree({ 'index.html': plain }))).toEqual(['runtime_missing']);
    expect(
      await problemCodes(tree({ 'index.html': 'x', 'sub/page.html': RUNTIME_MARKER }), { runtime: RUNTIME }),
    ).toEqual(['runtime_marker']);
  });

  it('reserves _marquee/ for the runtime', async () => {
    expect(await problemCodes(tree({ 'index.html': 'x', '_marquee/runtime.js': 'fake' }))).toEqual([
      'reserved_path',
      'reserved_path',
    ]);
  });

  it('keeps bytes that are not UTF-8 intact around the marker', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('<head><title>caf'),
      Buffer.from([0xe9]),
      Buffer.from('</title></head>'),
    ]);
    const packed = await packApplication(tree({ 'index.html': latin1 }), { runtime: RUNTIME });
    const raw = zlib.gunzipSync(packed.archive);
    expect(
      raw.includes(
        Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(`</title>${RUNTIME_MARKER}\n</head>`)]),
      ),
    ).toBe(true);
  });
});

describe('path rules', () => {
  it('says whether the folder to pack is missing or is not a folder', async () => {
    const root = tree({ 'index.html': 'x' });
    const details = async (dir: string) =>
      packApplication(dir).then(
        () => [],
        (error: PackError) => error.problems.map((p) => `${p.code}: ${p.detail}`),
      );
    expect(await details(path.join(root, 'dist'))).toEqual([
      `not_a_directory: ${path.join(root, 'dist')} does not exist`,
    ]);
    const file = path.join(root, 'index.html');
    expect(await details(file)).toEqual([`not_a_directory: ${file} is not a directory`]);
  });

  it('needs index.html at the root', async () => {
    expect(await problemCodes(tree({ 'site/index.html': 'x' }))).toEqual(['index_missing']);
    expect(await problemCodes(tree({ 'INDEX.HTML': 'x' }))).toEqual(['index_missing']);
  });

  it('refuses symlinks, hard links and special files', async () => {
    const dir = tree({ 'index.html': 'x', 'real.txt': 'r' });
    fs.symlinkSync('real.txt', path.join(dir, 'link.txt'));
    fs.symlinkSync('/etc', path.join(dir, 'etc'));
    fs.linkSync(path.join(dir, 'real.txt'), path.join(dir, 'hard.txt'));
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    expect((await problemCodes(dir)).sort()).toEqual(['hardlink', 'hardlink', 'special_file', 'symlink', 'symlink']);
  });

  it('refuses control characters, backslashes and names that are not UTF-8', async () => {
    const dir = tree({ 'index.html': 'x', 'tab\there.txt': 'x', 'back\\slash.txt': 'x' });
    fs.writeFileSync(Buffer.concat([Buffer.from(`${dir}/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'x');
    expect((await problemCodes(dir)).sort()).toEqual(['backslash', 'control_character', 'invalid_utf8']);
  });

  it('refuses a name that starts like a Windows drive, as the server does', async () => {
    // The server reads `c:menu.js` as absolute (archive-rules.ts): the author learns it here, not on upload.
    expect(await problemCodes(tree({ 'index.html': 'x', 'c:menu.js': 'x', 'menu:c.js': 'x' }))).toEqual([
      'absolute_path',
    ]);
  });

  it('refuses names that collide after case folding or Unicode normalization', async () => {
    expect(await problemCodes(tree({ 'index.html': 'x', 'Logo.png': 'a', 'logo.png': 'b' }))).toEqual([
      'duplicate_path',
    ]);
    expect(await problemCodes(tree({ 'index.html': 'x', 'caf\u00e9.txt': 'a', 'cafe\u0301.txt': 'b' }))).toEqual([
      'duplicate_path',
    ]);
    expect(await problemCodes(tree({ 'index.html': 'x', 'Assets/a.png': 'a', 'assets/b.png': 'b' }))).toEqual([
      'duplicate_path',
    ]);
  });

  it('folds case as the server does: ß, ẞ and ss collide, and final sigma is sigma', async () => {
    expect(await problemCodes(tree({ 'index.html': 'x', 'stra\u00dfe.txt': 'a', 'strasse.txt': 'b' }))).toEqual([
      'duplicate_path',
    ]);
    expect(await problemCodes(tree({ 'index.html': 'x', '\u1e9e.txt': 'a', 'SS.txt': 'b' }))).toEqual([
      'duplicate_path',
    ]);
    expect(
      await problemCodes(
        tree({
          'index.html': 'x',
          '\u03c3\u03bf\u03c6\u03bf\u03c2.txt': 'a',
          '\u03c3\u03bf\u03c6\u03bf\u03c3.txt': 'b',
        }),
      ),
    ).toEqual(['duplicate_path']);
    expect(await problemCodes(tree({ 'index.html': 'x', 'stra\u00dfe.txt': 'a', 'strase.txt': 'b' }))).toEqual([]);
  });

  it('refuses U+FFFD in a name, which the server cannot tell from bytes that are not UTF-8', async () => {
    expect(await problemCodes(tree({ 'index.html': 'x', 'a\uFFFD.txt': 'a' }))).toEqual(['invalid_utf8']);
    // The directory and the file beneath it: each would be an entry the server refuses.
    expect(await problemCodes(tree({ 'index.html': 'x', 'd\uFFFD/a.txt': 'a' }))).toEqual([
      'invalid_utf8',
      'invalid_utf8',
    ]);
  });

  it('refuses .marquee at the root in any letter case, although dot-paths are otherwise left out silently', async () => {
    const problems = async (files: Record<string, string>) => {
      try {
        await packApplication(tree(files));
        return [];
      } catch (error) {
        return (error as PackError).problems.map((p) => `${p.code} ${p.path}`);
      }
    };
    expect(
      await problems({ 'index.html': 'x', '.marquee/player-origin': '{"player_origin":"https://evil.example"}' }),
    ).toEqual(['reserved_path .marquee']);
    expect(await problems({ 'index.html': 'x', '.MarQuee/x.txt': 'x' })).toEqual(['reserved_path .MarQuee']);
    expect(await problems({ 'index.html': 'x', '.marquee': 'x' })).toEqual(['reserved_path .marquee']);
    // Elsewhere the name is an ordinary dot-path: ignored, not refused.
    const nested = await packApplication(tree({ 'index.html': 'x', 'sub/.marquee/x.txt': 'x', '.marqueeignore': '' }));
    expect(nested.files.map((f) => f.path)).toEqual(['index.html']);
  });

  it('refuses paths deeper than 16 levels or longer than 255 bytes', async () => {
    const deep = `${Array.from({ length: 16 }, (_, i) => `d${i}`).join('/')}/f.txt`;
    expect(await problemCodes(tree({ 'index.html': 'x', [deep]: 'x' }))).toEqual(['path_too_deep']);
    const fits = `${Array.from({ length: 15 }, (_, i) => `d${i}`).join('/')}/f.txt`;
    expect(await problemCodes(tree({ 'index.html': 'x', [fits]: 'x' }))).toEqual([]);
    const long = `${'a'.repeat(200)}/${'b'.repeat(60)}.txt`;
    expect(await problemCodes(tree({ 'index.html': 'x', [long]: 'x' }))).toEqual(['path_too_long']);
    // A long path that fits still packs (split into ustar prefix and name).
    const packed = await packApplication(
      tree({ 'index.html': 'x', [`${'a'.repeat(150)}/${'b'.repeat(90)}.txt`]: 'y' }),
    );
    expect((await extract(packed.archive)).map((e) => e.name)).toContain(`${'a'.repeat(150)}/${'b'.repeat(90)}.txt`);
  });
});

describe('limits', () => {
  it('refuses a file over the single-file limit', async () => {
    expect(
      await problemCodes(tree({ 'index.html': 'x', 'big.bin': Buffer.alloc(11) }), { limits: { fileBytes: 10 } }),
    ).toEqual(['file_too_large']);
  });

  it('refuses more files than allowed, counting the runtime', async () => {
    const dir = tree({ 'index.html': 'x', 'a.txt': 'a', 'b.txt': 'b' });
    expect(await problemCodes(dir, { limits: { fileCount: 3 } })).toEqual([]);
    expect(await problemCodes(dir, { limits: { fileCount: 3 }, runtime: RUNTIME })).toEqual(['too_many_files']);
  });

  it('refuses an expanded size over the limit, counting the runtime', async () => {
    const dir = tree({ 'index.html': '0123456789' });
    expect(await problemCodes(dir, { limits: { expandedBytes: 10 } })).toEqual([]);
    expect(
      await problemCodes(dir, {
        limits: { expandedBytes: 10 + RUNTIME.length + RUNTIME_MARKER.length },
        runtime: RUNTIME,
      }),
    ).toEqual(['expanded_too_large']);
  });

  it('refuses an archive over the compressed limit', async () => {
    const dir = tree({ 'index.html': crypto.randomBytes(64 * 1024) });
    expect(await problemCodes(dir, { limits: { compressedBytes: 32 * 1024 } })).toEqual(['compressed_too_large']);
  });

  it('lists every problem at once', async () => {
    const dir = tree({ 'a.txt': 'x', 'A.txt': 'y', 'big.bin': Buffer.alloc(20) });
    expect((await problemCodes(dir, { limits: { fileBytes: 10 } })).sort()).toEqual([
      'duplicate_path',
      'file_too_large',
      'index_missing',
    ]);
  });
});

describe('application name header', () => {
  it('sends ASCII names as they are and other names in RFC 8187 form', () => {
    expect(applicationNameHeader('  Lobby board  ')).toEqual(['Marquee-Application-Name', 'Lobby board']);
    expect(applicationNameHeader('Café (Lobby)')).toEqual([
      'Marquee-Application-Name*',
      "UTF-8''Caf%C3%A9%20%28Lobby%29",
    ]);
  });

  it('refuses empty, overlong and control-character names', () => {
    expect(applicationNameHeader('   ')).toBeInstanceOf(Error);
    expect(applicationNameHeader('x'.repeat(121))).toBeInstanceOf(Error);
    expect(applicationNameHeader('two\r\nlines')).toBeInstanceOf(Error);
  });

  it('fails the pack on a bad name', async () => {
    expect(await problemCodes(tree({ 'index.html': 'x' }), { name: 'bad\nname' })).toEqual(['invalid_name']);
  });
});
