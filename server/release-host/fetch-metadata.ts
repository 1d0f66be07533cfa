// Fetch Metadata on release hosts: a browser's own description of a request must fit how a release
// is used (a frame the player navigates, then the frame's own subresources). Absent headers are
// fine (native clients, old browsers); contradictory ones are refused with 403.

const SITES = new Set(['same-origin', 'same-site', 'cross-site', 'none']);
/** Destinations that only a navigation has. */
const NAVIGATION_DESTS = new Set(['document', 'iframe', 'frame']);

export interface FetchMetadata {
  site?: string;
  mode?: string;
  dest?: string;
}

type Headers = Record<string, string | string[] | undefined>;

// Module-level rather than a closure per call: under tsx every function made also gets its name
// defined on it, and this runs on every player media range.
function one(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

export function fetchMetadataOf(headers: Headers): FetchMetadata {
  return {
    site: one(headers, 'sec-fetch-site'),
    mode: one(headers, 'sec-fetch-mode'),
    dest: one(headers, 'sec-fetch-dest'),
  };
}

/** Why the metadata contradicts a release-host request, or undefined when it fits. */
export function fetchMetadataConflict(meta: FetchMetadata, request: { ticket: boolean }): string | undefined {
  if (meta.site !== undefined && !SITES.has(meta.site)) return 'Sec-Fetch-Site has an unknown value';
  const navigate = meta.mode === 'navigate' || meta.mode === 'nested-navigate';
  if (meta.mode !== undefined && meta.dest !== undefined && navigate !== NAVIGATION_DESTS.has(meta.dest)) {
    return 'Sec-Fetch-Mode and Sec-Fetch-Dest disagree about whether this is a navigation';
  }
  const isNavigation =
    navigate || (meta.mode === undefined && meta.dest !== undefined && NAVIGATION_DESTS.has(meta.dest));
  if (request.ticket && (meta.mode !== undefined || meta.dest !== undefined) && !isNavigation) {
    return 'a launch ticket is consumed only by navigating a frame to the release';
  }
  // Subresources come from the release's own pages; another origin may not spend its grant.
  if (!request.ticket && !isNavigation && meta.site !== undefined && meta.site !== 'same-origin') {
    return 'only pages of this release may load its files';
  }
  return undefined;
}
