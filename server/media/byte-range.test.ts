import { describe, expect, it } from 'vitest';
import { noneMatch, parseRange } from './byte-range';

describe('parseRange (one byte range per request)', () => {
  const size = 100;
  it.each([
    [undefined, { kind: 'whole' }],
    ['bytes=0-9', { kind: 'range', start: 0, end: 9 }],
    ['bytes=90-', { kind: 'range', start: 90, end: 99 }],
    ['bytes=-10', { kind: 'range', start: 90, end: 99 }],
    ['bytes=-1000', { kind: 'range', start: 0, end: 99 }],
    ['bytes=50-5000', { kind: 'range', start: 50, end: 99 }],
    ['bytes=99-99', { kind: 'range', start: 99, end: 99 }],
    ['BYTES=0-0', { kind: 'range', start: 0, end: 0 }],
    ['bytes=0-99999999999999999999', { kind: 'range', start: 0, end: 99 }],
  ])('serves %s', (header, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it.each([
    ['bytes=0-1,5-6', 'one byte range'],
    ['bytes=100-', 'beyond the end'],
    ['bytes=100-200', 'beyond the end'],
    ['bytes=99999999999999999999-', 'beyond the end'],
    ['bytes=-0', 'zero bytes'],
    ['bytes=5-2', 'ends before it starts'],
    ['bytes=-', 'names no bytes'],
    ['bytes=a-b', 'Range must be'],
    ['items=0-1', 'Range must be'],
    ['bytes 0-1', 'Range must be'],
    ['bytes=0-1-2', 'Range must be'],
    ['', 'Range must be'],
  ])('refuses %s', (header, reason) => {
    const result = parseRange(header, size);
    expect(result.kind).toBe('refused');
    expect(result.kind === 'refused' && result.reason).toContain(reason);
  });
});

describe('noneMatch', () => {
  const etag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abd"', false],
    ['abc', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(noneMatch(header, etag)).toBe(expected);
  });
});
