import { describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import { ArchiveTotals, ReleasePaths, caseFold, entryKind, entryPath, inflatedBytesBound } from './archive-rules';

const ok = (raw: string, kind: 'file' | 'directory' = 'file') => {
  const got = entryPath(raw, kind);
  if (got instanceof ProblemError) throw got;
  return got;
};
const code = (value: unknown) => (value instanceof ProblemError ? value.options.errors![0]!.code : undefined);

describe('entry paths', () => {
  it('normalizes ./ prefixes, trailing directory slashes and Unicode form', () => {
    expect(ok('./a/b.js')).toEqual({ path: 'a/b.js', segments: ['a', 'b.js'] });
    expect(ok('./', 'directory')).toEqual({ path: '', segments: [] });
    expect(ok('assets/', 'directory').path).toBe('assets');
    expect(ok('cafe\u0301.html').path).toBe('caf\u00e9.html');
  });

  it('names the rule a path breaks', () => {
    expect(code(entryPath('a/../b', 'file'))).toBe('parent_segment');
    expect(code(entryPath('/a', 'file'))).toBe('absolute_path');
    expect(code(entryPath('a\\b', 'file'))).toBe('backslash');
    expect(code(entryPath('a\nb', 'file'))).toBe('control_character');
    expect(code(entryPath('a\u009bb', 'file'))).toBe('control_character');
    expect(code(entryPath('./', 'file'))).toBe('empty_segment');
    expect(code(entryPath('a/', 'file'))).toBe('empty_segment');
    expect(code(entryPath('a\uFFFD.txt', 'file'))).toBe('invalid_utf8');
  });

  it('reserves .marquee at the root (release hosts answer it themselves), in any case and either kind', () => {
    for (const raw of [
      '.marquee/player-origin',
      './.marquee/player-origin',
      '.MARQUEE/player-origin',
      '.Marquee/x/y.js',
      '.marquee',
    ]) {
      const refused = entryPath(raw, 'file');
      expect(code(refused), raw).toBe('reserved_path');
      expect((refused as ProblemError).message).toContain('.marquee/');
    }
    expect(code(entryPath('.marquee/', 'directory'))).toBe('reserved_path');
    expect(ok('sub/.marquee/x.js').path).toBe('sub/.marquee/x.js');
    expect(ok('.marquee-old/x.js').path).toBe('.marquee-old/x.js');
  });

  it('counts path bytes in UTF-8 after NFC', () => {
    // 85 decomposed é (170 UTF-16 units, 255 bytes as NFD) compose to 170 bytes.
    expect(ok('e\u0301'.repeat(85)).path).toHaveLength(85);
    expect(code(entryPath('\u20ac'.repeat(86), 'file'))).toBe('path_too_long');
  });
});

describe('case folding', () => {
  it('maps case variants, sharp s and final sigma together', () => {
    expect(caseFold('Index.HTML')).toBe(caseFold('index.html'));
    expect(caseFold('Stra\u00dfe')).toBe(caseFold('STRASSE'));
    expect(caseFold('\u1e9e')).toBe(caseFold('ss'));
    expect(caseFold('\u03a3\u03bf\u03c6\u03bf\u03c2')).toBe(caseFold('\u03c3\u03bf\u03c6\u03bf\u03c3'));
    expect(caseFold('a.js')).not.toBe(caseFold('b.js'));
  });

  it('lets an explicit directory follow the files that implied it, once', () => {
    const paths = new ReleasePaths();
    expect(paths.add(ok('lib/a.js'), 'file')).toBeUndefined();
    expect(paths.add(ok('lib/', 'directory'), 'directory')).toBeUndefined();
    expect(code(paths.add(ok('lib/', 'directory'), 'directory'))).toBe('duplicate_path');
    expect(paths.hasFile('lib/a.js')).toBe(true);
    expect(paths.hasFile('LIB/a.js')).toBe(false);
  });
});

describe('entry types and totals', () => {
  it('accepts regular files and directories only', () => {
    expect(entryKind({ name: 'a', type: 'file', size: 1 })).toBe('file');
    expect(entryKind({ name: 'a', type: 'directory', size: 0 })).toBe('directory');
    for (const type of ['symlink', 'link', 'character-device', 'block-device', 'fifo', 'contiguous-file', null]) {
      expect(code(entryKind({ name: 'a', type, size: 0 }))).toBe('unsupported_entry');
    }
  });

  it('refuses a file before its bytes are read, and checks the final figures', () => {
    const totals = new ArchiveTotals({ expandedBytes: 10, fileCount: 2 });
    expect(totals.admitFile('a', 6)).toBeUndefined();
    expect(code(totals.admitFile('b', 5))).toBe('expanded_bytes_exceeded');
    expect(code(totals.finalMismatch())).toBe('file_count_mismatch');
    expect(totals.admitFile('b', 4)).toBeUndefined();
    expect(totals.finalMismatch()).toBeUndefined();
    expect(code(totals.admitFile('c', 0))).toBe('file_count_exceeded');
  });

  it('bounds the inflated tar stream by the declaration plus framing', () => {
    expect(inflatedBytesBound({ expandedBytes: 1000, fileCount: 1 })).toBe(1000 + 5001 * 4096 + 10240);
  });
});
