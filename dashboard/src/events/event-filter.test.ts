import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../sdk/contract/events';
import { familiesOf, matchesFilter, NO_FILTER } from './event-filter';

const event = (type: string, extra: Partial<EventRecord> = {}): EventRecord => ({
  type,
  sequence: 1,
  cursor: 'c',
  severity: 'info',
  message: `${type} happened`,
  at: '',
  ...extra,
});

describe('the events filter', () => {
  it('keeps everything when empty', () => {
    expect(matchesFilter(event('media.ready'), NO_FILTER)).toBe(true);
  });

  it('filters by family, the part of the type before the dot', () => {
    const filter = { ...NO_FILTER, family: 'screen' };
    expect(matchesFilter(event('screen.updated'), filter)).toBe(true);
    expect(matchesFilter(event('screenshot.ready'), filter)).toBe(false);
  });

  it('filters by severity', () => {
    const filter = { ...NO_FILTER, severity: 'error' as const };
    expect(matchesFilter(event('runtime.reported', { severity: 'error' }), filter)).toBe(true);
    expect(matchesFilter(event('runtime.reported'), filter)).toBe(false);
  });

  it('finds text in the message, the resource id and the actor’s name, ignoring case', () => {
    const e = event('screen.updated', {
      message: 'screen playlist_id changed',
      resource: { type: 'screen', id: 'scr_Lobby1' },
      actor: { user_id: 'per_1', display_name: 'Ada' },
    });
    expect(matchesFilter(e, { ...NO_FILTER, text: 'PLAYLIST' })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, text: 'lobby1' })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, text: 'ada' })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, text: 'media' })).toBe(false);
  });

  it('offers the families present, sorted', () => {
    expect(familiesOf([event('screen.a'), event('media.b'), event('screen.c')])).toEqual(['media', 'screen']);
  });
});
