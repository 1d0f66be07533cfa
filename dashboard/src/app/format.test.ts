import { describe, expect, it } from 'vitest';
import { byteSize, duration, timeAgo } from './format';

const NOW = Date.parse('2026-11-25T12:00:00Z');

describe('timeAgo', () => {
  it('reads as a person says it', () => {
    expect(timeAgo('2026-11-25T11:59:40Z', NOW)).toBe('just now');
    expect(timeAgo('2026-11-25T11:55:00Z', NOW)).toBe('5 min ago');
    expect(timeAgo('2026-11-25T09:00:00Z', NOW)).toBe('3 h ago');
    expect(timeAgo('2026-11-24T12:00:00Z', NOW)).toBe('1 day ago');
    expect(timeAgo('2026-11-01T12:00:00Z', NOW)).toBe('2026-11-01');
    expect(timeAgo('not a time', NOW)).toBe('never');
  });
});

describe('sizes and lengths', () => {
  it('uses powers of 1000 with one decimal below ten', () => {
    expect(byteSize(999)).toBe('999 B');
    expect(byteSize(1500)).toBe('1.5 KB');
    expect(byteSize(52_478)).toBe('52 KB');
    expect(byteSize(12_000_000)).toBe('12 MB');
  });

  it('says seconds, then minutes and seconds', () => {
    expect(duration(8000)).toBe('8 s');
    expect(duration(90_000)).toBe('1 min 30 s');
    expect(duration(120_000)).toBe('2 min');
  });
});
