import { describe, expect, it } from 'vitest';
import { resolveEffectivePlaylist } from './effective-playlist';

const now = Date.parse('2026-11-21T12:00:00Z');

describe('resolveEffectivePlaylist', () => {
  it('is the assigned playlist today', () => {
    expect(resolveEffectivePlaylist({ playlist_id: 'pl_a' }, { now })).toEqual({
      playlistId: 'pl_a',
      source: 'assignment',
    });
  });

  it('is nothing for a screen without an assignment', () => {
    expect(resolveEffectivePlaylist({ playlist_id: null }, { now })).toEqual({ playlistId: null, source: 'none' });
  });

  it('takes a matching schedule entry over the assignment', () => {
    expect(resolveEffectivePlaylist({ playlist_id: 'pl_a' }, { now, scheduledPlaylistId: 'pl_s' })).toEqual({
      playlistId: 'pl_s',
      source: 'schedule',
    });
  });

  it('lets a takeover beat everything until it ends', () => {
    const inputs = { now, scheduledPlaylistId: 'pl_s', takeover: { playlistId: 'pl_t', until: now + 1 } };
    expect(resolveEffectivePlaylist({ playlist_id: 'pl_a' }, inputs)).toEqual({
      playlistId: 'pl_t',
      source: 'takeover',
    });
    expect(resolveEffectivePlaylist({ playlist_id: 'pl_a' }, { ...inputs, now: now + 1 })).toEqual({
      playlistId: 'pl_s',
      source: 'schedule',
    });
  });

  it('skips a scheduled or takeover playlist that cannot be shown', () => {
    const inputs = {
      now,
      scheduledPlaylistId: 'pl_s',
      takeover: { playlistId: 'pl_t', until: now + 60_000 },
      unavailable: new Set(['pl_t', 'pl_s']),
    };
    expect(resolveEffectivePlaylist({ playlist_id: 'pl_a' }, inputs)).toEqual({
      playlistId: 'pl_a',
      source: 'assignment',
    });
  });
});
