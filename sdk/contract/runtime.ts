// Runtime plane wire shapes besides the manifest (manifest.ts): reports, release launches, and the
// names a player needs to call the runtime routes.
import { z } from 'zod';
import { PAGE_ID_PATTERN } from './canvas';

/** Report codes with a defined context; any other code is a runtime condition. */
export const MANIFEST_ACTIVATED = 'manifest.activated';
export const PLAYBACK_VIDEO_STARTED = 'playback.video_started';
export const APPLICATION_EVENT = 'application.event';
export const TYPED_REPORT_CODES = [MANIFEST_ACTIVATED, PLAYBACK_VIDEO_STARTED, APPLICATION_EVENT] as const;

export const REPORT_SEVERITIES = ['info', 'warning', 'error'] as const;
export type ReportSeverity = (typeof REPORT_SEVERITIES)[number];

/** Runtime condition codes (reference contract). */
export const REPORT_CODE_PATTERN = /^[a-z0-9._-]{1,80}$/;
/** Application event codes, as the app bridge's event.emit allows them. */
export const APPLICATION_EVENT_CODE_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const ManifestRevisionRef = z
  .string()
  .regex(/^man_[A-Za-z0-9_-]{1,120}$/, 'must be a manifestRevision (man_…) of this screen');

/** Base shape of POST /runtime/v1/reports; the context is then checked against the code. */
export const RuntimeReport = z.strictObject({
  severity: z.enum(REPORT_SEVERITIES),
  code: z.string().regex(REPORT_CODE_PATTERN, 'must be 1 to 80 of a-z, 0-9, ., _ or -'),
  /** Required key; null only for runtime conditions. */
  context: z.record(z.string(), z.unknown()).nullable(),
});
export type RuntimeReport = z.infer<typeof RuntimeReport>;

export const ManifestActivatedContext = z.strictObject({ manifest_revision: ManifestRevisionRef });
export const PlaybackVideoStartedContext = z.strictObject({
  media_id: z.string().regex(/^med_[A-Za-z0-9_-]{1,120}$/, 'must be a media id (med_…)'),
  manifest_revision: ManifestRevisionRef,
  page_id: z.string().regex(PAGE_ID_PATTERN, 'must be a page id'),
});
export const ApplicationEventContext = z.strictObject({
  placement_id: z.string().regex(PAGE_ID_PATTERN, 'must be a placement id'),
  code: z.string().regex(APPLICATION_EVENT_CODE_PATTERN, 'must be 1 to 64 of A-Z, a-z, 0-9, ., _ or -'),
});

/** 201 answer of POST /runtime/v1/manifests/{manifest_revision}/releases/{release_id}/launch. */
export interface ReleaseLaunch {
  /** `<release origin>/?ticket=…`: load it in the application frame within 30 s, once. */
  launch_url: string;
  expires_at: string;
}

/** POST /runtime/v1/sync/advance: the controlling application of a lockstep page asked for page `page_index`. */
export const SyncAdvance = z.strictObject({
  /** The timeline the member plays (playlist, revision and epoch): barriers name it. */
  timeline: z.string().min(1).max(256),
  page_index: z.number().int().min(0).max(10_000),
});
export type SyncAdvance = z.infer<typeof SyncAdvance>;

/** The barrier an advance became (the group's, which may be one another member asked for first), or null (none). */
export interface SyncAdvanceAccepted {
  barrier: SyncBarrierView | null;
}

/** A lockstep barrier: the group shows page `page_index` of `timeline` at instant `at`. */
export interface SyncBarrierView {
  timeline: string;
  page_index: number;
  at: string;
}

/** GET /runtime/v1/sync/barrier: the group's last barrier on this screen's stream, or null. */
export type SyncBarrier = SyncAdvanceAccepted;

/** GET /runtime/v1/sync/lan-key (native sessions): the key that authenticates the group's LAN messages. */
export interface SyncLanKey {
  group: string;
  /** 32 bytes, base64url: HMAC key of the LAN frames of this project's group. */
  key: string;
}

/**
 * 200 answer of GET /runtime/v1/time: the server clock (milliseconds since the Unix epoch) when the
 * request arrived and when the answer left, for a timed exchange as NTP makes it. The caller stamps
 * its own send and receive instants; sdk/lockstep/clock-estimator.ts turns exchanges into an offset.
 */
export interface RuntimeTime {
  received_at_ms: number;
  sent_at_ms: number;
}

/** GET /runtime/v1/chrome: stage chrome beside the manifest; version 1 has no banner. */
export interface RuntimeChrome {
  schema_version: 1;
  banner: null;
}
