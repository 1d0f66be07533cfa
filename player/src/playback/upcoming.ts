// The offline switch at a boundary: a manifest may carry `upcoming`, the pages the server will show
// from its next boundary. Past that instant, a player still on that revision (the reminted one has
// not reached it: its network is cut) plays those pages as a derived loop. The derived loop keeps
// the real manifest revision (the one whose grant covers its media); it is never reported as
// activated, and its proof of play names that real revision (docs/decisions.md, "Offline switch at
// a boundary").
import type { RuntimeManifest } from '../../../sdk/contract/manifest';

/**
 * The derived loop starts this long after `upcoming.at`: the playback clock of a player outside a
 * sync group comes from Date headers (second resolution), and an online player's remint (fetched
 * at the boundary's manifest_changed, or 1.5 s after it) replaces the old revision first.
 */
export const UPCOMING_GRACE_MS = 2000;

export interface Playable {
  manifest: RuntimeManifest;
  /** The upcoming pages of `served`, not a revision the server minted. */
  derived: boolean;
}

/** What to play of `served` at `now`: its own pages, or past its upcoming's instant, the derived loop. */
export function playableAt(served: RuntimeManifest, now: number): Playable {
  const upcoming = served.upcoming;
  if (!upcoming || now < Date.parse(upcoming.at) + UPCOMING_GRACE_MS) return { manifest: served, derived: false };
  // What comes after the boundary is never the takeover on glass before it (a takeover ends there).
  const {
    upcoming: _upcoming,
    nextBoundaryAt: _next,
    soundtrack: _soundtrack,
    takeover: _takeover,
    sync,
    ...rest
  } = served;
  return {
    manifest: {
      ...rest,
      playlistId: upcoming.playlistId,
      playlistRevision: upcoming.playlistRevision,
      pages: upcoming.pages,
      // A sync group's members all switch at the boundary: the derived timeline starts there.
      ...(sync ? { sync: { ...sync, epoch: upcoming.at } } : {}),
    },
    derived: true,
  };
}

/** When `served` turns into its derived loop (ms on the playback clock), or null when it never does. */
export function switchAt(served: RuntimeManifest): number | null {
  const at = served.upcoming ? Date.parse(served.upcoming.at) : Number.NaN;
  return Number.isFinite(at) ? at + UPCOMING_GRACE_MS : null;
}
