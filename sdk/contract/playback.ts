// Proof of play: what a player says went on glass (`POST /runtime/v1/playback`, one showing per
// report, uploaded in batches) and the daily aggregates an operator or advertiser reads back
// (`GET /api/v1/playback`, JSON or CSV). The row keeps the reference contract's fields and adds
// ours (application rows, played seconds, outcomes, adslot impressions).
import { z } from 'zod';
import { PAGE_ID_PATTERN } from './canvas';

/** Reports per upload: a minute of a busy screen is a few dozen; a week's backlog drains in a few hundred uploads. */
export const PLAYBACK_BATCH_MAX = 500;
/**
 * How old a showing may be when it arrives. The server keeps the ids it counted this long (the
 * dedup record) and refuses older reports as `too_old`, so an id forgotten by pruning can never be
 * counted twice; players drop what is older than this rather than upload it. A month: well past
 * the "week offline" a player must survive.
 */
export const PLAYBACK_REPORT_MAX_AGE_MS = 35 * 24 * 3600_000;
/** A showing may start at most this far ahead of the server's clock (a player whose clock is off). */
export const PLAYBACK_CLOCK_SKEW_MS = 5 * 60_000;
/** The longest one showing counts for: a page turn is bounded; a stuck clock must not add days. */
export const PLAYBACK_SHOWING_MAX_MS = 24 * 3600_000;
/** Rows per JSON page (the reference contract's list holds at most 200). */
export const PLAYBACK_PAGE_MAX = 200;

/** Player-made, stable per showing (a UUID, typically): the server counts each id once. */
export const PLAYBACK_REPORT_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
const DAY_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const ManifestRevisionRef = z.string().regex(/^man_[A-Za-z0-9_-]{1,120}$/, 'must be a manifestRevision (man_…)');
const MediaId = z.string().regex(/^med_[A-Za-z0-9_-]{1,120}$/, 'must be a media id (med_…)');
const ApplicationId = z.string().regex(/^app_[A-Za-z0-9_-]{1,120}$/, 'must be an application id (app_…)');
const ScreenId = z.string().regex(/^scr_[A-Za-z0-9_-]{1,120}$/, 'must be a screen id (scr_…)');
const Instant = z.iso.datetime({ offset: true });
const Day = z
  .string()
  .regex(DAY_PATTERN, 'must be a calendar day YYYY-MM-DD')
  // A day that exists: Date.parse takes 2026-02-30 as March 2, so the day must come back unchanged.
  .refine((d) => {
    const at = Date.parse(`${d}T00:00:00Z`);
    return !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === d;
  }, 'must be a calendar day');

export const SHOWING_OUTCOMES = ['complete', 'interrupted'] as const;
export type ShowingOutcome = (typeof SHOWING_OUTCOMES)[number];

/**
 * One item that was on glass: a media item of an image or video placement, or an application
 * placement. `slot_key` names the adslot of the page it showed on (an impression).
 */
export const PlaybackReport = z
  .strictObject({
    id: z.string().regex(PLAYBACK_REPORT_ID_PATTERN, 'must be 8 to 64 of A-Z, a-z, 0-9, _ or -'),
    manifest_revision: ManifestRevisionRef,
    page_id: z.string().regex(PAGE_ID_PATTERN, 'must be a page id'),
    placement_id: z.string().regex(PAGE_ID_PATTERN, 'must be a placement id'),
    slot_key: z.string().regex(PAGE_ID_PATTERN, 'must be a slot key').optional(),
    media_id: MediaId.optional(),
    application_id: ApplicationId.optional(),
    started_at: Instant,
    ended_at: Instant,
    outcome: z.enum(SHOWING_OUTCOMES),
  })
  .superRefine((r, ctx) => {
    if ((r.media_id === undefined) === (r.application_id === undefined))
      ctx.addIssue({ code: 'custom', path: ['media_id'], message: 'name exactly one of media_id and application_id' });
    if (Date.parse(r.ended_at) < Date.parse(r.started_at))
      ctx.addIssue({ code: 'custom', path: ['ended_at'], message: 'must not be before started_at' });
  });
export type PlaybackReport = z.infer<typeof PlaybackReport>;

export const PlaybackReportBatch = z.strictObject({
  reports: z.array(PlaybackReport).min(1).max(PLAYBACK_BATCH_MAX),
});
export type PlaybackReportBatch = z.infer<typeof PlaybackReportBatch>;

/**
 * Why a well-formed report was not counted. It is acknowledged all the same (the player deletes
 * it): sending it again could never make it count.
 */
export const PLAYBACK_REFUSALS = ['unknown_manifest_revision', 'not_in_manifest', 'too_old', 'in_future'] as const;
export type PlaybackRefusal = (typeof PLAYBACK_REFUSALS)[number];

/** 200 answer of POST /runtime/v1/playback: every report of the batch is acknowledged. */
export interface PlaybackAck {
  /** Counted now. */
  counted: number;
  /** Counted before (the same id): a retry of an upload whose answer was lost. */
  duplicates: number;
  refused: { id: string; reason: PlaybackRefusal }[];
}

/** One row: a screen, a media or application, and a calendar day in the screen's time zone. */
export interface PlaybackRow {
  screen_id: string;
  /** Null on an application's row. */
  media_id: string | null;
  /** Our addition: set on an application's row (media_id is then null). */
  application_id: string | null;
  /** The media's filename (the application's name) when last counted: kept after the media is deleted. */
  filename: string;
  /** The screen's local calendar day the showings started on (UTC for a screen without a time zone). */
  day: string;
  /** Showings that started that day. */
  play_count: number;
  /** Ours: seconds on glass, summed over those showings (a showing counts on the day it started). */
  played_seconds: number;
  complete_count: number;
  interrupted_count: number;
  /** Ours: showings on adslot pages (impressions of the slot's content). */
  impression_count: number;
  last_page_id: string;
  last_manifest_revision: string;
  first_started_at: string;
  last_started_at: string;
}

export interface PlaybackList {
  items: PlaybackRow[];
  /** Ours: the next page's cursor, null on the last page. */
  next_cursor: string | null;
}

/** The CSV's columns, in order: every row field. */
export const PLAYBACK_CSV_COLUMNS = [
  'day',
  'screen_id',
  'media_id',
  'application_id',
  'filename',
  'play_count',
  'played_seconds',
  'complete_count',
  'interrupted_count',
  'impression_count',
  'first_started_at',
  'last_started_at',
  'last_page_id',
  'last_manifest_revision',
] as const satisfies readonly (keyof PlaybackRow)[];

export const PLAYBACK_FORMATS = ['json', 'csv'] as const;

/** GET /api/v1/playback: every filter optional; `day`, or `from`/`to` (inclusive), are screen-local days. */
export const PlaybackQuery = z
  .strictObject({
    screen_id: ScreenId.optional(),
    media_id: MediaId.optional(),
    application_id: ApplicationId.optional(),
    day: Day.optional(),
    from: Day.optional(),
    to: Day.optional(),
    format: z.enum(PLAYBACK_FORMATS).optional(),
    cursor: z.string().min(1).max(400).optional(),
    limit: z.coerce.number().int().min(1).max(PLAYBACK_PAGE_MAX).optional(),
  })
  .superRefine((q, ctx) => {
    if (q.day !== undefined && (q.from !== undefined || q.to !== undefined))
      ctx.addIssue({ code: 'custom', path: ['day'], message: 'give day, or from and to, not both' });
    if (q.media_id !== undefined && q.application_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['application_id'], message: 'give media_id or application_id, not both' });
    if (q.from !== undefined && q.to !== undefined && q.from > q.to)
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
  });
export type PlaybackQuery = z.infer<typeof PlaybackQuery>;
