// The names a manifest is known by: its revision id (`man_…`, in routes and reports) and its grant
// id (per revision and content-access generation). Both are derived, never stored, so the
// manifest's 304 and the membership checks need no lookup to name them. Neither is a secret.
import { sha256Hex } from '../keys';

/** Domain separation: no other digest in Marquee hashes input that starts with these strings. */
const REVISION_DOMAIN = 'marquee.manifest-revision.v1\u0000';
const GRANT_DOMAIN = 'marquee.manifest-grant.v1\u0000';
const REVISION_ID = /^man_([1-9][0-9]{0,14})_([0-9a-f]{12})$/;

function revisionTag(screenId: string, revision: number): string {
  return sha256Hex(`${REVISION_DOMAIN}${screenId}\u0000${revision}`).slice(0, 12);
}

/** `man_<revision>_<12 hex>`: the screen's integer manifest_revision, bound to the screen. */
export function manifestRevisionId(screenId: string, revision: number): string {
  return `man_${revision}_${revisionTag(screenId, revision)}`;
}

/** The integer revision a `man_…` id names for this screen, or undefined (malformed or another screen's). */
export function manifestRevisionOf(screenId: string, id: string): number | undefined {
  const match = REVISION_ID.exec(id);
  if (!match) return undefined;
  const revision = Number(match[1]);
  return Number.isSafeInteger(revision) && revisionTag(screenId, revision) === match[2] ? revision : undefined;
}

/** The grant of one manifest revision at one content-access generation (launches record it). */
export function manifestGrantId(screenId: string, revision: number, generation: number): string {
  return `gr_${sha256Hex(`${GRANT_DOMAIN}${screenId}\u0000${revision}\u0000${generation}`).slice(0, 24)}`;
}
