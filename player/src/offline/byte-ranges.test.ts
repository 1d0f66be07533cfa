import { describe, expect, it } from 'vitest';
import { coversWholeObject, parseByteRange } from './byte-ranges';

describe('byte ranges from the offline cache', () => {
  it('answers the whole object without a usable Range', () => {
    expect(parseByteRange(null, 100)).toBe('whole');
    expect(parseByteRange('bytes=-', 100)).toBe('whole');
    expect(parseByteRange('items=0-5', 100)).toBe('whole');
  });

  it('reads open, closed and suffix ranges, clamped to the object', () => {
    expect(parseByteRange('bytes=0-', 100)).toEqual({ start: 0, end: 99 });
    expect(parseByteRange('bytes=10-19', 100)).toEqual({ start: 10, end: 19 });
    expect(parseByteRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseByteRange('bytes=-30', 100)).toEqual({ start: 70, end: 99 });
  });

  it('refuses ranges past the end', () => {
    expect(parseByteRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseByteRange('bytes=20-10', 100)).toBe('unsatisfiable');
    expect(parseByteRange('bytes=-0', 100)).toBe('unsatisfiable');
  });

  it('recognizes a 206 that carries the whole object', () => {
    expect(coversWholeObject('bytes 0-99/100')).toBe(100);
    expect(coversWholeObject('bytes 0-49/100')).toBeNull();
    expect(coversWholeObject('bytes 0-99/*')).toBeNull();
    expect(coversWholeObject(null)).toBeNull();
  });
});
