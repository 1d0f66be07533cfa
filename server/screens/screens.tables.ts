export type ScreenState = 'pairing_pending' | 'active' | 'archived' | 'deleted';

export interface ScreenTable {
  /** `scr_…` */
  id: string;
  tenant_id: string;
  /** The public URL credential: `<play origin>/s/<public_id>`; replaced by a rotation. */
  public_id: string;
  label: string;
  /** Moves by exactly one on each mutation of the screen (a reload moves it by zero). */
  revision: number;
  /** Moves whenever what the player must show changes. */
  manifest_revision: number;
  /** Moves when every grant must be reissued (public-id rotation, credential revoke). */
  content_access_generation: number;
  state: ScreenState;
  playlist_id: string | null;
  /**
   * What the screen shows now: takeover, else the first matching schedule entry, else playlist_id.
   * Written only by manifests/ (effective-playlist.ts resolves it; boundaries re-resolve it on time).
   */
  effective_playlist_id: string | null;
  /** IANA zone; absent until set, never cleared. */
  timezone: string | null;
  /**
   * JSON: the agent's opaque comments (comments/), or null. Optional here because only the
   * comments routes write it: every other insert and update leaves it as it is.
   */
  comments?: string | null;
  /** 1 for a native player bound by its key pair (pairing/native-pairing.ts): delete refuses. */
  native_identity: number;
  /** First time a player completed pairing (or a browser provisioning exchange). */
  paired_at: number | null;
  created_at: number;
  updated_at: number;
  archived_at: number | null;
  /** Tombstone time: deleted screens answer not_found and are purged after the retention. */
  deleted_at: number | null;
  /** Last time a paired runtime event stream was connected (set by the runtime plane). */
  last_online_at: number | null;
  /** A pending recovery offer as the owner sees it (JSON of RecoveryPendingColumn; screens/recovery.ts). */
  recovery_pending: string | null;
  /** Lockstep: the sync group (tag grammar), or null to play alone. */
  sync_group: string | null;
  /** Lockstep: the video-wall region of the canvas it shows, as JSON `{x, y, width, height}`; only with a group. */
  wall_region: string | null;
}

export interface ScreenTagTable {
  screen_id: string;
  tenant_id: string;
  tag: string;
}

/** How a screen refers to a playlist; schedule entries and takeovers (roadmap) add their roles. */
export type ScreenPlaylistRole = 'assignment' | 'schedule' | 'takeover';

/** Every playlist a screen refers to, whatever the role: it blocks the playlist's delete. */
export interface ScreenPlaylistReferenceTable {
  screen_id: string;
  tenant_id: string;
  playlist_id: string;
  role: ScreenPlaylistRole;
  /** Schedule entry id; '' for the assignment and the takeover. */
  entry_id: string;
}

/** The screen's playlist schedule: entries in priority order (JSON of PlaylistScheduleEntry[]). */
export interface ScreenScheduleTable {
  screen_id: string;
  tenant_id: string;
  entries: string;
  updated_at: number;
}

/** A takeover beats every schedule entry until `until` (ms) or until it is cleared. */
export interface ScreenTakeoverTable {
  screen_id: string;
  tenant_id: string;
  playlist_id: string;
  until: number;
  reason: string;
  started_at: number;
}

/** The next instant the screen's effective playlist may change (schedule rule edge or takeover end). */
export interface ScreenBoundaryTable {
  screen_id: string;
  tenant_id: string;
  due_at: number;
}

/** The display state the player and the kiosk apply: an override and a weekly schedule (JSON). */
export interface ScreenDisplayTable {
  screen_id: string;
  tenant_id: string;
  /** 'on' | 'off' override; null follows the schedule (or stays on without one). */
  power: string | null;
  schedule: string | null;
  updated_at: number;
}

export interface ScreenTables {
  screens: ScreenTable;
  screen_schedules: ScreenScheduleTable;
  screen_takeovers: ScreenTakeoverTable;
  screen_boundaries: ScreenBoundaryTable;
  screen_displays: ScreenDisplayTable;
  screen_tags: ScreenTagTable;
  screen_playlist_references: ScreenPlaylistReferenceTable;
}
