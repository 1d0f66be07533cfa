// Every durable event type Marquee emits, one entry each: whether a screen's runtime stream carries
// it (besides the account stream) and the schema of its `details`. The server's writers are typed by
// it, the player switches over its runtime members, and the CLI and dashboard read records with it.
// Adding a type is adding one entry here; the player's switch then fails to compile until a runtime
// type is handled.
import { z } from 'zod';
import type { EventRecord } from './events';
import { HostFacts } from './native';
import { DISPLAY_POWERS, DisplaySchedule, EFFECTIVE_SOURCES, PlaylistScheduleEntryWrite, TOAST_LEVELS } from './fleet';
import { ASPECT_RATIOS, GENERATION_QUALITIES, MEDIA_CONTENT_TYPES, type AspectRatio } from './media';
import { INVITATION_DELIVERIES, INVITATION_KINDS } from './people';
import { CAPABILITY_AREAS } from './tenants';
import { ScreenSyncGroup, WallRegion } from './screens';
import { CAPTURE_METHODS, CaptureId, ScreenObservation } from './screen-health';

const prefixed = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]+$`));
const Revision = z.number().int().min(1);
const Count = z.number().int().min(0);
const Tag = z.string().min(1).max(32);
const ScreenRevisionState = z.enum(['pairing_pending', 'active', 'archived', 'deleted']);
const ManifestRevisionId = prefixed('man');
const Instant = z.iso.datetime({ offset: true });

/** Events without details (the record has no `details` member). */
const NoDetails = z.undefined();

/** A screen's revision and state after a change (creation and lifecycle events). */
const ScreenLifecycle = z.strictObject({ revision: Revision, state: ScreenRevisionState });

/** Why a screen's player must fetch its manifest again (`screen.manifest_changed` details.reason). */
export const MANIFEST_CHANGE_REASONS = [
  'playlist_assigned',
  'timezone_changed',
  'archived',
  'unarchived',
  'playlist_updated',
  'playlist_rematerialized',
  /** The screen joined or left a sync group, or its wall region moved (issue 15, lockstep). */
  'sync_changed',
  /** A schedule boundary, a schedule write or a takeover changed the effective playlist. */
  'playlist_switched',
  /**
   * The effective playlist is unchanged, but the next boundary or what the screen shows from it is
   * not what the manifest says (its nextBoundaryAt and upcoming): a schedule write, a takeover, a boundary.
   */
  'upcoming_changed',
  /** The manifest revision is unchanged; its grants were reissued at a new content-access generation. */
  'content_access_regranted',
] as const;
export type ManifestChangeReason = (typeof MANIFEST_CHANGE_REASONS)[number];

const OperationOutcome = z.strictObject({ kind: z.string().min(1) });
const KvChange = z.strictObject({
  key: z.string(),
  revision: Revision,
  bytes: Count,
  via: z.enum(['owner', 'runtime']),
});
const ApplicationUpload = z.strictObject({
  release_id: prefixed('rel'),
  operation_id: prefixed('op'),
  revision: Revision,
});
const PlaylistRevision = z.strictObject({ revision: Revision });
const InvitationKind = z.enum(INVITATION_KINDS);
const Areas = z.array(z.enum(CAPABILITY_AREAS));
/** Who did it from the dashboard: descriptive, never authority. */
const Member = z.strictObject({ person_id: prefixed('usr'), display_name: z.string().min(1) });

interface EventTypeEntry {
  /** True when the screen's runtime stream (GET /runtime/v1/events) carries it to the player. */
  runtime: boolean;
  /** Strict: the server's events carry exactly these members. */
  details: z.ZodType;
}

const entry = <R extends boolean, D extends z.ZodType>(runtime: R, details: D) => ({ runtime, details });

export const EVENT_TYPES = {
  // Accounts and projects
  'account.created': entry(false, NoDetails),
  'account.enrolled': entry(false, z.strictObject({ agent_type: z.string().min(1), name: z.string().min(1) })),
  'project.updated': entry(false, NoDetails),

  // People and access (issue 18)
  'invitation.created': entry(
    false,
    z.strictObject({ kind: InvitationKind, delivery: z.enum(INVITATION_DELIVERIES), reused: z.boolean() }),
  ),
  'invitation.revoked': entry(false, z.strictObject({ kind: InvitationKind, delivery: z.enum(INVITATION_DELIVERIES) })),
  'invitation.accepted': entry(false, z.strictObject({ kind: InvitationKind, member: Member })),
  'member.joined': entry(false, z.strictObject({ membership: InvitationKind, member: Member })),
  'member.credentials_reset': entry(false, z.strictObject({ member: Member })),
  'agent.connection_approved': entry(
    false,
    z.strictObject({
      connection_id: prefixed('agc'),
      agent_id: prefixed('agt'),
      capabilities: Areas,
      approved_by: Member,
    }),
  ),
  'agent.activated': entry(
    false,
    z.strictObject({ name: z.string().min(1), agent_type: z.string().min(1), capabilities: Areas }),
  ),
  'agent.disconnected': entry(false, z.strictObject({ name: z.string().min(1), allow_last_agent: z.boolean() })),

  // Operators (issue 18)
  'account.suspended': entry(false, z.strictObject({ reason: z.string().nullable() })),
  'account.resumed': entry(false, NoDetails),
  'project.plan_changed': entry(false, z.strictObject({ plan: z.string().min(1), previous_plan: z.string().min(1) })),
  'billing.credits_granted': entry(
    false,
    z.strictObject({ credits: z.number().int().min(1), reason: z.string().min(1), operator_id: prefixed('opr') }),
  ),

  // Screens (spec Events: screen.updated, screen.manifest_changed, player.reload)
  'screen.paired': entry(false, ScreenLifecycle),
  'screen.provisioned': entry(false, ScreenLifecycle),
  'screen.activated': entry(false, ScreenLifecycle),
  'screen.player_bound': entry(false, ScreenLifecycle),
  'screen.updated': entry(
    false,
    z.strictObject({
      revision: Revision,
      changes: z.array(z.string().min(1)).min(1),
      tags: z.array(Tag).optional(),
      /** Lockstep: the group or region after the change, present when it changed (null: left). */
      sync_group: ScreenSyncGroup.nullable().optional(),
      wall_region: WallRegion.nullable().optional(),
      playlist_schedule_entries: z.array(PlaylistScheduleEntryWrite.required()).optional(),
    }),
  ),
  'screen.playlist_switched': entry(
    false,
    z.strictObject({
      from_playlist_id: z.string().min(1).nullable(),
      to_playlist_id: z.string().min(1).nullable(),
      source: z.enum(EFFECTIVE_SOURCES),
      cause: z.enum(['schedule_write', 'boundary', 'takeover', 'assignment', 'unarchive', 'timezone', 'availability']),
    }),
  ),
  // spec: severity warning; details playlist_id, entry_ids, code
  'screen.playlist_unavailable': entry(
    false,
    z.strictObject({ playlist_id: z.string().min(1), entry_ids: z.array(z.string().min(1)), code: z.string().min(1) }),
  ),
  'screen.takeover_changed': entry(
    true,
    z.strictObject({
      playlist_id: z.string().min(1).nullable(),
      until: Instant.nullable(),
      reason: z.string().min(1).nullable(),
    }),
  ),
  'screen.toast': entry(
    true,
    z.strictObject({
      toast_id: prefixed('tst'),
      level: z.enum(TOAST_LEVELS),
      text: z.string().min(1),
      duration_ms: Count,
      expires_at: Instant,
    }),
  ),
  'screen.display_changed': entry(
    true,
    z.strictObject({ power: z.enum(DISPLAY_POWERS).nullable(), schedule: DisplaySchedule.nullable() }),
  ),
  'player.reboot': entry(true, z.strictObject({ reboot_id: prefixed('rbt'), expires_at: Instant })),
  'screen.archived': entry(true, ScreenLifecycle),
  'screen.unarchived': entry(true, ScreenLifecycle),
  'screen.public_id_rotated': entry(true, ScreenLifecycle),
  'screen.credential_revoked': entry(false, ScreenLifecycle),
  'screen.deleted': entry(true, ScreenLifecycle),
  // Recovery of a native player's screen (spec: States / Screen): what the owner may see of the
  // offering device (never its duid or serial), and the confirmation, as a lifecycle event.
  'screen.recovery_offered': entry(
    false,
    z.strictObject({
      ...HostFacts.pick({ platform: true, model: true, firmware: true, manufacturer: true }).shape,
      expires_at: Instant,
    }),
  ),
  'screen.recovered': entry(false, ScreenLifecycle),
  // Lockstep (issue 15): the group's barrier, "page P of timeline at instant T", decided by the
  // server (the lead of browser players) for an advance no member can compute alone.
  'screen.sync_barrier': entry(
    true,
    z.strictObject({
      group: ScreenSyncGroup,
      timeline: z.string().min(1).max(256),
      page_index: Count,
      at: Instant,
    }),
  ),
  // Screenshots and screen health (issue 17): the request is the player's; the rest are the owner's.
  'screen.screenshot_requested': entry(
    true,
    z.strictObject({
      capture_id: CaptureId,
      expires_at: Instant,
      max_width_divisor: z.number().int().min(1),
      max_height_divisor: z.number().int().min(1),
      format: z.literal('image/webp'),
      quality: z.number().int().min(1).max(100),
      max_bytes: z.number().int().min(1),
    }),
  ),
  'screen.screenshot_ready': entry(
    false,
    z.strictObject({
      capture_id: CaptureId,
      bytes: z.number().int().min(1),
      width: z.number().int().min(1),
      height: z.number().int().min(1),
      sha256: z.string().regex(/^[a-f0-9]{64}$/),
      method: z.enum(CAPTURE_METHODS),
    }),
  ),
  'screen.screenshot_failed': entry(
    false,
    z.strictObject({ capture_id: CaptureId, reason: z.enum(['expired']), detail: z.string().min(1) }),
  ),
  'screen.surface_changed': entry(false, ScreenObservation),
  'screen.online': entry(false, z.strictObject({ last_seen_at: Instant, offline_since: Instant.nullable() })),
  'screen.offline': entry(false, z.strictObject({ last_seen_at: Instant, offline_since: Instant })),
  'screen.manifest_changed': entry(
    true,
    z.strictObject({
      manifest_revision: Revision,
      content_access_generation: Revision,
      reason: z.enum(MANIFEST_CHANGE_REASONS),
    }),
  ),
  'player.reload': entry(
    true,
    z.strictObject({
      reason: z.string().min(1),
      reload_id: prefixed('rld'),
      spread_s: Count,
      expires_at: Instant,
    }),
  ),

  // What players report (POST /runtime/v1/reports)
  'manifest.activated': entry(
    false,
    z.strictObject({
      manifest_revision: ManifestRevisionId,
      previous_manifest_revision: ManifestRevisionId.nullable(),
      content_access_generation: Revision,
    }),
  ),
  'application.event': entry(
    false,
    z.strictObject({
      placement_id: z.string().min(1),
      code: z.string().min(1),
      application_id: prefixed('app').optional(),
      release_id: prefixed('rel').optional(),
    }),
  ),
  'runtime.reported': entry(
    false,
    z.strictObject({
      code: z.string().min(1),
      severity: z.enum(['info', 'warning', 'error']),
      context: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),

  // Media
  'media.upload_declared': entry(
    false,
    z.strictObject({ upload_id: prefixed('upl'), content_type: z.enum(MEDIA_CONTENT_TYPES), bytes: Count }),
  ),
  'media.upload_committed': entry(false, z.strictObject({ upload_id: prefixed('upl') })),
  'media.upload_failed': entry(
    false,
    z.strictObject({ upload_id: prefixed('upl'), state: z.enum(['failed', 'cancelled', 'expired']) }),
  ),
  'media.ready': entry(
    false,
    z.strictObject({
      kind: z.enum(['image', 'video', 'audio']),
      content_type: z.enum(MEDIA_CONTENT_TYPES),
      bytes: Count,
      tag: Tag.nullable(),
    }),
  ),
  'media.generated': entry(
    false,
    z.strictObject({
      aspect_ratio: z.enum(ASPECT_RATIOS as [AspectRatio, ...AspectRatio[]]),
      quality: z.enum(GENERATION_QUALITIES),
      credits: Count,
      tag: Tag.nullable(),
    }),
  ),
  'media.updated': entry(
    false,
    z.strictObject({ tag: Tag.nullable(), previous_tag: Tag.nullable(), revision: Revision }),
  ),
  'media.deleted': entry(false, z.strictObject({ bytes: Count, tag: Tag.nullable() })),

  // Playlists
  'playlist.created': entry(false, PlaylistRevision),
  'playlist.updated': entry(false, PlaylistRevision),
  'playlist.deleted': entry(false, PlaylistRevision),
  'playlist.rematerialized': entry(
    false,
    z.strictObject({
      revision: Revision,
      media_id: prefixed('med').optional(),
      application_id: prefixed('app').optional(),
      available: z.boolean(),
    }),
  ),

  // Applications
  'application.created': entry(false, ApplicationUpload),
  'application.release_accepted': entry(false, ApplicationUpload),
  'application.published': entry(
    false,
    z.strictObject({
      application_id: prefixed('app'),
      release_id: prefixed('rel'),
      latest_ready_release: prefixed('rel').nullable(),
    }),
  ),
  'application.deleted': entry(false, z.strictObject({ release_ids: z.array(prefixed('rel')) })),

  // Key/value storage
  'kv.created': entry(false, KvChange),
  'kv.updated': entry(false, KvChange),
  'kv.deleted': entry(false, KvChange),

  // Operations
  'operation.succeeded': entry(false, OperationOutcome),
  'operation.failed': entry(false, OperationOutcome),
  'operation.cancelled': entry(false, OperationOutcome),
} as const satisfies Record<string, EventTypeEntry>;

type Catalog = typeof EVENT_TYPES;
export type EventType = keyof Catalog;
export type EventDetails<T extends EventType> = z.infer<Catalog[T]['details']>;
/** The types a screen's runtime stream carries. */
export type RuntimeEventType = { [T in EventType]: Catalog[T]['runtime'] extends true ? T : never }[EventType];

/** `details` is required when the type has details, and absent when it has none. */
type DetailsMember<T extends EventType> =
  undefined extends EventDetails<T> ? { details?: EventDetails<T> } : { details: EventDetails<T> };

/** One event's type and details: a union discriminated by `type` (narrow with `switch (event.type)`). */
export type TypedEvent<T extends EventType = EventType> = { [K in T]: { type: K } & DetailsMember<K> }[T];
/** An event a screen's player hears on its runtime stream. */
export type RuntimeEvent = TypedEvent<RuntimeEventType>;
/** A durable event record (EventList item, SSE data) typed by its `type`. */
export type TypedEventRecord<T extends EventType = EventType> = {
  [K in T]: Omit<EventRecord, 'type' | 'details'> & { type: K } & DetailsMember<K>;
}[T];

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_TYPES, type);
}

export function isRuntimeEventType(type: string): type is RuntimeEventType {
  return isEventType(type) && EVENT_TYPES[type].runtime;
}

/**
 * Why these details are not what the type's entry says, or an empty list when they are (strict:
 * the server's own check, run on every event before it is written).
 */
export function eventDetailsIssues(type: EventType, details: unknown): string[] {
  const parsed = (EVENT_TYPES[type].details as z.ZodType).safeParse(details);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => `${['details', ...i.path.map(String)].join('.')}: ${i.message}`);
}

/** Readers accept members added after they were built: new fields are additive. */
const lenient = new Map<EventType, z.ZodType>();
function lenientDetails(type: EventType): z.ZodType {
  let schema = lenient.get(type);
  if (!schema) {
    const strict = EVENT_TYPES[type].details as z.ZodType;
    schema = strict instanceof z.ZodObject ? strict.loose() : strict;
    lenient.set(type, schema);
  }
  return schema;
}

/**
 * A record as a typed event, or undefined when its type is one this build does not know (a newer
 * server) or its details break the type's schema. Members this build does not know are kept.
 */
export function parseEventRecord(record: EventRecord): TypedEventRecord | undefined {
  if (!isEventType(record.type)) return undefined;
  const details = lenientDetails(record.type).safeParse(record.details);
  if (!details.success) return undefined;
  const { details: _raw, ...envelope } = record;
  return (details.data === undefined ? envelope : { ...envelope, details: details.data }) as TypedEventRecord;
}

/** The SSE data of a runtime stream frame as a runtime event, or undefined (unknown type, bad details). */
export function parseRuntimeEvent(data: unknown): RuntimeEvent | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { type, details } = data as { type?: unknown; details?: unknown };
  if (typeof type !== 'string' || !isRuntimeEventType(type)) return undefined;
  const parsed = lenientDetails(type).safeParse(details);
  if (!parsed.success) return undefined;
  return (parsed.data === undefined ? { type } : { type, details: parsed.data }) as RuntimeEvent;
}
