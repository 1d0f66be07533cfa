// Fleet control on the wire: playlist schedules, takeovers, commands on screens (toast, display,
// reboot) and fleet actions over many screens. Shapes the spec leaves "not shown" follow the
// reference contract where it has them (toast) and are ours otherwise (docs/decisions.md, issue 16).
import { z } from 'zod';
import { FLEET_SELECTION_MAX, TAGS_PER_SCREEN } from './limits';
import { ScreenSyncGroup, ScreenTag } from './screens';
import { Visibility, VisibilityWindow, VISIBILITY_MAX_WINDOWS } from './visibility';

/** Entries of one screen's playlist schedule: a day of dayparts with room to spare. */
export const SCHEDULE_MAX_ENTRIES = 32;
/** reference contract: toast text 1 to 120 characters, at most 3 lines (LF only). */
export const TOAST_TEXT_MAX = 120;
export const TOAST_MAX_LINES = 3;
/** reference contract: toast duration 2 to 60 s, 10 s by default. */
export const TOAST_DURATION_MIN_MS = 2000;
export const TOAST_DURATION_MAX_MS = 60_000;
export const TOAST_DURATION_DEFAULT_MS = 10_000;
export const TOAST_LEVELS = ['info', 'alert', 'error'] as const;
export type ToastLevel = (typeof TOAST_LEVELS)[number];
/** A takeover reason is a short operator note shown in lists and events. */
export const TAKEOVER_REASON_MAX = 200;

const EntryId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -');
const PlaylistId = z.string().min(1).max(200);
const Instant = z.iso.datetime({ offset: true });

/** One schedule entry: its playlist plays while its schedule/v1 rule holds in the screen's time zone. */
export const PlaylistScheduleEntryWrite = z.strictObject({
  /** Stable id of the entry (events and unavailability name it); generated when omitted. */
  id: EntryId.optional(),
  playlist_id: PlaylistId,
  rule: Visibility,
});
export type PlaylistScheduleEntryWrite = z.infer<typeof PlaylistScheduleEntryWrite>;
export type PlaylistScheduleEntry = Required<PlaylistScheduleEntryWrite>;

export const ScreenPlaylistScheduleWrite = z.strictObject({
  /** In priority order: the first entry whose rule holds gives the effective playlist. */
  entries: z
    .array(PlaylistScheduleEntryWrite)
    .max(SCHEDULE_MAX_ENTRIES)
    .refine((entries) => {
      const ids = entries.flatMap((e) => (e.id ? [e.id] : []));
      return new Set(ids).size === ids.length;
    }, 'entry ids must be unique'),
});
export type ScreenPlaylistScheduleWrite = z.infer<typeof ScreenPlaylistScheduleWrite>;

export const EFFECTIVE_SOURCES = ['takeover', 'schedule', 'assignment', 'none'] as const;

export interface ScreenTakeover {
  playlist_id: string;
  until: string;
  reason: string;
}

export interface ScreenPlaylistScheduleView {
  entries: PlaylistScheduleEntry[];
  updated_at: string | null;
  effective_playlist: { playlist_id: string | null; source: (typeof EFFECTIVE_SOURCES)[number] };
  /** The next instant the server re-evaluates the schedule (a rule edge or the takeover's end). */
  next_boundary_at: string | null;
  takeover: ScreenTakeover | null;
}

export const TakeoverRequest = z.strictObject({
  playlist_id: PlaylistId,
  /** When the takeover ends by itself; must be in the future. */
  until: Instant,
  reason: z.string().min(1).max(TAKEOVER_REASON_MAX),
});
export type TakeoverRequest = z.infer<typeof TakeoverRequest>;

export const ToastRequest = z.strictObject({
  level: z.enum(TOAST_LEVELS),
  text: z
    .string()
    .min(1)
    .max(TOAST_TEXT_MAX)
    .refine((t) => !t.includes('\r'), 'line breaks are LF only')
    .refine((t) => t.split('\n').length <= TOAST_MAX_LINES, `at most ${TOAST_MAX_LINES} lines`)
    .refine((t) => t.trim().length > 0, 'must not be blank'),
  duration_ms: z
    .number()
    .int()
    .min(TOAST_DURATION_MIN_MS)
    .max(TOAST_DURATION_MAX_MS)
    .default(TOAST_DURATION_DEFAULT_MS),
});
export type ToastRequest = z.input<typeof ToastRequest>;

export interface ToastAccepted {
  toast_id: string;
  expires_at: string;
}

export const DISPLAY_POWERS = ['on', 'off'] as const;
export type DisplayPower = (typeof DISPLAY_POWERS)[number];

/** A weekly display schedule: the display is on inside these windows and off outside them. */
export const DisplaySchedule = z.strictObject({
  on: z.array(VisibilityWindow).min(1).max(VISIBILITY_MAX_WINDOWS),
});
export type DisplaySchedule = z.infer<typeof DisplaySchedule>;

export const DisplayRequest = z.strictObject({ power: z.enum(DISPLAY_POWERS) });
export type DisplayRequest = z.infer<typeof DisplayRequest>;

/** The display state a player applies: an override beats the schedule; neither means on. */
export interface DisplayState {
  power: DisplayPower | null;
  schedule: DisplaySchedule | null;
}

export interface RebootAccepted {
  reboot_id: string;
  expires_at: string;
}

// ---- Fleet actions (POST /api/v1/screens/actions)

export const FleetSelector = z.union([
  z.strictObject({
    ids: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(FLEET_SELECTION_MAX)
      .refine((ids) => new Set(ids).size === ids.length, 'ids must be unique'),
  }),
  z.strictObject({ tag: ScreenTag }),
]);
export type FleetSelector = z.infer<typeof FleetSelector>;

const Tags = z
  .array(ScreenTag)
  .max(TAGS_PER_SCREEN)
  .refine((tags) => new Set(tags).size === tags.length, 'tags must be unique');

/** Every action type; a member of another type is an unknown field (strict objects). */
export const FleetAction = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('assign'), playlist_id: PlaylistId.nullable() }),
  z.strictObject({ type: z.literal('reload') }),
  z.strictObject({ type: z.literal('toast'), ...ToastRequest.shape }),
  z.strictObject({ type: z.literal('set_tags'), tags: Tags }),
  z.strictObject({ type: z.literal('add_tags'), tags: Tags.min(1) }),
  z.strictObject({ type: z.literal('remove_tags'), tags: Tags.min(1) }),
  z.strictObject({ type: z.literal('takeover'), ...TakeoverRequest.shape }),
  z.strictObject({ type: z.literal('takeover_clear') }),
  z.strictObject({ type: z.literal('set_playlist_schedule'), ...ScreenPlaylistScheduleWrite.shape }),
  z.strictObject({ type: z.literal('clear_playlist_schedule') }),
  z.strictObject({ type: z.literal('reboot') }),
  z.strictObject({ type: z.literal('display'), power: z.enum(DISPLAY_POWERS) }),
  z.strictObject({ type: z.literal('display_clear') }),
  z.strictObject({ type: z.literal('set_display_schedule'), ...DisplaySchedule.shape }),
  z.strictObject({ type: z.literal('clear_display_schedule') }),
  /** Our addition (spec: new action types are additive): the screens join a sync group, or leave it (null). */
  z.strictObject({ type: z.literal('set_sync_group'), sync_group: ScreenSyncGroup.nullable() }),
]);
export type FleetAction = z.infer<typeof FleetAction>;
export type FleetActionType = FleetAction['type'];

export const ScreenActionRequest = z.strictObject({ selector: FleetSelector, action: FleetAction });
export type ScreenActionRequest = z.infer<typeof ScreenActionRequest>;

/** One selected screen's outcome: what its single-screen route would answer. */
export type ScreenActionItem =
  | { screen_id: string; status: number; ok: true; result?: unknown }
  | { screen_id: string; status: number; ok: false; problem: Record<string, unknown> };

export interface ScreenActionResult {
  action: FleetActionType;
  /** In selector order (ids as given; a tag's screens by creation time). */
  results: ScreenActionItem[];
  succeeded: number;
  failed: number;
}
