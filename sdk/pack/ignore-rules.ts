// What packing leaves out: built-in rules no ignore file can undo (dot-paths, dependency folders,
// source maps, keys and secrets), then the app's own `.marqueeignore` with gitignore-like rules
// (`#` comments, `!` negation, trailing `/` for directories, `*`, `**`, `?`, `[…]`, leading `/`
// anchoring; a pattern without a slash matches a name at any depth; the last match wins; an
// excluded directory's contents cannot be re-included).

export const IGNORE_FILE = '.marqueeignore';

/** Directory names never packed, at any depth. */
export const BUILT_IN_IGNORED_DIRECTORIES: readonly string[] = [
  'node_modules',
  'bower_components',
  '__pycache__',
  'venv',
];

/** File name patterns never packed: source maps, keys, certificates, credentials, editor leftovers. */
export const BUILT_IN_IGNORED_FILES: readonly string[] = [
  '*.map',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.crt',
  '*.jks',
  '*.keystore',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  'credentials.json',
  'secrets.json',
  '*.swp',
  '*~',
  'Thumbs.db',
  'desktop.ini',
];

interface Rule {
  regex: RegExp;
  negate: boolean;
  directoryOnly: boolean;
}

/** A glob (no leading or trailing slash) as a regex source over `/`-separated paths. */
function globSource(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const before = i === 0 || glob[i - 1] === '/';
        const after = i + 2 === glob.length || glob[i + 2] === '/';
        if (before && after) {
          if (i + 2 === glob.length)
            out += '.*'; // trailing /** : everything inside
          else {
            out += '(?:.*/)?'; // leading **/ or middle /**/ : zero or more directories
            i++;
          }
          i++;
          continue;
        }
        while (glob[i + 1] === '*') i++; // other runs of * act as one
      }
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/]/g, '\\]')}]`;
      i = close;
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[++i]!);
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function compile(pattern: string, negate: boolean): Rule | null {
  let p = pattern;
  let directoryOnly = false;
  if (p.endsWith('/')) {
    directoryOnly = true;
    p = p.replace(/\/+$/, '');
  }
  if (p === '') return null;
  const anchored = p.includes('/');
  if (p.startsWith('/')) p = p.slice(1);
  const body = globSource(p);
  return { regex: new RegExp(`^${anchored ? '' : '(?:.*/)?'}${body}$`), negate, directoryOnly };
}

function parseLine(raw: string): Rule | null {
  let line = raw.replace(/\r$/, '');
  // Trailing spaces are dropped unless escaped.
  line = line.replace(/(?<!\\)\s+$/, '');
  if (line === '' || line.startsWith('#')) return null;
  let negate = false;
  if (line.startsWith('!')) {
    negate = true;
    line = line.slice(1);
  } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
    line = line.slice(1);
  }
  return compile(line, negate);
}

const BUILT_IN_FILE_RULES = BUILT_IN_IGNORED_FILES.map((p) => compile(p, false)!);

/** Why the built-ins drop `path`, or null. These cannot be negated. */
export function builtInIgnoreReason(path: string, isDirectory: boolean): string | null {
  const segments = path.split('/');
  if (segments.some((s) => s.startsWith('.'))) return 'dot-path';
  const name = segments[segments.length - 1]!;
  if (isDirectory && BUILT_IN_IGNORED_DIRECTORIES.includes(name)) return 'dependency folder';
  if (!isDirectory && BUILT_IN_FILE_RULES.some((r) => r.regex.test(name)))
    return 'never packed (maps, keys, secrets, editor files)';
  return null;
}

export class IgnoreRules {
  private constructor(private readonly rules: Rule[]) {}

  static parse(text: string): IgnoreRules {
    return new IgnoreRules(
      text
        .split('\n')
        .map(parseLine)
        .filter((r): r is Rule => r !== null),
    );
  }

  static none(): IgnoreRules {
    return new IgnoreRules([]);
  }

  /** Whether `path` (relative, `/`-separated) is left out: built-ins first, then the last matching rule. */
  ignores(path: string, isDirectory: boolean): boolean {
    if (builtInIgnoreReason(path, isDirectory) !== null) return true;
    let ignored = false;
    for (const rule of this.rules) {
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.regex.test(path)) ignored = !rule.negate;
    }
    return ignored;
  }
}
