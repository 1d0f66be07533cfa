// What a screen plays and when it was last seen, for its card and its page: what is on glass (the
// playlist of the manifest its player last activated, which a takeover or schedule entry may have
// chosen) apart from the playlist assigned to it.
import type { Screen } from '../../../sdk/contract/screens';
import { timeAgo } from '../app/format';

export interface Playing {
  /** The playlist on glass as the player reported it, or, before any report, the assigned one. */
  playlistId: string | null;
  /** The player reported what it activated (otherwise `playlistId` is only the assignment). */
  reported: boolean;
  /** The assigned playlist, when it is not the one playing (a takeover or a schedule entry plays). */
  assignedApart: string | null | undefined;
}

export function playingOf(screen: Screen): Playing {
  const assigned = screen.playlist_id ?? null;
  const nowPlaying = screen.health?.now_playing;
  if (!nowPlaying) return { playlistId: assigned, reported: false, assignedApart: undefined };
  const playlistId = nowPlaying.playlist_id;
  return { playlistId, reported: true, assignedApart: playlistId === assigned ? undefined : assigned };
}

/** "now" while online; otherwise when a runtime stream of the screen was last connected. */
export function lastSeenText(screen: Screen, now: number): string {
  if (screen.state !== 'archived' && screen.online) return 'now (online)';
  const seen = screen.health?.last_seen_at ?? screen.last_online_at;
  return seen ? timeAgo(seen, now) : 'never';
}
