import { describe, expect, it } from 'vitest';
import { untilOf } from './commands/fleet.commands';

describe('screen takeover --until', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');
  it('takes a duration from now in minutes, hours or days', () => {
    expect(untilOf('90m', now)).toBe('2026-11-23T11:30:00.000Z');
    expect(untilOf('2h', now)).toBe('2026-11-23T12:00:00.000Z');
    expect(untilOf('1d', now)).toBe('2026-11-24T10:00:00.000Z');
  });
  it('passes an ISO time through and refuses anything else with invalid_input', () => {
    expect(untilOf('2026-11-23T15:00:00Z', now)).toBe('2026-11-23T15:00:00Z');
    expect(() => untilOf('soon', now)).toThrow(/--until/);
  });
});
