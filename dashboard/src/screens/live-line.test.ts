import { describe, expect, it } from 'vitest';
import { liveLine, sinceText } from './live-line';

const now = Date.parse('2026-11-27T15:00:00Z');

describe('a card’s live line', () => {
  it('says since when a screen is online (a time today, a date before) and its display power', () => {
    expect(sinceText('2026-11-27T14:02:00Z', now, 'UTC')).toBe('14:02');
    expect(sinceText('2026-11-26T09:30:00Z', now, 'UTC')).toBe('2026-11-26 09:30');
    expect(liveLine({ onlineSince: '2026-11-27T14:02:00Z', display: 'off' }, true, now, 'UTC')).toBe(
      'online since 14:02 · display off',
    );
    expect(liveLine({ display: 'on' }, true, now, 'UTC')).toBe('display on');
  });

  it('says nothing of an online time while offline, nor of a display back to its schedule', () => {
    expect(liveLine({ onlineSince: '2026-11-27T14:02:00Z', display: null }, false, now, 'UTC')).toBe('');
    expect(liveLine(undefined, true, now)).toBe('');
  });
});
