import { describe, expect, it } from 'vitest';
import { echo, escapeUnsafe, escapeUnsafeInJson, hasUnsafeCharacters } from './untrusted-text';

describe('escapeUnsafe', () => {
  it.each([
    ['NUL', '\u0000', '\\u0000'],
    ['newline', '\n', '\\u000a'],
    ['ESC', '\u001b', '\\u001b'],
    ['DEL', '\u007f', '\\u007f'],
    ['PAD (first C1)', '\u0080', '\\u0080'],
    ['NEL', '\u0085', '\\u0085'],
    ['CSI', '\u009b', '\\u009b'],
    ['APC (last C1)', '\u009f', '\\u009f'],
    ['LRE', '\u202a', '\\u202a'],
    ['RLO', '\u202e', '\\u202e'],
    ['LRI', '\u2066', '\\u2066'],
    ['PDI', '\u2069', '\\u2069'],
  ])('writes %s as its escape', (_name, character, escaped) => {
    expect(escapeUnsafe(`a${character}b`)).toBe(`a${escaped}b`);
    expect(hasUnsafeCharacters(character)).toBe(true);
  });

  it('leaves printable text, other scripts and emoji alone', () => {
    const text = 'Menü – 午餐 مرحبا 🎉 "quoted" \\ tab-free';
    expect(escapeUnsafe(text)).toBe(text);
    expect(hasUnsafeCharacters(text)).toBe(false);
  });
});

describe('echo', () => {
  it('cuts a long value with an ellipsis at the limit', () => {
    const shown = echo('x'.repeat(500), 120);
    expect(shown).toBe(`${'x'.repeat(120)}…`);
  });

  it('counts escapes against the limit and never cuts inside one', () => {
    const shown = echo('\u0085'.repeat(10), 20);
    expect(shown).toBe('\\u0085\\u0085\\u0085…');
  });

  it('never cuts a surrogate pair in half', () => {
    const shown = echo('🎉'.repeat(10), 5);
    expect(shown).toBe('🎉🎉…');
    expect(shown).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('returns a short value whole', () => {
    expect(echo('Lobby')).toBe('Lobby');
  });
});

describe('escapeUnsafeInJson', () => {
  it('writes no raw unsafe character and parses back to the same value', () => {
    const value = { message: 'a\u007fb\u0085c\u202ed\u2069e\u001bf' };
    const line = `${JSON.stringify(value)}\n`;
    const escaped = escapeUnsafeInJson(line);
    expect(escaped.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(escaped.endsWith('\n')).toBe(true);
    expect(JSON.parse(escaped)).toEqual(value);
  });
});
