// The browser's packer makes archives the server's reader takes, with honest figures, and refuses
// what `marquee app pack` refuses.
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import {
  archiveFile,
  BrowserPackError,
  type FolderFile,
  folderFiles,
  packFolder,
  splitName,
  tarFacts,
  zipFiles,
} from './browser-pack';

const file = (path: string, text: string): FolderFile => ({ path, blob: new Blob([text]) });

async function entriesOf(archive: Blob): Promise<{ name: string; type: string; text: string }[]> {
  const bytes = zlib.gunzipSync(Buffer.from(await archive.arrayBuffer()));
  const extract = tar.extract();
  const out: { name: string; type: string; text: string }[] = [];
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c) => chunks.push(c as Buffer));
      stream.on('end', () => {
        out.push({ name: header.name, type: header.type ?? '', text: Buffer.concat(chunks).toString() });
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(bytes);
  await done;
  return out;
}

async function problemsOf(files: FolderFile[]): Promise<string[]> {
  try {
    await packFolder(files);
  } catch (error) {
    if (error instanceof BrowserPackError) return error.problems.map((p) => p.code);
    throw error;
  }
  return [];
}

describe('packing a chosen folder', () => {
  it('writes a gzipped ustar archive sorted by name, with directories, and declares its figures', async () => {
    const packed = await packFolder(
      [
        file('index.html', '<!doctype html><title>hi</title>'),
        file('assets/app.js', 'console.log(1)'),
        file('.marqueeignore', 'drafts/\n'),
        file('drafts/old.html', 'old'),
        file('assets/app.js.map', '{}'),
      ],
      '  Lobby board ',
    );
    const entries = await entriesOf(packed.archive as Blob);
    expect(entries.map((e) => [e.name, e.type])).toEqual([
      ['assets/', 'directory'],
      ['assets/app.js', 'file'],
      ['index.html', 'file'],
    ]);
    expect(entries[2]!.text).toBe('<!doctype html><title>hi</title>');
    expect(packed).toMatchObject({ fileCount: 2, expandedBytes: 14 + 32, name: 'Lobby board', sdkVersion: '1' });
    expect(packed.ignored.sort()).toEqual(['.marqueeignore', 'assets/app.js.map', 'drafts/old.html']);
  });

  it('names files relative to the chosen folder', () => {
    const chosen = new File(['x'], 'index.html');
    Object.defineProperty(chosen, 'webkitRelativePath', { value: 'build/sub/index.html' });
    expect(folderFiles([chosen]).map((f) => f.path)).toEqual(['sub/index.html']);
  });

  it('writes names longer than 100 bytes with a ustar prefix the reader joins back', async () => {
    const deep = `${'d'.repeat(60)}/${'e'.repeat(60)}/file.js`;
    expect(splitName(deep)).toEqual({ prefix: `${'d'.repeat(60)}/${'e'.repeat(60)}`, name: 'file.js' });
    const packed = await packFolder([file('index.html', 'x'), file(deep, 'y')]);
    expect((await entriesOf(packed.archive as Blob)).map((e) => e.name)).toContain(deep);
  });

  it('refuses a folder without index.html, reserved names and names that collide once case-folded', async () => {
    expect(await problemsOf([file('page.html', 'x')])).toEqual(['index_missing']);
    expect(await problemsOf([file('index.html', 'x'), file('_marquee/runtime.js', 'x')])).toEqual(['reserved_path']);
    expect(await problemsOf([file('index.html', 'x'), file('.marquee/x', 'x')])).toEqual(['reserved_path']);
    expect(await problemsOf([file('index.html', 'x'), file('A.js', 'x'), file('a.js', 'y')])).toEqual([
      'duplicate_path',
    ]);
    expect(await problemsOf([file('index.html', 'x'), file('a\\b.js', 'x')])).toEqual(['backslash']);
    const bridged = '<script src="./_marquee/runtime.js" data-marquee-sdk="1"></script>';
    expect(await problemsOf([file('index.html', bridged)])).toEqual(['runtime_missing']);
    const plain = '<script src="_marquee/runtime.js"></script>';
    expect(await problemsOf([file('index.html', plain)])).toEqual(['runtime_missing']);
  });
});

describe('an archive someone made', () => {
  it('counts the regular files of a .tar.gz and their sizes, and sends it as it is', async () => {
    const packed = await packFolder([file('index.html', 'hello'), file('a/b.css', 'body{}')]);
    const made = new File([packed.archive as Blob], 'site.tar.gz');
    const facts = await archiveFile(made, 'Site');
    expect(facts).toMatchObject({ fileCount: 2, expandedBytes: 11, name: 'Site' });
    expect(facts.archive).toBe(made);
  });

  it('gzips a plain .tar and counts what it holds', async () => {
    const packed = await packFolder([file('index.html', 'hello')]);
    const plain = zlib.gunzipSync(Buffer.from(await (packed.archive as Blob).arrayBuffer()));
    const facts = await archiveFile(new File([plain], 'site.tar'));
    expect(facts).toMatchObject({ fileCount: 1, expandedBytes: 5 });
    expect(zlib.gunzipSync(Buffer.from(await (facts.archive as Blob).arrayBuffer())).equals(plain)).toBe(true);
  });

  it('refuses what is not a tar archive', async () => {
    await expect(archiveFile(new File(['not an archive at all'], 'notes.txt'))).rejects.toThrow(BrowserPackError);
  });

  it('reads a tar stream in chunks of any size', async () => {
    const packed = await packFolder([file('index.html', 'x'.repeat(700)), file('b.js', 'y'.repeat(1300))]);
    const plain = zlib.gunzipSync(Buffer.from(await (packed.archive as Blob).arrayBuffer()));
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= plain.length) return controller.close();
        controller.enqueue(plain.subarray(at, at + 77));
        at += 77;
      },
    });
    expect(await tarFacts(stream)).toEqual({ fileCount: 2, expandedBytes: 2000 });
  });
});

/** A minimal zip (stored or deflated entries, optional unix modes), as zip tools write them. */
function zipOf(
  entries: { name: string; data: string; deflate?: boolean; mode?: number; flags?: number }[],
): Uint8Array<ArrayBuffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const raw = Buffer.from(e.data);
    const data = e.deflate ? zlib.deflateRawSync(raw) : raw;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.flags ?? 0x800, 6);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.flags ?? 0x800, 8);
    central.writeUInt16LE(e.deflate ? 8 : 0, 10);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}

describe('a .zip archive', () => {
  it('is repacked as a tar.gz from its stored and deflated files, a wrapping folder taken as the root', async () => {
    const zip = zipOf([
      { name: 'build/', data: '' },
      { name: 'build/index.html', data: '<!doctype html><p>zipped</p>', deflate: true },
      { name: 'build/css/site.css', data: 'p { color: red }' },
      { name: '__MACOSX/build/._index.html', data: 'fork' },
    ]);
    const facts = await archiveFile(new File([zip], 'site.zip'), 'Zipped');
    expect(facts).toMatchObject({ fileCount: 2, expandedBytes: 28 + 16, name: 'Zipped' });
    const entries = await entriesOf(facts.archive as Blob);
    expect(entries.map((e) => e.name)).toEqual(['css/', 'css/site.css', 'index.html']);
    expect(entries[2]!.text).toBe('<!doctype html><p>zipped</p>');
  });

  it('refuses symbolic links and encrypted entries by name', async () => {
    const link = zipOf([
      { name: 'index.html', data: 'x' },
      { name: 'secret', data: '/etc/passwd', mode: 0o120777 },
    ]);
    await expect(zipFiles(new Blob([link]))).rejects.toThrow(/secret: is a symbolic link/);
    const locked = zipOf([{ name: 'index.html', data: 'x', flags: 0x801 }]);
    await expect(zipFiles(new Blob([locked]))).rejects.toThrow(/index.html: is encrypted/);
  });

  it('refuses an entry that climbs out of the root or is absolute, naming the server’s rule', async () => {
    const climbing = zipOf([
      { name: 'index.html', data: 'x' },
      { name: '../evil.html', data: 'x' },
    ]);
    await expect(archiveFile(new File([climbing], 'evil.zip'))).rejects.toThrow(
      '../evil.html: contains a ".." segment (parent_segment)',
    );
    const inside = zipOf([
      { name: 'index.html', data: 'x' },
      { name: 'a/../../b.html', data: 'x' },
    ]);
    await expect(zipFiles(new Blob([inside]))).rejects.toThrow(/\(parent_segment\)/);
    const absolute = zipOf([{ name: '/etc/index.html', data: 'x' }]);
    await expect(zipFiles(new Blob([absolute]))).rejects.toThrow(/\(absolute_path\)/);
  });

  it('names what it left out, and says archive, not folder, when index.html is missing', async () => {
    const zip = zipOf([
      { name: 'index.html', data: 'x' },
      { name: '.env', data: 'SECRET=1' },
      { name: 'app.js.map', data: '{}' },
    ]);
    expect((await archiveFile(new File([zip], 'site.zip'))).ignored).toEqual(['.env', 'app.js.map']);
    const empty = zipOf([{ name: 'page.html', data: 'x' }]);
    await expect(archiveFile(new File([empty], 'site.zip'))).rejects.toThrow(
      'the archive has no index.html at its root (index_missing)',
    );
  });
});
