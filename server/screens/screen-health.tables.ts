/** A screen's screenshot slot: the current request and the last ready image (screens/screenshots.ts). */
export interface ScreenScreenshotTable {
  screen_id: string;
  tenant_id: string;
  /** The current request (`shot_…`); a later request replaces it. */
  capture_id: string;
  requested_at: number;
  expires_at: number;
  /** When the current request was recorded as timed out (no upload before expires_at). */
  timed_out_at: number | null;
  /** Why it timed out, in words. */
  failure: string | null;
  /** The request the ready image answered; the image stays until a later upload replaces it. */
  ready_capture_id: string | null;
  /** CaptureMethod of the ready image. */
  method: string | null;
  width: number | null;
  height: number | null;
  bytes: number | null;
  sha256: string | null;
  captured_at: number | null;
  /** The still WebP (≤ 2 MiB). */
  image: Buffer | null;
}

/** What the screen view tells of a screen's health (screens/screen-health.ts). */
export interface ScreenHealthTable {
  screen_id: string;
  tenant_id: string;
  /** 'online' | 'offline' as last announced (screen.online / screen.offline); null before the first. */
  presence: string | null;
  presence_changed_at: number | null;
  /** Set while announced offline: the last time the screen was seen. */
  offline_since: number | null;
  /** PlayerKind of the last paired runtime stream. */
  player_kind: string | null;
  player_version: string | null;
  /** JSON of the last accepted ScreenObservation. */
  observation: string | null;
  recoveries: number;
  last_recovery_at: number | null;
  last_recovery_reason: string | null;
}

export interface ScreenHealthTables {
  screen_screenshots: ScreenScreenshotTable;
  screen_health: ScreenHealthTable;
}
