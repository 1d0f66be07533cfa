import { describe, expect, it } from 'vitest';
import { isFramed } from './framing';

describe('framing', () => {
  it('runs only as the top-level document', () => {
    const self = {};
    expect(isFramed({ top: self, self })).toBe(false);
    expect(isFramed({ top: {}, self })).toBe(true);
    expect(isFramed({ top: null, self })).toBe(true);
  });

  it('assumes a frame when the top window cannot be read', () => {
    const win = { self: {} } as { top: unknown; self: unknown };
    Object.defineProperty(win, 'top', {
      get: () => {
        throw new DOMException('blocked', 'SecurityError');
      },
    });
    expect(isFramed(win)).toBe(true);
  });
});
