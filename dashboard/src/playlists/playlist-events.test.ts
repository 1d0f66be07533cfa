// The playlist page notices a newer revision (or a delete) of its playlist in the live log.
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../sdk/contract/events';
import { playlistNews } from './playlist-events';

let sequence = 0;
const event = (type: string, id: string, details: Record<string, unknown> = {}) =>
  ({
    cursor: `c${++sequence}`,
    sequence,
    type,
    severity: 'info',
    message: type,
    at: '2026-11-27T12:00:00Z',
    resource: { type: 'playlist', id },
    details,
  }) as EventRecord;

describe('playlistNews', () => {
  it('names the newest revision past the one held, of this playlist only', () => {
    const log = [
      event('playlist.updated', 'pl_other', { revision: 9 }),
      event('playlist.updated', 'pl_1', { revision: 3 }),
      event('playlist.updated', 'pl_1', { revision: 2 }),
    ];
    expect(playlistNews(log, 'pl_1', 2)).toEqual({ kind: 'updated', revision: 3 });
    expect(playlistNews(log, 'pl_1', 3)).toBeNull();
    expect(playlistNews(log, 'pl_2', 1)).toBeNull();
  });

  it('says when the playlist was deleted', () => {
    expect(playlistNews([event('playlist.deleted', 'pl_1', { revision: 4 })], 'pl_1', 3)).toEqual({
      kind: 'deleted',
    });
  });

  it('ignores events of other resources that share the id', () => {
    const screenEvent = {
      ...event('playlist.updated', 'pl_1', { revision: 5 }),
      resource: { type: 'screen', id: 'pl_1' },
    };
    expect(playlistNews([screenEvent], 'pl_1', 1)).toBeNull();
  });
});
