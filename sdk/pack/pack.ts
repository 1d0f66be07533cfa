// App packing: a built static directory → a deterministic tar.gz plus the upload headers. Every
// rule the server enforces is checked here first (limits, path rules, no links or special files,
// a root index.html), so a bad upload fails on the author's machine with the precise reason.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { caseFold, nameRules, reservedRootRule } from '../contract/archive-paths';
import { LIMITS } from '../contract/limits';
import { SDK_VERSION } from '../bridge/protocol';
import { ArchiveTooLargeError, writeDeterministicArchive, type ArchiveEntry } from './deterministic-archive';
import { IGNORE_FILE, IgnoreRules } from './ignore-rules';
import {
  injectRuntimeMarker,
  markerState,
  referencesRuntime,
  RUNTIME_PATH,
  RuntimeMarkerError,
} from './runtime-injection';

export interface PackLimits {
  compressedBytes: number;
  expandedBytes: number;
  fileCount: number;
  fileBytes: number;
  pathDepth: number;
  pathBytes: number;
}

/** The spec's limits; a server may announce others in GET /api/v1/capabilities. */
export const DEFAULT_PACK_LIMITS: PackLimits = {
  compressedBytes: LIMITS.application_compressed_bytes,
  expandedBytes: LIMITS.application_expanded_bytes,
  fileCount: LIMITS.application_file_count,
  fileBytes: LIMITS.application_file_bytes,
  pathDepth: LIMITS.application_path_depth,
  pathBytes: LIMITS.application_path_bytes,
};

/** Pack limits from a capabilities document (GET /api/v1/capabilities). */
export function packLimitsFromCapabilities(
  capabilities: typeof LIMITS | Record<keyof typeof LIMITS, number>,
): PackLimits {
  return {
    compressedBytes: capabilities.application_compressed_bytes,
    expandedBytes: capabilities.application_expanded_bytes,
    fileCount: capabilities.application_file_count,
    fileBytes: capabilities.application_file_bytes,
    pathDepth: capabilities.application_path_depth,
    pathBytes: capabilities.application_path_bytes,
  };
}

export const APPLICATION_NAME_MAX = 120;

export type PackProblemCode =
  | 'not_a_directory'
  | 'index_missing'
  | 'symlink'
  | 'hardlink'
  | 'special_file'
  | 'invalid_utf8'
  | 'control_character'
  | 'backslash'
  | 'absolute_path'
  | 'duplicate_path'
  | 'path_too_long'
  | 'path_too_deep'
  | 'file_too_large'
  | 'too_many_files'
  | 'expanded_too_large'
  | 'compressed_too_large'
  | 'reserved_path'
  | 'runtime_marker'
  | 'runtime_missing'
  | 'changed_during_pack'
  | 'invalid_name';

export interface PackProblem {
  code: PackProblemCode;
  /** The offending path, relative to the packed directory. */
  path?: string;
  detail: string;
}

export class PackError extends Error {
  constructor(readonly problems: PackProblem[]) {
    super(problems.map((p) => (p.path ? `${p.path}: ${p.detail}` : p.detail)).join('\n'));
    this.name = 'PackError';
  }
}

/**
 * The text of the directory's .marqueeignore, or '' when it has none. One that exists but is not a
 * regular file (a FIFO would block the read for good) or cannot be read stops the pack: packing on
 * without its rules could put in what the author meant to leave out.
 */
async function readIgnoreFile(root: string): Promise<string> {
  const file = path.join(root, IGNORE_FILE);
  const stat = await fs.stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!stat) return '';
  if (!stat.isFile())
    throw new PackError([
      { code: 'special_file', path: IGNORE_FILE, detail: 'is not a regular file; its rules cannot be read' },
    ]);
  return fs.readFile(file, 'utf8');
}

export interface PackOptions {
  /** The bridge's classic script: added as _marquee/runtime.js and referenced from top-level HTML files. */
  runtime?: Uint8Array;
  /** Sent as Marquee-Application-Name (or its RFC 8187 form for non-ASCII names). */
  name?: string;
  limits?: Partial<PackLimits>;
}

export interface PackedFile {
  path: string;
  bytes: number;
}

export interface PackedApplication {
  archive: Buffer;
  /** Hex SHA-256 of the archive bytes. */
  sha256: string;
  expandedBytes: number;
  fileCount: number;
  /** The files in archive order (the runtime included when injected). */
  files: PackedFile[];
  /** Paths left out by the built-in rules or .marqueeignore (directories stand for their contents). */
  ignored: string[];
  /** Headers for POST /api/v1/applications (send the archive as the raw body). */
  headers: Record<string, string>;
}

interface ScannedFile {
  path: string;
  absolute: Buffer;
  bytes: number;
  /** Top-level HTML with the marker injected (bytes already final). */
  content?: Buffer;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
const HTML = /\.html?$/i;
/** Problems listed at most: past that the first ones tell the story. */
const MAX_PROBLEMS = 50;

function joinBytes(dir: Buffer, name: Buffer): Buffer {
  return Buffer.concat([dir, Buffer.from('/'), name]);
}

/** Where the default runtime is built (`npm run build:sdk`). */
export const DEFAULT_RUNTIME_FILE = path.resolve(import.meta.dirname, '../../dist/sdk/marquee-app.js');

/** The built classic bridge script, to pass as `runtime`. */
export async function defaultRuntimeScript(file = DEFAULT_RUNTIME_FILE): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch {
    throw new Error(`the bridge script ${file} does not exist; run \`npm run build:sdk\` first`);
  }
}

/** Packs `directory` into a deterministic archive and computes its upload headers. Throws PackError listing every problem found. */
export async function packApplication(directory: string, options: PackOptions = {}): Promise<PackedApplication> {
  const limits = { ...DEFAULT_PACK_LIMITS, ...options.limits };
  const problems: PackProblem[] = [];
  const problem = (code: PackProblemCode, detail: string, at?: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(at === undefined ? { code, detail } : { code, path: at, detail });
  };
  const nameHeader = options.name === undefined ? undefined : applicationNameHeader(options.name);
  if (nameHeader instanceof Error) problem('invalid_name', nameHeader.message);

  const root = path.resolve(directory);
  const rootStat = await fs.stat(root).catch(() => undefined);
  if (!rootStat?.isDirectory()) {
    const why = rootStat ? 'is not a directory' : 'does not exist';
    throw new PackError([{ code: 'not_a_directory', detail: `${directory} ${why}` }]);
  }

  const rules = IgnoreRules.parse(await readIgnoreFile(root));
  const files: ScannedFile[] = [];
  const directories = new Set<string>();
  const ignored: string[] = [];
  const seen = new Map<string, string>();
  const runtimeBytes = options.runtime?.length ?? 0;
  let tooMany = false;

  const checkPath = (rel: string): void => {
    // The server's own fold: ß and ss collide there, so they must collide here.
    const key = caseFold(rel);
    const earlier = seen.get(key);
    if (earlier !== undefined)
      problem('duplicate_path', `is the same name as ${earlier} after Unicode normalization or case folding`, rel);
    seen.set(key, rel);
    for (const broken of nameRules(rel, limits)) problem(broken.code, broken.why, broken.shown);
  };

  const walk = async (absolute: Buffer, relative: string): Promise<void> => {
    const names = (await fs.readdir(absolute, { encoding: 'buffer' })).sort(Buffer.compare);
    for (const raw of names) {
      if (tooMany) return;
      let name: string;
      try {
        name = STRICT_UTF8.decode(raw);
      } catch {
        problem('invalid_utf8', 'has a name that is not valid UTF-8', `${relative}${raw.toString('latin1')}`);
        continue;
      }
      const rel = `${relative}${name}`;
      const abs = joinBytes(absolute, raw);
      const stat = await fs.lstat(abs);
      // Checked before the ignore rules (which drop every dot-path): the author must learn that
      // these files would never be served, not find them silently missing.
      const reserved = reservedRootRule(rel);
      if (reserved) {
        problem(reserved.code, reserved.why, rel);
        continue;
      }
      if (rules.ignores(rel, stat.isDirectory())) {
        ignored.push(rel);
        continue;
      }
      if (stat.isSymbolicLink()) {
        problem('symlink', 'is a symbolic link; copy the target instead', rel);
      } else if (stat.isDirectory()) {
        checkPath(rel);
        await walk(abs, `${rel}/`);
      } else if (stat.isFile()) {
        checkPath(rel);
        if (stat.nlink > 1) problem('hardlink', 'has other hard links; copy it instead', rel);
        if (stat.size > limits.fileBytes)
          problem('file_too_large', `is ${stat.size} bytes; the limit is ${limits.fileBytes}`, rel);
        files.push({ path: rel, absolute: abs, bytes: stat.size });
        for (let at = rel.lastIndexOf('/'); at > 0; at = rel.lastIndexOf('/', at - 1))
          directories.add(rel.slice(0, at));
        if (files.length + (runtimeBytes > 0 ? 1 : 0) > limits.fileCount) {
          tooMany = true;
          problem('too_many_files', `more than ${limits.fileCount} files`);
        }
      } else {
        problem('special_file', 'is not a regular file or directory (device, FIFO or socket)', rel);
      }
    }
  };
  await walk(Buffer.from(root), '');

  if (!files.some((f) => f.path === 'index.html'))
    problem('index_missing', 'the directory has no index.html at its root');

  // Top-level HTML files are the entry points: the runtime marker goes there, and only there.
  for (const file of files) {
    if (file.path.includes('/') || !HTML.test(file.path) || file.bytes > limits.fileBytes) continue;
    const html = await fs.readFile(file.absolute);
    try {
      if (options.runtime) {
        file.content = injectRuntimeMarker(html);
        file.bytes = file.content.length;
      } else if (markerState(html) === 'present' || referencesRuntime(html)) {
        problem('runtime_missing', `references ${RUNTIME_PATH}; pack with the runtime to include it`, file.path);
      }
    } catch (error) {
      if (!(error instanceof RuntimeMarkerError)) throw error;
      problem('runtime_marker', error.message, file.path);
    }
  }

  const fileCount = files.length + (options.runtime ? 1 : 0);
  const expandedBytes = files.reduce((sum, f) => sum + f.bytes, 0) + runtimeBytes;
  if (expandedBytes > limits.expandedBytes)
    problem('expanded_too_large', `the files add up to ${expandedBytes} bytes; the limit is ${limits.expandedBytes}`);
  if (problems.length > 0) throw new PackError(problems);

  const entries: ArchiveEntry[] = [...directories].map((d) => ({ path: d, type: 'directory' as const }));
  for (const file of files) {
    entries.push({
      path: file.path,
      type: 'file',
      read: async () => {
        if (file.content) return file.content;
        const bytes = await fs.readFile(file.absolute);
        if (bytes.length !== file.bytes)
          throw new PackError([
            { code: 'changed_during_pack', path: file.path, detail: 'changed while it was being packed' },
          ]);
        if (file.path.includes('/') && HTML.test(file.path)) {
          try {
            if (markerState(bytes) === 'present') {
              throw new PackError([
                {
                  code: 'runtime_marker',
                  path: file.path,
                  detail: 'the runtime marker belongs in top-level HTML files only',
                },
              ]);
            }
          } catch (error) {
            if (error instanceof RuntimeMarkerError)
              throw new PackError([{ code: 'runtime_marker', path: file.path, detail: error.message }]);
            throw error;
          }
        }
        return bytes;
      },
    });
  }
  // The runtime has no directory entry of its own: the reserved directory is implied.
  if (options.runtime)
    entries.push({ path: RUNTIME_PATH, type: 'file', read: async () => Buffer.from(options.runtime!) });

  let archive: Buffer;
  try {
    archive = await writeDeterministicArchive(entries, limits.compressedBytes);
  } catch (error) {
    if (error instanceof ArchiveTooLargeError) {
      throw new PackError([
        { code: 'compressed_too_large', detail: `the archive exceeds ${limits.compressedBytes} bytes compressed` },
      ]);
    }
    throw error;
  }
  const sha256 = crypto.createHash('sha256').update(archive).digest('hex');
  const packedFiles: PackedFile[] = files.map((f) => ({ path: f.path, bytes: f.bytes }));
  if (options.runtime) packedFiles.push({ path: RUNTIME_PATH, bytes: runtimeBytes });
  packedFiles.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  return {
    archive,
    sha256,
    expandedBytes,
    fileCount,
    files: packedFiles,
    ignored,
    headers: uploadHeaders({ sha256, expandedBytes, fileCount, name: options.name }),
  };
}

/** The name header: plain ASCII as Marquee-Application-Name, anything else in its RFC 8187 form. */
export function applicationNameHeader(name: string): [string, string] | Error {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length === 0 || length > APPLICATION_NAME_MAX)
    return new Error(`the application name must be 1 to ${APPLICATION_NAME_MAX} characters`);
  if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(trimmed))
    return new Error('the application name must not contain control characters');
  if (/^[\x20-\x7e]+$/.test(trimmed)) return ['Marquee-Application-Name', trimmed];
  const encoded = Array.from(new TextEncoder().encode(trimmed), (b) =>
    /[A-Za-z0-9!#$&+\-.^_`|~]/.test(String.fromCharCode(b))
      ? String.fromCharCode(b)
      : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');
  return ['Marquee-Application-Name*', `UTF-8''${encoded}`];
}

/** Headers for POST /api/v1/applications, from an archive's digest, sizes and an optional name. */
export function uploadHeaders(input: {
  sha256: string;
  expandedBytes: number;
  fileCount: number;
  name?: string;
}): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/gzip',
    'Marquee-Archive-SHA256': input.sha256,
    'Marquee-Expanded-Bytes': String(input.expandedBytes),
    'Marquee-File-Count': String(input.fileCount),
    'Marquee-SDK-Version': SDK_VERSION,
  };
  if (input.name !== undefined) {
    const name = applicationNameHeader(input.name);
    if (name instanceof Error) throw name;
    headers[name[0]] = name[1];
  }
  return headers;
}
