// Application releases unpacked from their mirrored packages (marquee.webapp-package/v1: a
// deterministic tar.gz of regular files), one directory per release, served on the release's own
// local origin. A tree is extracted beside its final place and renamed in whole, so a release
// directory is either complete or absent; it is an entry of the mirror (budget, LRU, protection).
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { Mirror } from './mirror';
import { syncDirectory } from './durable';

export const TREE_KIND = 'tree';
export const treeKey = (releaseId: string) => `tree:${releaseId}`;
const RELEASE_ID = /^rel_[A-Za-z0-9_-]{1,120}$/;
/** reference limits: depth 16, 255 bytes a path; anything else in a package is not ours. */
const MAX_PATH_BYTES = 255;
const MAX_DEPTH = 16;
/** A tree's last file: written (and flushed) once every other file is, with the size of each. */
const MARKER = '.complete';

interface TreeMarker {
  package_sha256: string;
  /** Every file of the package by its path in the tree, with its size. */
  files: Record<string, number>;
}

export class ReleaseTrees {
  readonly dir: string;
  private readonly extracting = new Map<string, Promise<void>>();

  constructor(private readonly mirror: Mirror) {
    this.dir = path.join(mirror.dir, 'releases');
    fs.mkdirSync(this.dir, { recursive: true });
    mirror.onRemove(TREE_KIND, (key) =>
      fs.rmSync(this.treeDir(key.slice('tree:'.length)), { recursive: true, force: true }),
    );
    // Leftovers of an extraction a power cut interrupted.
    for (const name of fs.readdirSync(this.dir)) {
      if (name.includes('.tmp-')) fs.rmSync(path.join(this.dir, name), { recursive: true, force: true });
    }
  }

  treeDir(releaseId: string): string {
    if (!RELEASE_ID.test(releaseId)) throw new Error('not a release id');
    return path.join(this.dir, releaseId);
  }

  /** Whether the tree is there (its marker): cheap, asked on every request of its origin. */
  has(releaseId: string): boolean {
    return fs.existsSync(path.join(this.treeDir(releaseId), MARKER));
  }

  /**
   * Whether the tree holds every file of its package at its size. A power cut can leave a named
   * tree with files short or empty (written, renamed, not yet on disk) in a tree from before the
   * flushes below; a marker of that version lists no files and is not trusted either.
   */
  intact(releaseId: string): boolean {
    const dir = this.treeDir(releaseId);
    try {
      const marker = JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8')) as TreeMarker;
      if (typeof marker?.files !== 'object' || marker.files === null) return false;
      return Object.entries(marker.files).every(([name, size]) => fs.statSync(path.join(dir, name)).size === size);
    } catch {
      return false;
    }
  }

  /** Unpacks the release's mirrored package (sha256) unless its tree is there whole already; one at a time per release. */
  extract(releaseId: string, packageSha256: string, keep: ReadonlySet<string>): Promise<void> {
    let running = this.extracting.get(releaseId);
    if (!running) {
      running = this.extractOnce(releaseId, packageSha256, keep).finally(() => this.extracting.delete(releaseId));
      this.extracting.set(releaseId, running);
    }
    return running;
  }

  private async extractOnce(releaseId: string, packageSha256: string, keep: ReadonlySet<string>): Promise<void> {
    if (this.intact(releaseId)) {
      this.mirror.touch(treeKey(releaseId));
      return;
    }
    const final = this.treeDir(releaseId);
    const tmp = `${final}.tmp-${process.pid}-${Date.now()}`;
    fs.rmSync(final, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    let bytes = 0;
    const files: Record<string, number> = {};
    try {
      const extract = tar.extract();
      extract.on('entry', (header, stream, next) => {
        const name = safeName(header.name);
        if (header.type !== 'file' || name === undefined) {
          stream.resume();
          stream.on('end', next);
          if (header.type === 'file') extract.destroy(new Error(`the package holds an unsafe path`));
          return;
        }
        const file = path.join(tmp, name);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        bytes += header.size ?? 0;
        files[name] = header.size ?? 0;
        // flush: each file is on disk before the tree gets its name (a signage box loses power unannounced).
        pipeline(stream, fs.createWriteStream(file, { mode: 0o644, flush: true })).then(() => next(), next);
      });
      // Room for the tree is made before it is written: the gzip trailer states the tar's size,
      // which bounds the files in it.
      this.mirror.makeRoom(gzipExpandedSize(this.mirror.filePath(packageSha256)), keep);
      await pipeline(fs.createReadStream(this.mirror.filePath(packageSha256)), zlib.createGunzip(), extract);
      const marker: TreeMarker = { package_sha256: packageSha256, files };
      writeFlushed(path.join(tmp, MARKER), JSON.stringify(marker));
      for (const dir of directoriesOf(tmp, Object.keys(files))) syncDirectory(dir);
      fs.renameSync(tmp, final);
      syncDirectory(this.dir);
    } catch (error) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw error;
    }
    this.mirror.register(treeKey(releaseId), TREE_KIND, bytes);
  }

  /**
   * The file of the release a URL path names, or undefined: decoded per segment (so `%2e%2e` is
   * `..` and refused), `…/` means its index.html, never outside the tree, never its marker.
   */
  file(releaseId: string, urlPath: string): string | undefined {
    const segments = urlPath.replace(/^\//, '').split('/');
    const decoded: string[] = [];
    for (const [i, raw] of segments.entries()) {
      let segment: string;
      try {
        segment = decodeURIComponent(raw);
      } catch {
        return undefined;
      }
      if (segment === '' && i === segments.length - 1) segment = 'index.html';
      if (segment === '' || segment === '.' || segment === '..' || /[\\/\u0000]/.test(segment)) return undefined;
      decoded.push(segment);
    }
    const relative = decoded.join('/').normalize('NFC');
    if (relative === MARKER) return undefined;
    const file = path.join(this.treeDir(releaseId), relative);
    try {
      return fs.statSync(file).isFile() ? file : undefined;
    } catch {
      return undefined;
    }
  }
}

function writeFlushed(file: string, text: string): void {
  const fd = fs.openSync(file, 'w', 0o644);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The tree's root and every directory its files are in. */
function directoriesOf(root: string, files: string[]): Set<string> {
  const dirs = new Set([root]);
  for (const file of files) {
    for (let dir = path.dirname(file); dir !== '.'; dir = path.dirname(dir)) dirs.add(path.join(root, dir));
  }
  return dirs;
}

/** ISIZE, the last four bytes of a gzip member: the uncompressed size modulo 2^32 (packages are far smaller). */
function gzipExpandedSize(file: string): number {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const trailer = Buffer.alloc(4);
    fs.readSync(fd, trailer, 0, 4, Math.max(0, size - 4));
    return trailer.readUInt32LE(0);
  } finally {
    fs.closeSync(fd);
  }
}

/** A package member's relative path, or undefined when it could escape the tree. */
function safeName(name: string): string | undefined {
  const clean = name.replace(/^\.\//, '');
  const parts = clean.split('/');
  if (
    clean === '' ||
    clean.startsWith('/') ||
    Buffer.byteLength(clean) > MAX_PATH_BYTES ||
    parts.length > MAX_DEPTH ||
    parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\u0000')) ||
    clean === MARKER
  )
    return undefined;
  return clean;
}
