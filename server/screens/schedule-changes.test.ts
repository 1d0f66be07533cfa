import { describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import { takeoverUntil } from './schedule-changes';

const NOW = Date.parse('2026-11-23T08:00:00Z');

function refusal(until: string): unknown {
  try {
    takeoverUntil(until, NOW);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("a takeover's until", () => {
  it('is an instant after the request clock, any offset', () => {
    // Kathmandu's 13:46 is 08:01Z; its 13:45 is the request's own instant, not after it.
    expect(takeoverUntil('2026-11-23T13:46:00+05:45', NOW)).toBe(Date.parse('2026-11-23T08:01:00Z'));
    expect(refusal('2026-11-23T13:45:00+05:45')).toBeInstanceOf(ProblemError);
    expect(takeoverUntil('9999-12-31T23:59:59.999Z', NOW)).toBe(Date.parse('9999-12-31T23:59:59.999Z'));
  });

  it('is refused past year 9999 UTC, which no manifest, view or event could name', () => {
    // 23:00 on 31 December 9999 at −05:00 is 04:00Z on 1 January 10000.
    const error = refusal('9999-12-31T23:00:00-05:00');
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).code).toBe('invalid_request');
    expect((error as ProblemError).options.errors?.[0]).toMatchObject({ field: 'until' });
  });
});
