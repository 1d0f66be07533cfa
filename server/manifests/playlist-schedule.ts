// A screen's playlist schedule, pure: which playlist it shows at an instant (takeover, else the first
// entry whose schedule/v1 rule holds in the screen's time zone and whose playlist can be shown, else
// the assignment) and the next instant that answer may change. Rules are judged by the SDK's
// visibility evaluator, the same code the player runs for page visibility (DST gaps and overlaps,
// windows crossing midnight).
import type { PlaylistScheduleEntry } from '../../sdk/contract/fleet';
import { LAST_WIRE_INSTANT_MS } from '../clock';
import { isVisible, nextBoundary } from '../../sdk/schedule/page-visibility';
import { resolveEffectivePlaylist, type EffectivePlaylist } from './effective-playlist';

export interface ScheduleInputs {
  /** The assigned default playlist. */
  playlistId: string | null;
  /** The screen's IANA zone; without one no entry can match (the schedule PUT requires it). */
  timezone: string | null;
  entries: readonly PlaylistScheduleEntry[];
  takeover: { playlistId: string; until: number } | null;
  /** Playlists that cannot be shown (deleted, content no longer ready): their entries are skipped. */
  unavailable: ReadonlySet<string>;
}

export interface ScheduleResolution {
  effective: EffectivePlaylist;
  /** Entries whose rule holds now but whose playlist cannot be shown, by playlist. */
  skipped: { playlistId: string; entryIds: string[] }[];
  /** The next instant the resolution may change (a rule edge or the takeover's end), or null. */
  nextBoundary: number | null;
}

export function resolveSchedule(inputs: ScheduleInputs, now: number): ScheduleResolution {
  const zone = inputs.timezone;
  const matching = zone === null ? [] : inputs.entries.filter((e) => isVisible(e.rule, now, zone));
  const usable = matching.find((e) => !inputs.unavailable.has(e.playlist_id));
  const skippedBy = new Map<string, string[]>();
  for (const e of matching) {
    if (!inputs.unavailable.has(e.playlist_id)) continue;
    skippedBy.set(e.playlist_id, [...(skippedBy.get(e.playlist_id) ?? []), e.id]);
  }
  const effective = resolveEffectivePlaylist(
    { playlist_id: inputs.playlistId },
    { now, takeover: inputs.takeover, scheduledPlaylistId: usable?.playlist_id ?? null },
  );
  const edges: number[] = [];
  if (zone !== null && inputs.entries.length > 0) {
    const edge = nextBoundary(
      inputs.entries.map((e) => e.rule),
      now,
      zone,
    );
    // A civil time late on 31 December 9999 west of UTC falls in year 10000, which no manifest can
    // name: an edge that far is no edge ("until 9999-12-31T23:59" means for good).
    if (edge !== null && edge <= LAST_WIRE_INSTANT_MS) edges.push(edge);
  }
  if (inputs.takeover && inputs.takeover.until > now) edges.push(inputs.takeover.until);
  return {
    effective,
    skipped: [...skippedBy].map(([playlistId, entryIds]) => ({ playlistId, entryIds })),
    nextBoundary: edges.length > 0 ? Math.min(...edges) : null,
  };
}
