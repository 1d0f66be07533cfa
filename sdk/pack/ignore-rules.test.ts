import { describe, expect, it } from 'vitest';
import { builtInIgnoreReason, IgnoreRules } from './ignore-rules';

const rules = (text: string) => IgnoreRules.parse(text);

describe('.marqueeignore rules', () => {
  it('matches a name without a slash at any depth', () => {
    const r = rules('*.psd\nThumbs');
    expect(r.ignores('art.psd', false)).toBe(true);
    expect(r.ignores('a/b/art.psd', false)).toBe(true);
    expect(r.ignores('art.psd.png', false)).toBe(false);
    expect(r.ignores('x/Thumbs', true)).toBe(true);
  });

  it('anchors patterns with a leading or middle slash to the root', () => {
    const r = rules('/build.txt\nsrc/*.ts');
    expect(r.ignores('build.txt', false)).toBe(true);
    expect(r.ignores('sub/build.txt', false)).toBe(false);
    expect(r.ignores('src/a.ts', false)).toBe(true);
    expect(r.ignores('src/deep/a.ts', false)).toBe(false);
    expect(r.ignores('lib/src/a.ts', false)).toBe(false);
  });

  it('applies a trailing slash to directories only', () => {
    const r = rules('cache/');
    expect(r.ignores('cache', true)).toBe(true);
    expect(r.ignores('a/cache', true)).toBe(true);
    expect(r.ignores('cache', false)).toBe(false);
  });

  it('supports ** at the start, in the middle and at the end', () => {
    const r = rules('**/tmp\nassets/**/raw\nlogs/**');
    expect(r.ignores('tmp', true)).toBe(true);
    expect(r.ignores('x/y/tmp', false)).toBe(true);
    expect(r.ignores('assets/raw', true)).toBe(true);
    expect(r.ignores('assets/a/b/raw', true)).toBe(true);
    expect(r.ignores('logs/a/b.txt', false)).toBe(true);
    expect(r.ignores('logs', true)).toBe(false);
  });

  it('supports ? and character classes', () => {
    const r = rules('v?.js\nimg[0-9].png\nx[!a].txt');
    expect(r.ignores('v1.js', false)).toBe(true);
    expect(r.ignores('v10.js', false)).toBe(false);
    expect(r.ignores('img7.png', false)).toBe(true);
    expect(r.ignores('imgA.png', false)).toBe(false);
    expect(r.ignores('xb.txt', false)).toBe(true);
    expect(r.ignores('xa.txt', false)).toBe(false);
  });

  it('lets the last matching rule win, so ! re-includes', () => {
    const r = rules('*.log\n!keep.log\nkeep.log.old');
    expect(r.ignores('a.log', false)).toBe(true);
    expect(r.ignores('keep.log', false)).toBe(false);
    expect(rules('!keep.log\n*.log').ignores('keep.log', false)).toBe(true);
  });

  it('skips comments and blank lines, trims trailing spaces, and honours escapes', () => {
    const r = rules('# comment\n\n\\#hash.txt\n\\!bang.txt\ntrailing.txt   \r\n');
    expect(r.ignores('#hash.txt', false)).toBe(true);
    expect(r.ignores('!bang.txt', false)).toBe(true);
    expect(r.ignores('trailing.txt', false)).toBe(true);
    expect(r.ignores('comment', false)).toBe(false);
  });

  it('escapes regex characters in names', () => {
    const r = rules('a+b(1).txt');
    expect(r.ignores('a+b(1).txt', false)).toBe(true);
    expect(r.ignores('aab(1)xtxt', false)).toBe(false);
  });
});

describe('built-in ignores', () => {
  it('drop dot-paths at any depth, dependency folders and sensitive files', () => {
    expect(builtInIgnoreReason('.env', false)).toBe('dot-path');
    expect(builtInIgnoreReason('a/.hidden/b.txt', false)).toBe('dot-path');
    expect(builtInIgnoreReason('node_modules', true)).not.toBeNull();
    expect(builtInIgnoreReason('x/__pycache__', true)).not.toBeNull();
    for (const file of [
      'app.js.map',
      'tls.key',
      'cert.pem',
      'store.p12',
      'id_rsa',
      'id_ed25519.pub',
      'secrets.json',
      'x/credentials.json',
      'a.swp',
      'b~',
    ]) {
      expect(builtInIgnoreReason(file, false), file).not.toBeNull();
    }
    expect(builtInIgnoreReason('node_modules', false)).toBeNull();
    expect(builtInIgnoreReason('keys.js', false)).toBeNull();
    expect(builtInIgnoreReason('index.html', false)).toBeNull();
  });

  it('cannot be negated', () => {
    expect(rules('!.env\n!*.map').ignores('.env', false)).toBe(true);
    expect(rules('!*.map').ignores('app.js.map', false)).toBe(true);
  });
});
