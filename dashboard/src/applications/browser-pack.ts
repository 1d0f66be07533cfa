// Application archives made in the browser, the way `marquee app pack` (sdk/pack) makes them: a
// chosen folder is checked against the rules the server enforces (a root index.html, the limits,
// no reserved or colliding names, the built-in ignore rules and the folder's own .marqueeignore)
// and written as a ustar archive sorted by name, gzipped by the browser's CompressionStream. An
// archive someone already made (.tar.gz, .tgz or .tar) is read once for the figures the upload
// headers declare: its regular files' count and their expanded size.
import type { ArchiveFacts } from '../../../sdk/client/applications';
import { caseFold, nameRules, RUNTIME_DIRECTORY, reservedRootRule } from '../../../sdk/contract/archive-paths';
import { LIMITS } from '../../../sdk/contract/limits';
import { SDK_VERSION } from '../../../sdk/bridge/protocol';
import { IGNORE_FILE, IgnoreRules } from '../../../sdk/pack/ignore-rules';

/** A file of a chosen folder, its path relative to the folder (`/`-separated). */
export interface FolderFile {
  path: string;
  blob: Blob;
}

/** Why a folder cannot be packed: the same codes `marquee app pack` reports. */
export interface PackProblem {
  code: string;
  path?: string;
  detail: string;
}

export class BrowserPackError extends Error {
  constructor(readonly problems: PackProblem[]) {
    // Each names its rule by code, as the server's problem does (`parent_segment`).
    super(problems.map((p) => `${p.path ? `${p.path}: ` : ''}${p.detail} (${p.code})`).join('; '));
    this.name = 'BrowserPackError';
  }
}

const RUNTIME_MARKER_ATTRIBUTE = 'data-marquee-sdk';
/** The marker, or any other reference to the runtime's path (a plain script tag would load a 404). */
const usesRuntime = (html: string) =>
  html.includes(RUNTIME_MARKER_ATTRIBUTE) || html.includes(`${RUNTIME_DIRECTORY}/runtime.js`);
const NAME_LIMITS = { pathBytes: LIMITS.application_path_bytes, pathDepth: LIMITS.application_path_depth };
const MAX_PROBLEMS = 20;
const BLOCK = 512;
const encoder = new TextEncoder();

/**
 * The files of an `<input webkitdirectory>` choice relative to the chosen folder (the browser
 * names each `folder/sub/file`; the folder itself is the archive's root).
 */
export function folderFiles(files: readonly File[]): FolderFile[] {
  return files.map((file) => {
    const relative = file.webkitRelativePath || file.name;
    const slash = relative.indexOf('/');
    return { path: slash === -1 ? relative : relative.slice(slash + 1), blob: file };
  });
}

interface Entry {
  name: string;
  type: 'file' | 'directory';
  blob?: Blob;
}

/** What the files came from, for the problems' words: a chosen folder or a .zip being repacked. */
export type PackSource = 'folder' | 'archive';

/** Which files of a folder go into the archive, or every rule they break. */
export async function selectFolder(
  files: readonly FolderFile[],
  source: PackSource = 'folder',
): Promise<{ files: FolderFile[]; ignored: string[]; directories: string[] }> {
  const problems: PackProblem[] = [];
  const problem = (code: string, detail: string, path?: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(path === undefined ? { code, detail } : { code, path, detail });
  };
  const ignoreFile = files.find((f) => f.path === IGNORE_FILE);
  const rules = IgnoreRules.parse(ignoreFile ? await ignoreFile.blob.text() : '');
  const kept: FolderFile[] = [];
  const ignored: string[] = [];
  const directories = new Set<string>();
  const seen = new Map<string, string>();
  const check = (path: string) => {
    const folded = caseFold(path);
    const earlier = seen.get(folded);
    if (earlier !== undefined && earlier !== path)
      problem('duplicate_path', `is the same name as ${earlier} after Unicode normalization or case folding`, path);
    seen.set(folded, path);
  };
  for (const file of [...files].sort((a, b) => compareBytes(a.path, b.path))) {
    const path = file.path;
    const reserved = reservedRootRule(path);
    if (reserved) {
      problem(reserved.code, reserved.why, path);
      continue;
    }
    const segments = path.split('/');
    // An ignored directory leaves out everything in it (as the packer's walk never enters it).
    const ignoredDirectory = segments
      .slice(0, -1)
      .some((_, i) => rules.ignores(segments.slice(0, i + 1).join('/'), true));
    if (ignoredDirectory || rules.ignores(path, false)) {
      ignored.push(path);
      continue;
    }
    for (const broken of nameRules(path, NAME_LIMITS)) problem(broken.code, broken.why, broken.shown);
    if (file.blob.size > LIMITS.application_file_bytes)
      problem('file_too_large', `is ${file.blob.size} bytes; the limit is ${LIMITS.application_file_bytes}`, path);
    for (let i = 1; i < segments.length; i++) {
      const directory = segments.slice(0, i).join('/');
      if (!directories.has(directory)) check(directory);
      directories.add(directory);
    }
    check(path);
    kept.push(file);
  }
  if (kept.length > LIMITS.application_file_count)
    problem('too_many_files', `more than ${LIMITS.application_file_count} files`);
  if (!kept.some((f) => f.path === 'index.html'))
    problem('index_missing', `the ${source} has no index.html at its root`);
  // The bridge runtime is added by `marquee app pack --runtime`; the browser has no copy to add.
  for (const file of kept)
    if (!file.path.includes('/') && /\.html?$/i.test(file.path) && usesRuntime(await file.blob.text()))
      problem(
        'runtime_missing',
        `uses the SDK bridge (${RUNTIME_DIRECTORY}/runtime.js); pack it with \`marquee app pack --runtime\` and upload the archive`,
        file.path,
      );
  const expanded = kept.reduce((sum, f) => sum + f.blob.size, 0);
  if (expanded > LIMITS.application_expanded_bytes)
    problem(
      'expanded_too_large',
      `the files add up to ${expanded} bytes; the limit is ${LIMITS.application_expanded_bytes}`,
    );
  if (problems.length > 0) throw new BrowserPackError(problems);
  return { files: kept, ignored, directories: [...directories] };
}

/** An archive's upload figures; `ignored`, when it was packed here, names what the packer left out. */
export type PackedFacts = ArchiveFacts & { ignored?: string[] };

/** Packs a chosen folder: the archive and the figures its upload declares. */
export async function packFolder(
  files: readonly FolderFile[],
  name?: string,
  source: PackSource = 'folder',
): Promise<ArchiveFacts & { ignored: string[] }> {
  const selected = await selectFolder(files, source);
  const entries: Entry[] = [
    ...selected.directories.map((d) => ({ name: `${d}/`, type: 'directory' as const })),
    ...selected.files.map((f) => ({ name: f.path, type: 'file' as const, blob: f.blob })),
  ].sort((a, b) => compareBytes(a.name, b.name));
  const tar = await tarOf(entries);
  const archive = await gzip(tar);
  if (archive.size > LIMITS.application_compressed_bytes)
    throw new BrowserPackError([
      {
        code: 'compressed_too_large',
        detail: `the archive exceeds ${LIMITS.application_compressed_bytes} bytes compressed`,
      },
    ]);
  return {
    archive,
    fileCount: selected.files.length,
    expandedBytes: selected.files.reduce((sum, f) => sum + f.blob.size, 0),
    sdkVersion: SDK_VERSION,
    ...(name?.trim() ? { name: name.trim() } : {}),
    ignored: selected.ignored,
  };
}

function compareBytes(a: string, b: string): number {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

function octal(target: Uint8Array, offset: number, width: number, value: number): void {
  const text = `${value.toString(8).padStart(width - 1, '0')}\0`;
  target.set(encoder.encode(text), offset);
}

/** ustar splits a long name at a `/` into a prefix (≤ 155 bytes) and a name (≤ 100 bytes). */
export function splitName(name: string): { prefix: string; name: string } {
  const bytes = encoder.encode(name);
  if (bytes.length <= 100) return { prefix: '', name };
  for (let at = name.lastIndexOf('/', name.length - 2); at > 0; at = name.lastIndexOf('/', at - 1)) {
    const prefix = name.slice(0, at);
    const rest = name.slice(at + 1);
    if (encoder.encode(prefix).length <= 155 && encoder.encode(rest).length <= 100) return { prefix, name: rest };
  }
  throw new BrowserPackError([{ code: 'path_too_long', path: name, detail: 'cannot be written as a ustar name' }]);
}

/** One ustar header: mode 0644/0755, owner 0:0, mtime 0 (as sdk/pack writes them). */
export function tarHeader(name: string, type: 'file' | 'directory', size: number): Uint8Array {
  const header = new Uint8Array(BLOCK);
  const split = splitName(name);
  header.set(encoder.encode(split.name), 0);
  octal(header, 100, 8, type === 'directory' ? 0o755 : 0o644);
  octal(header, 108, 8, 0);
  octal(header, 116, 8, 0);
  octal(header, 124, 12, type === 'directory' ? 0 : size);
  octal(header, 136, 12, 0);
  header.set(encoder.encode('        '), 148);
  header[156] = type === 'directory' ? 0x35 : 0x30;
  header.set(encoder.encode('ustar\u000000'), 257);
  header.set(encoder.encode(split.prefix), 345);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.set(encoder.encode(`${sum.toString(8).padStart(6, '0')}\0 `), 148);
  return header;
}

async function tarOf(entries: readonly Entry[]): Promise<Blob> {
  const parts: BlobPart[] = [];
  for (const entry of entries) {
    const size = entry.blob?.size ?? 0;
    parts.push(tarHeader(entry.name, entry.type, size) as Uint8Array<ArrayBuffer>);
    if (entry.blob) {
      parts.push(entry.blob);
      const padding = (BLOCK - (size % BLOCK)) % BLOCK;
      if (padding) parts.push(new Uint8Array(padding));
    }
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return new Blob(parts);
}

export function gzip(body: Blob): Promise<Blob> {
  return new Response(body.stream().pipeThrough(new CompressionStream('gzip'))).blob();
}

/** The figures of a tar stream: regular files and their sizes (links and devices are the server's to refuse). */
export async function tarFacts(tar: ReadableStream<Uint8Array>): Promise<{ fileCount: number; expandedBytes: number }> {
  let fileCount = 0;
  let expandedBytes = 0;
  let header = new Uint8Array(BLOCK);
  let filled = 0;
  let skip = 0;
  let ended = false;
  const reader = tar.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    let at = 0;
    while (at < value.length && !ended) {
      if (skip > 0) {
        const n = Math.min(skip, value.length - at);
        skip -= n;
        at += n;
        continue;
      }
      const n = Math.min(BLOCK - filled, value.length - at);
      header.set(value.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled < BLOCK) continue;
      filled = 0;
      if (header.every((b) => b === 0)) {
        ended = true;
        break;
      }
      const size = Number.parseInt(
        new TextDecoder().decode(header.subarray(124, 136)).replace(/\0.*$/s, '').trim() || '0',
        8,
      );
      const type = String.fromCharCode(header[156]!);
      if (type === '0' || type === '\0' || type === '7') {
        fileCount++;
        expandedBytes += size;
      }
      skip = Math.ceil(size / BLOCK) * BLOCK;
      header = new Uint8Array(BLOCK);
    }
    if (ended) {
      await reader.cancel();
      break;
    }
  }
  return { fileCount, expandedBytes };
}

/** An archive someone made: a .tar.gz (sent as it is), a .tar (gzipped here) or a .zip (repacked), with its figures. */
export async function archiveFile(file: File, name?: string): Promise<PackedFacts> {
  if (/\.zip$/i.test(file.name) || (await isZip(file))) return packFolder(await zipFiles(file), name, 'archive');
  const gzipped = /\.(tar\.gz|tgz)$/i.test(file.name) || (await isGzip(file));
  const archive = gzipped ? file : await gzip(file);
  const tar = gzipped ? file.stream().pipeThrough(new DecompressionStream('gzip')) : file.stream();
  let facts: { fileCount: number; expandedBytes: number };
  try {
    facts = await tarFacts(tar as ReadableStream<Uint8Array>);
  } catch {
    throw new BrowserPackError([{ code: 'not_gzip', detail: `${file.name} is not a tar.gz or tar archive` }]);
  }
  if (facts.fileCount === 0)
    throw new BrowserPackError([
      { code: 'index_missing', detail: `${file.name} holds no files (is it a tar archive?)` },
    ]);
  return { archive, ...facts, ...(name?.trim() ? { name: name.trim() } : {}) };
}

async function isGzip(file: Blob): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  return head[0] === 0x1f && head[1] === 0x8b;
}

async function isZip(file: Blob): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  return head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

const ZIP_END = 0x06054b50;
const ZIP_CENTRAL = 0x02014b50;
const ZIP_LOCAL = 0x04034b50;
const UNIX_TYPE_MASK = 0o170000;
const UNIX_SYMLINK = 0o120000;

/**
 * The files of a .zip, to pack as a folder (the server takes tar.gz only). Stored and deflated
 * entries; directories are implied by the files; a zip of one folder (`build/index.html`) is that
 * folder's content; macOS resource forks (`__MACOSX/`) are left out. Refused: encrypted entries,
 * symbolic links, other methods and ZIP64 archives, each named.
 */
export async function zipFiles(zip: Blob): Promise<FolderFile[]> {
  const bytes = new Uint8Array(await zip.arrayBuffer());
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const refuse = (code: string, detail: string, path?: string): never => {
    throw new BrowserPackError([path === undefined ? { code, detail } : { code, path, detail }]);
  };
  let end = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--)
    if (view.getUint32(at, true) === ZIP_END) {
      end = at;
      break;
    }
  if (end === -1) refuse('not_zip', 'the file is not a zip archive');
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  if (count === 0xffff || at === 0xffffffff)
    refuse('unsupported_entry', 'ZIP64 archives are not supported; use a .tar.gz');
  const decoder = new TextDecoder();
  const files: FolderFile[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== ZIP_CENTRAL)
      refuse('corrupt_zip', 'the zip directory is damaged');
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const compressed = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const mode = view.getUint32(at + 38, true) >>> 16;
    const local = view.getUint32(at + 42, true);
    const path = decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    // What the server refuses in an archive is refused here, not left out as a dot-path would be.
    const unsafe = unsafeEntryRule(path);
    if (unsafe) refuse(unsafe.code, unsafe.why, path);
    if (path.endsWith('/') || path.startsWith('__MACOSX/')) continue;
    if (flags & 1) refuse('unsupported_entry', 'is encrypted', path);
    if ((mode & UNIX_TYPE_MASK) === UNIX_SYMLINK)
      refuse('symlink', 'is a symbolic link; zip the file it points to', path);
    if (view.getUint32(local, true) !== ZIP_LOCAL) refuse('corrupt_zip', 'the zip entry is damaged', path);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const data = bytes.slice(start, start + compressed);
    if (method === 0) files.push({ path, blob: new Blob([data]) });
    else if (method === 8)
      files.push({
        path,
        blob: await new Response(new Blob([data]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).blob(),
      });
    else
      refuse('unsupported_entry', `uses compression method ${method}; only stored and deflated entries are read`, path);
  }
  return withoutWrapper(files);
}

/**
 * The server's archive rules (server/applications/archive-rules.ts) that a name written into a zip
 * can break and a folder's names cannot: it escapes the root or reads as a path elsewhere.
 */
export function unsafeEntryRule(path: string): { code: string; why: string } | null {
  if (path.includes('\\')) return { code: 'backslash', why: 'contains a backslash' };
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return { code: 'absolute_path', why: 'is absolute' };
  if (path.split('/').includes('..')) return { code: 'parent_segment', why: 'contains a ".." segment' };
  return null;
}

/** A zip of one folder holds `folder/index.html`: that folder is the application's root. */
function withoutWrapper(files: FolderFile[]): FolderFile[] {
  if (files.length === 0 || files.some((f) => f.path === 'index.html')) return files;
  const first = files[0]!.path.split('/', 1)[0]!;
  const inside = files.every((f) => f.path.startsWith(`${first}/`));
  return inside ? files.map((f) => ({ ...f, path: f.path.slice(first.length + 1) })) : files;
}
