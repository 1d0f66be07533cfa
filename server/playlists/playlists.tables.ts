export interface PlaylistTable {
  /** `pl_…` */
  id: string;
  tenant_id: string;
  name: string;
  /** Moves by exactly one on each write (create is 1); rematerialization does not move it. */
  revision: number;
  /** 1 when the document has adslot pages: only /api/v2 may show it. */
  ad_bearing: number;
  /** 1 when any page (or adslot page) has a visibility rule: screens need a timezone. */
  has_visibility: number;
  /** JSON: the write document as validated (defaults applied), the input of every re-resolution. */
  write_document: string;
  /** JSON: the document as served (write document plus server-resolved items and deadlines). */
  document: string;
  /** JSON array of field errors: references that are no longer ready or owned; empty when showable. */
  unavailable: string;
  /** JSON: the agent's opaque comments (comments/), or null; written only by the comments routes. */
  comments?: string | null;
  /** JSON: page id → that page's comments; pages leaving the document lose theirs on update. */
  page_comments?: string | null;
  created_at: number;
  updated_at: number;
  /** Tombstone time; deleted playlists answer not_found. */
  deleted_at: number | null;
}

export type PlaylistDependencyKind = 'media' | 'application' | 'release' | 'media_tag' | 'media_all';

/**
 * What a live playlist depends on: content it references (media, applications, releases) and the
 * dynamic selectors (`tag`, `all`) that re-resolve when media change.
 */
export interface PlaylistDependencyTable {
  playlist_id: string;
  tenant_id: string;
  kind: PlaylistDependencyKind;
  /** Media, application or release id; the tag for media_tag; `*` for media_all. */
  ref: string;
}

export interface PlaylistTables {
  playlists: PlaylistTable;
  playlist_dependencies: PlaylistDependencyTable;
}
