/**
 * The dedup record of proof of play: each showing a player reported, once per (screen, report id),
 * kept while its start is within PLAYBACK_REPORT_MAX_AGE_MS (older reports are refused, so a
 * pruned id can never count twice). Also what the showing was, for per-slot reports.
 */
export interface PlaybackReportTable {
  screen_id: string;
  report_id: string;
  tenant_id: string;
  manifest_revision: string;
  page_id: string;
  placement_id: string;
  slot_key: string | null;
  /** A media id (`med_…`) or an application id (`app_…`). */
  content_id: string;
  started_at: number;
  ended_at: number;
  outcome: 'complete' | 'interrupted';
  /** The screen-local day it was counted on. */
  day: string;
  received_at: number;
}

/** Proof of play per screen, media or application, and screen-local day. */
export interface PlaybackDayTable {
  screen_id: string;
  content_id: string;
  day: string;
  tenant_id: string;
  content_kind: 'media' | 'application';
  /** The media's filename (the application's name) at the last count: outlives the media. */
  filename: string;
  play_count: number;
  played_ms: number;
  complete_count: number;
  interrupted_count: number;
  impression_count: number;
  last_page_id: string;
  last_manifest_revision: string;
  first_started_at: number;
  last_started_at: number;
}

export interface PlaybackTables {
  playback_reports: PlaybackReportTable;
  playback_days: PlaybackDayTable;
}
