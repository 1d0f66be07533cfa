// Which playlist a screen shows: one pure resolver, so the manifest, the delete guards and (later)
// schedules and takeovers agree. Today screens have only an assignment; the roadmap adds a
// server-evaluated schedule and a takeover as inputs, with takeover beating everything.

export type EffectiveSource = 'takeover' | 'schedule' | 'assignment' | 'none';

export interface EffectivePlaylist {
  playlistId: string | null;
  source: EffectiveSource;
}

export interface EffectiveInputs {
  /** The request clock (takeovers end at `until`). */
  now: number;
  /** An active takeover: shown until `until` (ms), whatever else applies. */
  takeover?: { playlistId: string; until: number } | null;
  /**
   * The playlist of the first schedule entry whose rule matches the screen's civil time now,
   * already evaluated in the screen's timezone (the schedule evaluator's job); null when none does.
   */
  scheduledPlaylistId?: string | null;
  /** Playlists that cannot be shown right now (deleted, unavailable): skipped, falling through. */
  unavailable?: ReadonlySet<string>;
}

export function resolveEffectivePlaylist(
  screen: { playlist_id: string | null },
  inputs: EffectiveInputs,
): EffectivePlaylist {
  const usable = (id: string | null | undefined): id is string =>
    typeof id === 'string' && !inputs.unavailable?.has(id);
  if (inputs.takeover && inputs.now < inputs.takeover.until && usable(inputs.takeover.playlistId)) {
    return { playlistId: inputs.takeover.playlistId, source: 'takeover' };
  }
  if (usable(inputs.scheduledPlaylistId)) return { playlistId: inputs.scheduledPlaylistId, source: 'schedule' };
  if (screen.playlist_id !== null) return { playlistId: screen.playlist_id, source: 'assignment' };
  return { playlistId: null, source: 'none' };
}
