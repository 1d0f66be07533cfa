// What an application archive may contain, as pure functions of its entries: the spec's limits,
// the entry types, and the path rules (no traversal, no links, no collisions once normalized).
import { CONTROL_CHARACTER, LIMITS } from '../../sdk/contract/limits';
import { RELEASE_ENTRY, UPLOAD_HEADERS } from '../../sdk/contract/applications';
import { caseFold, DRIVE_PREFIX, replacementCharacterRule, reservedRootRule } from '../../sdk/contract/archive-paths';
import { echo } from '../../sdk/contract/untrusted-text';
import { problem, type ProblemError } from '../problem';

export const COMPRESSED_BYTES_MAX = LIMITS.application_compressed_bytes; // spec: archive at most 100 MiB as sent
export const EXPANDED_BYTES_MAX = LIMITS.application_expanded_bytes; // spec: 250 MiB of files once expanded
export const FILE_COUNT_MAX = LIMITS.application_file_count; // spec: 5000 files per application
export const FILE_BYTES_MAX = LIMITS.application_file_bytes; // spec: single file at most 32 MiB
export const PATH_DEPTH_MAX = LIMITS.application_path_depth; // spec: at most 16 segments
export const PATH_BYTES_MAX = LIMITS.application_path_bytes; // spec: at most 255 bytes of UTF-8
/** Directory entries are not files and the spec does not count them; one per file is more than any packed app needs. */
export const DIRECTORY_ENTRIES_MAX = LIMITS.application_file_count;
/**
 * Tar framing per entry beyond its file bytes: the 512-byte header, up to 511 bytes of padding and
 * room for a pax or GNU long-name header. Together with the declared sizes it bounds how far the
 * decompressed stream may grow before it is a gzip bomb.
 */
export const TAR_OVERHEAD_PER_ENTRY = 4096;
/** End-of-archive blocks and record padding (tar writes whole 10 KiB records). */
export const TAR_TRAILER_BYTES = 20 * 512;

/** Every rejection of the archive's content: an invalid_request whose errors name the rule. */
export function archiveRejection(code: string, detail: string, field = 'archive'): ProblemError {
  return problem('invalid_request', detail, { errors: [{ field, code, detail }] });
}

/** The most decompressed tar bytes an archive matching `declared` can need. */
export function inflatedBytesBound(declared: { expandedBytes: number; fileCount: number }): number {
  return (
    declared.expandedBytes + (declared.fileCount + DIRECTORY_ENTRIES_MAX) * TAR_OVERHEAD_PER_ENTRY + TAR_TRAILER_BYTES
  );
}

/** Most of an archive path a problem detail repeats (paths may be 255 bytes; most fit whole). */
const SHOWN_PATH_MAX_CHARACTERS = 300;

/** A name fit for a problem detail: quoted, unsafe characters escaped, and shortened. */
export function shown(name: string): string {
  return `"${echo(
    name.replace(/["\\]/g, (c) => `\\${c}`),
    SHOWN_PATH_MAX_CHARACTERS,
  )}"`;
}

export type EntryKind = 'file' | 'directory';

/** The fields of a tar header the rules look at (tar-stream's Header, narrowed). */
export interface EntryHeader {
  name: string;
  type: string | null;
  size: number;
  pax?: unknown;
}

const TYPE_NAMES: Record<string, string> = {
  symlink: 'a symbolic link',
  link: 'a hard link',
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a FIFO',
  'contiguous-file': 'a contiguous file',
};

/** Only regular files and directories; links, devices, FIFOs, sparse files and unknown types are refused. */
export function entryKind(header: EntryHeader): EntryKind | ProblemError {
  if (header.type === 'directory') return 'directory';
  if (header.type === 'file') {
    const pax = (header.pax ?? {}) as Record<string, string>;
    if (Object.keys(pax).some((key) => key.startsWith('GNU.sparse'))) {
      return archiveRejection(
        'unsupported_entry',
        `${shown(header.name)} is a sparse file; only regular files and directories are allowed`,
      );
    }
    return 'file';
  }
  const what = (header.type && TYPE_NAMES[header.type]) ?? 'an entry of an unknown type';
  return archiveRejection(
    'unsupported_entry',
    `${shown(header.name)} is ${what}; only regular files and directories are allowed`,
  );
}

export interface EntryPath {
  /** NFC, `/`-separated, no leading `./`, no trailing `/`; empty for the archive root itself. */
  path: string;
  segments: string[];
}

/** Normalizes one entry's path or says which rule it breaks. */
export function entryPath(raw: string, kind: EntryKind): EntryPath | ProblemError {
  const reject = (code: string, why: string) => archiveRejection(code, `path ${shown(raw)} ${why}`);
  if (CONTROL_CHARACTER.test(raw)) return reject('control_character', 'contains a NUL or control character');
  // tar-stream decodes names as UTF-8; invalid sequences arrive as U+FFFD.
  const replacement = replacementCharacterRule(raw);
  if (replacement) return reject(replacement.code, replacement.why);
  if (raw.includes('\\')) return reject('backslash', 'contains a backslash');
  if (raw.startsWith('/') || DRIVE_PREFIX.test(raw)) return reject('absolute_path', 'is absolute');
  let rest = raw;
  // Archives made with `tar -C dir .` name everything `./…`; that prefix means the root.
  while (rest.startsWith('./')) rest = rest.slice(2);
  if (rest === '' || rest === '.') {
    return kind === 'directory' ? { path: '', segments: [] } : reject('empty_segment', 'names no file');
  }
  if (kind === 'directory' && rest.endsWith('/')) rest = rest.slice(0, -1);
  const segments = rest.split('/');
  if (segments.includes('..')) return reject('parent_segment', 'contains a ".." segment');
  if (segments.includes('.')) return reject('dot_segment', 'contains a "." segment');
  if (segments.includes('')) return reject('empty_segment', 'contains an empty segment');
  const path = rest.normalize('NFC');
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > PATH_BYTES_MAX) return reject('path_too_long', `is ${bytes} bytes long; the limit is ${PATH_BYTES_MAX}`);
  if (segments.length > PATH_DEPTH_MAX)
    return reject('path_too_deep', `is ${segments.length} levels deep; the limit is ${PATH_DEPTH_MAX}`);
  const reserved = reservedRootRule(path);
  if (reserved) return reject(reserved.code, reserved.why);
  return { path, segments: path.split('/') };
}

/** The shared fold (sdk/contract/archive-paths.ts), exported here for the rules' callers. */
export { caseFold };

interface Seen {
  path: string;
  kind: EntryKind;
  /** False for a directory only implied by a file beneath it. */
  explicit: boolean;
}

/** The paths of one archive so far: refuses duplicates, case-fold collisions and file/directory clashes. */
export class ReleasePaths {
  private readonly byFold = new Map<string, Seen>();
  private directories = 0;

  add(entry: EntryPath, kind: EntryKind): ProblemError | undefined {
    if (entry.path === '') return undefined;
    for (let depth = 1; depth < entry.segments.length; depth++) {
      const parent = entry.segments.slice(0, depth).join('/');
      const seen = this.byFold.get(caseFold(parent));
      if (!seen) {
        this.byFold.set(caseFold(parent), { path: parent, kind: 'directory', explicit: false });
        continue;
      }
      if (seen.path !== parent) return collision(entry.path, seen.path);
      if (seen.kind === 'file') {
        return archiveRejection(
          'path_conflict',
          `path ${shown(entry.path)} needs ${shown(parent)} to be a directory, but it is a file`,
        );
      }
    }
    const fold = caseFold(entry.path);
    const seen = this.byFold.get(fold);
    if (seen) {
      if (seen.path !== entry.path) return collision(entry.path, seen.path);
      if (seen.kind !== kind) {
        return archiveRejection('path_conflict', `path ${shown(entry.path)} is both a file and a directory`);
      }
      if (kind === 'file' || seen.explicit) {
        return archiveRejection(
          'duplicate_path',
          `path ${shown(entry.path)} appears more than once (after NFC normalization)`,
        );
      }
      seen.explicit = true;
    } else {
      this.byFold.set(fold, { path: entry.path, kind, explicit: true });
    }
    if (kind === 'directory' && ++this.directories > DIRECTORY_ENTRIES_MAX) {
      return archiveRejection(
        'too_many_directories',
        `the archive has more than ${DIRECTORY_ENTRIES_MAX} directory entries`,
      );
    }
    return undefined;
  }

  hasFile(path: string): boolean {
    const seen = this.byFold.get(caseFold(path));
    return seen !== undefined && seen.path === path && seen.kind === 'file';
  }
}

function collision(path: string, other: string): ProblemError {
  return archiveRejection(
    'case_collision',
    `path ${shown(path)} differs from ${shown(other)} only by letter case or Unicode form`,
  );
}

/** Running totals of regular files, refused the moment a declared or absolute limit would be passed. */
export class ArchiveTotals {
  files = 0;
  expandedBytes = 0;

  constructor(private readonly declared: { expandedBytes: number; fileCount: number }) {}

  /** Checks a regular file's header before any of its bytes are read. */
  admitFile(path: string, size: number): ProblemError | undefined {
    if (size > FILE_BYTES_MAX) {
      return archiveRejection(
        'file_too_large',
        `file ${shown(path)} is ${size} bytes; a single file may be at most ${FILE_BYTES_MAX}`,
      );
    }
    const files = this.files + 1;
    if (files > this.declared.fileCount) {
      return archiveRejection(
        'file_count_exceeded',
        `the archive has more files than the ${this.declared.fileCount} declared in ${UPLOAD_HEADERS.fileCount}`,
        UPLOAD_HEADERS.fileCount,
      );
    }
    if (files > FILE_COUNT_MAX)
      return archiveRejection('file_count_exceeded', `the archive has more than ${FILE_COUNT_MAX} files`);
    const expanded = this.expandedBytes + size;
    if (expanded > this.declared.expandedBytes) {
      return archiveRejection(
        'expanded_bytes_exceeded',
        `the files expand to more than the ${this.declared.expandedBytes} bytes declared in ${UPLOAD_HEADERS.expandedBytes}`,
        UPLOAD_HEADERS.expandedBytes,
      );
    }
    if (expanded > EXPANDED_BYTES_MAX) {
      return archiveRejection('expanded_bytes_exceeded', `the files expand to more than ${EXPANDED_BYTES_MAX} bytes`);
    }
    this.files = files;
    this.expandedBytes = expanded;
    return undefined;
  }

  /** Once the archive ended: the declared figures must be exact. */
  finalMismatch(): ProblemError | undefined {
    if (this.files !== this.declared.fileCount) {
      return archiveRejection(
        'file_count_mismatch',
        `the archive has ${this.files} files, not the ${this.declared.fileCount} declared in ${UPLOAD_HEADERS.fileCount}`,
        UPLOAD_HEADERS.fileCount,
      );
    }
    if (this.expandedBytes !== this.declared.expandedBytes) {
      return archiveRejection(
        'expanded_bytes_mismatch',
        `the files expand to ${this.expandedBytes} bytes, not the ${this.declared.expandedBytes} declared in ${UPLOAD_HEADERS.expandedBytes}`,
        UPLOAD_HEADERS.expandedBytes,
      );
    }
    return undefined;
  }
}

const BLOCK = 512;
const ZERO_BLOCK = Buffer.alloc(BLOCK);

/** Bytes a tar entry takes after its header: its data, padded to whole blocks (directories have none). */
export function paddedDataBytes(kind: EntryKind, size: number): number {
  return kind === 'directory' ? 0 : Math.ceil(size / BLOCK) * BLOCK;
}

/**
 * The end-of-archive marker (D-093: whatever follows it must be empty). GNU tar, bsdtar and
 * Python's tarfile stop at the first zero block where a header belongs; tar-stream skips zero
 * blocks and reads on. Fed the inflated tar stream, this keeps the runs of zero blocks not yet
 * known to be file data; told where each entry's header starts and its data ends, it finds a
 * zero block between two entries, and at the end anything but zeros after the marker.
 */
export class EndOfArchive {
  /** Whole blocks fed so far, in bytes. */
  private fed = 0;
  /** The incomplete block at the end of what was fed. */
  private partial = Buffer.alloc(0);
  /** Runs of zero blocks, [start, end) in the tar stream, from `boundary` on. */
  private zeroRuns: [number, number][] = [];
  /** Where the last entry's data ends: the next header, or the marker, belongs here. */
  private boundary = 0;
  /** Start of the last block that is not all zeros. */
  private lastNonZero = -1;

  feed(chunk: Buffer): void {
    const data = this.partial.length > 0 ? Buffer.concat([this.partial, chunk]) : chunk;
    let at = 0;
    for (; at + BLOCK <= data.length; at += BLOCK) {
      const start = this.fed + at;
      if (data.compare(ZERO_BLOCK, 0, BLOCK, at, at + BLOCK) !== 0) {
        this.lastNonZero = start;
        continue;
      }
      const run = this.zeroRuns.at(-1);
      if (run && run[1] === start) run[1] = start + BLOCK;
      else this.zeroRuns.push([start, start + BLOCK]);
    }
    this.fed += at;
    this.partial = Buffer.from(data.subarray(at));
  }

  /** An entry whose header starts at `headerAt`, with `dataBytes` after it (paddedDataBytes). */
  entry(path: string, headerAt: number, dataBytes: number): ProblemError | undefined {
    if (this.markerBefore(headerAt) !== undefined)
      return afterEnd(`${shown(path)} comes after the end-of-archive marker`);
    this.boundary = headerAt + BLOCK + dataBytes;
    // Zero blocks of the entry's own data are no marker.
    this.zeroRuns = this.zeroRuns
      .filter(([, end]) => end > this.boundary)
      .map(([start, end]) => [Math.max(start, this.boundary), end]);
    return undefined;
  }

  /** Once the tar stream ended: after the marker, zeros only. */
  end(): ProblemError | undefined {
    const marker = this.markerBefore(Number.POSITIVE_INFINITY);
    if (marker === undefined) return undefined;
    if (this.lastNonZero > marker || this.partial.some((byte) => byte !== 0))
      return afterEnd('the archive holds data after its end-of-archive marker');
    return undefined;
  }

  /** Where the first zero block between the last entry's data and `headerAt` starts, if any. */
  private markerBefore(headerAt: number): number | undefined {
    const run = this.zeroRuns.find(([start, end]) => end > this.boundary && start < headerAt);
    return run === undefined ? undefined : Math.max(run[0], this.boundary);
  }
}

function afterEnd(what: string): ProblemError {
  return archiveRejection(
    'after_end_of_archive',
    `${what}; tar and other tools stop reading there, so it would be published unseen`,
  );
}

export function missingEntry(): ProblemError {
  return archiveRejection('missing_entry', `the archive has no ${RELEASE_ENTRY} at its root`);
}
