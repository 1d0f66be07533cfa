// Path rules of an application archive that the server enforces and the packer must check first,
// written once so the two cannot drift: the case fold behind collision checks, the refusal of
// U+FFFD in a name, and the root name the server keeps for its own answers on release hosts.
// Dependency-free: the bridge child imports PLAYER_ORIGIN_PATH from here.

/** The root directory name a release may not use: release hosts answer paths under it themselves. */
export const RESERVED_ROOT = '.marquee';

/** Where every release host answers the player origin its frames trust (spec-silent; see docs/decisions.md). */
export const PLAYER_ORIGIN_PATH = `/${RESERVED_ROOT}/player-origin`;

/**
 * Case fold for collision checks (file systems and CDNs that ignore case must not see two files
 * where the archive had one name): lower(upper(lower(s))) maps ß, ẞ and SS alike and final sigma
 * to sigma, which is as close to Unicode case folding as JavaScript gets without tables.
 */
export function caseFold(path: string): string {
  return path.toLowerCase().toUpperCase().toLowerCase().normalize('NFC');
}

export interface PathRuleBroken {
  code: 'invalid_utf8' | 'reserved_path';
  /** Completes "path X …". */
  why: string;
}

/**
 * U+FFFD in a name: the server's tar reader decodes names as UTF-8 and invalid sequences arrive as
 * U+FFFD, so it cannot tell a literal U+FFFD from broken bytes and refuses both.
 */
export function replacementCharacterRule(path: string): PathRuleBroken | undefined {
  return path.includes('\uFFFD')
    ? { code: 'invalid_utf8', why: 'is not valid UTF-8 (or contains U+FFFD, which stands for bytes that were not)' }
    : undefined;
}

/** A `/`-separated relative path whose first segment is the reserved root, in any letter case. */
export function reservedRootRule(path: string): PathRuleBroken | undefined {
  const first = path.split('/', 1)[0]!;
  return caseFold(first) === RESERVED_ROOT
    ? {
        code: 'reserved_path',
        why: `is under ${RESERVED_ROOT}/, which release hosts reserve for the server's own answers`,
      }
    : undefined;
}

/** The directory the bridge runtime is packed under (`marquee app pack --runtime`). */
export const RUNTIME_DIRECTORY = '_marquee';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const utf8 = new TextEncoder();

/** A path that starts like a Windows drive (`C:…`): archive readers there take it as absolute. */
export const DRIVE_PREFIX = /^[A-Za-z]:/;

export interface NameRuleBroken {
  code:
    | 'invalid_utf8'
    | 'control_character'
    | 'backslash'
    | 'absolute_path'
    | 'path_too_long'
    | 'path_too_deep'
    | 'reserved_path';
  /** Completes "path X …". */
  why: string;
  /** The path as a problem may show it (control characters escaped). */
  shown: string;
}

/**
 * Every rule a file or directory name of an archive breaks, checked by the CLI's packer and the
 * dashboard's folder packer alike (the reserved root and collisions are checked by the callers,
 * which need them at other points of their walks).
 */
export function nameRules(path: string, limits: { pathBytes: number; pathDepth: number }): NameRuleBroken[] {
  const broken: NameRuleBroken[] = [];
  const replacement = replacementCharacterRule(path);
  if (replacement) broken.push({ ...replacement, code: 'invalid_utf8', shown: path });
  if (CONTROL.test(path))
    broken.push({
      code: 'control_character',
      why: 'contains a control character',
      shown: JSON.stringify(path).slice(1, -1),
    });
  if (path.includes('\\'))
    broken.push({
      code: 'backslash',
      why: 'contains a backslash, which some systems read as a separator',
      shown: path,
    });
  if (DRIVE_PREFIX.test(path))
    broken.push({
      code: 'absolute_path',
      why: 'starts like a Windows drive ("c:"), which the server refuses as an absolute path',
      shown: path,
    });
  if (utf8.encode(path).length > limits.pathBytes)
    broken.push({ code: 'path_too_long', why: `is longer than ${limits.pathBytes} bytes`, shown: path });
  const segments = path.split('/');
  if (segments.length > limits.pathDepth)
    broken.push({ code: 'path_too_deep', why: `is deeper than ${limits.pathDepth} levels`, shown: path });
  if (segments[0]!.toLowerCase() === RUNTIME_DIRECTORY)
    broken.push({
      code: 'reserved_path',
      why: `${RUNTIME_DIRECTORY}/ is reserved for the bridge runtime`,
      shown: path,
    });
  return broken;
}
