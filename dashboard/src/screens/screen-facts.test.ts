import { describe, expect, it } from 'vitest';
import type { ScreenHealth } from '../../../sdk/contract/screen-health';
import type { Screen } from '../../../sdk/contract/screens';
import { statusOf } from './ScreenStatus';
import { lastSeenText, playingOf } from './screen-facts';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const health = (change: Partial<ScreenHealth>): ScreenHealth => ({
  presence: 'offline',
  last_seen_at: '2026-11-25T11:50:00Z',
  offline_since: '2026-11-25T11:50:00Z',
  player: null,
  host: null,
  now_playing: null,
  watchdog: { recoveries: 0, last_recovery_at: null, last_reason: null },
  screenshot: { state: 'idle' },
  ...change,
});
const screen = (change: Partial<Screen>): Screen =>
  ({
    id: 'scr_1',
    label: 'Lobby',
    state: 'active',
    playlist_id: 'pl_lobby',
    tags: [],
    online: false,
    // When it last came online, long before it was last seen.
    last_online_at: '2026-11-20T08:00:00Z',
    revision: 'r1',
    ...change,
  }) as Screen;
const playingNow = (playlist_id: string | null) =>
  health({ now_playing: { playlist_id, manifest_revision: 'm1', activated_at: '2026-11-25T11:00:00Z' } });

describe('playingOf', () => {
  it('names the playlist on glass, and the assignment apart, while a takeover or schedule entry plays', () => {
    expect(playingOf(screen({ health: playingNow('pl_alert') }))).toEqual({
      playlistId: 'pl_alert',
      reported: true,
      assignedApart: 'pl_lobby',
    });
  });

  it('names the assignment once only when it is what plays', () => {
    expect(playingOf(screen({ health: playingNow('pl_lobby') }))).toEqual({
      playlistId: 'pl_lobby',
      reported: true,
      assignedApart: undefined,
    });
  });

  it('falls back to the assignment, marked as not reported, before the player said what it activated', () => {
    expect(playingOf(screen({ health: health({}) }))).toEqual({
      playlistId: 'pl_lobby',
      reported: false,
      assignedApart: undefined,
    });
  });
});

describe('lastSeenText', () => {
  it('says now for an online screen', () => {
    expect(lastSeenText(screen({ online: true, health: health({ presence: 'online' }) }), NOW)).toBe('now (online)');
  });

  it('is when a runtime stream was last connected, not when the screen last came online', () => {
    expect(lastSeenText(screen({ health: health({}) }), NOW)).toBe('10 min ago');
  });
});

describe('statusOf', () => {
  it('says Archived, not Online, for an archived screen', () => {
    expect(statusOf(screen({ state: 'archived', online: true }), NOW)).toEqual({ tone: 'offline', text: 'Archived' });
  });

  it('says when an offline screen was last seen by its health', () => {
    expect(statusOf(screen({ health: health({}) }), NOW).text).toBe('Offline, last seen 10 min ago');
  });
});
