// A takeover's end is typed in the viewer's time zone; the page says which, and the screen's when it differs.
import { describe, expect, it } from 'vitest';
import { takeoverEndText } from './ScreenControls';

const UNTIL = '2026-11-29T06:29:00Z';

describe('takeoverEndText', () => {
  it('names the viewer’s zone it is shown in', () => {
    expect(takeoverEndText(UNTIL, 'Europe/Paris', undefined)).toBe('29 Nov 2026, 07:29 your time (Europe/Paris)');
  });

  it('adds the screen’s own time when the screen is in another zone', () => {
    expect(takeoverEndText(UNTIL, 'UTC', 'America/New_York')).toBe(
      '29 Nov 2026, 06:29 your time (UTC), 29 Nov 2026, 01:29 on the screen (America/New_York)',
    );
    expect(takeoverEndText(UNTIL, 'UTC', 'UTC')).toBe('29 Nov 2026, 06:29 your time (UTC)');
  });
});
