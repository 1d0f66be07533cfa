// The spec's limits, once, for the server that enforces them and the clients that check early.

export const API_VERSION = '0.2.0'; // spec Versioning 1: control-plane contract version
export const PROTOCOL_VERSION = '1'; // app bridge / runtime protocol

export const LIMITS = {
  application_compressed_bytes: 104_857_600,
  application_expanded_bytes: 262_144_000,
  application_file_count: 5000,
  application_file_bytes: 33_554_432,
  application_path_depth: 16,
  application_path_bytes: 255,
  playlist_max_pages: 100,
  playlist_max_items_per_page: 24,
  transition_max_duration_ms: 60_000,
  screens_per_account: 50,
  account_content_bytes: 1_073_741_824,
} as const;

export const MEDIA_MAX_BYTES = 1_073_741_824; // spec: media object 1 to 1073741824 bytes
export const ADSLOT_MAX_PAGES = 16;
export const NAME_MAX = 120; // playlist, screen name and label
export const TIMEZONE_MAX = 64;
export const PROJECT_NAME_MAX = 60;
export const AGENT_NAME_MAX = 80;
export const MEDIA_FILENAME_MAX = 255;
export const TAG_PATTERN = /^[A-Za-z0-9]{1,32}$/;
export const TAGS_PER_SCREEN = 16;
export const FLEET_SELECTION_MAX = 500;
export const IDEMPOTENCY_KEY_MIN = 8; // spec: Idempotency-Key 8 to 200 characters
export const IDEMPOTENCY_KEY_MAX = 200;
/** One Unicode control character (C0 including NUL, DEL, C1): never allowed in names, paths or headers. */
export const CONTROL_CHARACTER = /\p{Cc}/u;
