import { describe, expect, it } from 'vitest';
import { codeReplacedIn } from './code-replacement';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('when the pairing code is replaced, as the screen says it', () => {
  it('says minutes for the last hour and a half, never less than one', () => {
    expect(codeReplacedIn(0)).toBe('in about 1 minute');
    expect(codeReplacedIn(-5 * MINUTE)).toBe('in about 1 minute');
    expect(codeReplacedIn(9 * MINUTE)).toBe('in about 9 minutes');
    expect(codeReplacedIn(89 * MINUTE)).toBe('in about 89 minutes');
  });

  it('says hours up to two days', () => {
    expect(codeReplacedIn(90 * MINUTE)).toBe('in about 2 hours');
    expect(codeReplacedIn(20 * HOUR + 10 * MINUTE)).toBe('in about 20 hours');
    expect(codeReplacedIn(47 * HOUR)).toBe('in about 47 hours');
  });

  it('says days for a code that lives longer, as a 72-hour code does', () => {
    expect(codeReplacedIn(72 * HOUR - 2 * MINUTE)).toBe('in about 3 days');
    expect(codeReplacedIn(48 * HOUR)).toBe('in about 2 days');
    expect(codeReplacedIn(24 * 7 * HOUR)).toBe('in about 7 days');
  });
});
