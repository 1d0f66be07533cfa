// utcDay keeps the last day's text: it must still answer every instant's own UTC day, in any order.
import { describe, expect, it } from 'vitest';
import { utcDay } from './clock';

describe('utcDay', () => {
  it('answers the UTC date of each instant across day boundaries, back and forth', () => {
    const midnight = Date.parse('2026-11-28T00:00:00Z');
    const instants = [midnight - 1, midnight, midnight - 1, midnight + 86_399_999, midnight + 86_400_000, -1, 0];
    expect(instants.map(utcDay)).toEqual([
      '2026-11-27',
      '2026-11-28',
      '2026-11-27',
      '2026-11-28',
      '2026-11-29',
      '1969-12-31',
      '1970-01-01',
    ]);
  });
});
