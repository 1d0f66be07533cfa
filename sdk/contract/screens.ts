// Screens, pairing and runtime sessions: request schemas and response types of both planes.
import { z } from 'zod';
import type { DisplayState } from './fleet';
import type { ScreenHealth, ScreenObservation } from './screen-health';
import { NAME_MAX, TAG_PATTERN, TAGS_PER_SCREEN, TIMEZONE_MAX } from './limits';

/** The spec's pairing alphabet: no 0/1/I/L/O, so a code read off a TV cannot be misread. */
export const PAIRING_CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const PAIRING_CODE_LENGTH = 6;
export const PAIRING_CODE_PATTERN = /^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/;
/**
 * The meta tag of the player's shell naming the URL its pairing QR code opens, with `{code}` for the
 * code; the server names the dashboard's Screens page (`?pair={code}`), which fills the code in.
 */
export const PAIRING_HINT_META = 'marquee:pairing-hint-url';
/** The dashboard's query parameter that carries a pairing code from a scanned QR code. */
export const PAIRING_HINT_PARAM = 'pair';

export const SCREEN_STATES = ['pairing_pending', 'active', 'archived'] as const;
export type ScreenState = (typeof SCREEN_STATES)[number];

export const RUNTIME_CAPABILITIES = [
  'manifest.read',
  'events.read',
  'content.read',
  'kv.read',
  'kv.write',
  'runtime.report',
  'presence.write',
] as const;
export type RuntimeCapability = (typeof RUNTIME_CAPABILITIES)[number];

const Label = z
  .string()
  .min(1)
  .max(NAME_MAX)
  .refine((s) => s.trim().length > 0, 'must not be blank');
const OpaqueToken = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be 43 base64url characters');

export const ScreenTag = z.string().regex(TAG_PATTERN, 'must be 1 to 32 letters or digits');

/** A sync group: the same grammar as a tag. Screens of one project in one group play in lockstep. */
export const ScreenSyncGroup = z.string().regex(TAG_PATTERN, 'must be 1 to 32 letters or digits');

/** Our bound on wall-region coordinates: far past any canvas, and small enough to stay exact in arithmetic. */
export const WALL_REGION_MAX = 100_000;
const RegionCoordinate = z.number().finite().min(0).max(WALL_REGION_MAX);
const RegionLength = z.number().finite().positive().max(WALL_REGION_MAX);

/**
 * The part of every page's canvas a screen of a video wall shows, in canvas coordinates; the
 * screen scales it to its viewport (by the page's viewport fit).
 */
export const WallRegion = z.strictObject({
  x: RegionCoordinate,
  y: RegionCoordinate,
  width: RegionLength,
  height: RegionLength,
});
export type WallRegion = z.infer<typeof WallRegion>;

export const PairScreen = z.strictObject({
  code: z.string().regex(PAIRING_CODE_PATTERN, `must be six characters of ${PAIRING_CODE_ALPHABET}`),
  label: Label.optional(),
});
export type PairScreen = z.infer<typeof PairScreen>;

export const ProvisionScreen = z.strictObject({ label: Label.optional() });
export type ProvisionScreen = z.infer<typeof ProvisionScreen>;

export const ScreenPatch = z
  .strictObject({
    /** Writes the label. */
    name: Label.optional(),
    /** Assigns the playlist; null removes the assignment. */
    playlist_id: z.string().min(1).max(200).nullable().optional(),
    /** IANA time-zone identifier; page visibility is evaluated in it. */
    timezone: z.string().min(1).max(TIMEZONE_MAX).optional(),
    /** Replaces the whole set; an empty array clears it. */
    tags: z
      .array(ScreenTag)
      .max(TAGS_PER_SCREEN)
      .refine((tags) => new Set(tags).size === tags.length, 'tags must be unique')
      .optional(),
    /** Lockstep with the project's other screens of this group that show the same playlist; null plays alone (and clears wall_region). */
    sync_group: ScreenSyncGroup.nullable().optional(),
    /** The part of every page's canvas this screen shows (a video wall); needs a sync group; null shows the whole canvas. */
    wall_region: WallRegion.nullable().optional(),
  })
  .refine(
    (p) => Object.keys(p).length > 0,
    'send at least one of name, playlist_id, timezone, tags, sync_group, wall_region',
  );
export type ScreenPatch = z.infer<typeof ScreenPatch>;

export const ScreenListQuery = z.strictObject({
  /** Omitted: pairing_pending and active screens; otherwise exactly that state. */
  state: z.enum(SCREEN_STATES).optional(),
  tag: ScreenTag.optional(),
});
export type ScreenListQuery = z.infer<typeof ScreenListQuery>;

export const PairingComplete = z.strictObject({ completion_nonce: OpaqueToken });
export type PairingComplete = z.infer<typeof PairingComplete>;

export const RuntimeSessionRequest = z.strictObject({ public_id: z.string().min(1).max(200) });
export type RuntimeSessionRequest = z.infer<typeof RuntimeSessionRequest>;

/** A device session may name the public id the player was opened at; it must be the device's screen. */
export const DeviceSessionRequest = z.strictObject({ public_id: z.string().min(1).max(200).optional() });
export type DeviceSessionRequest = z.infer<typeof DeviceSessionRequest>;

export const BrowserProvisioningExchange = z.strictObject({
  provisioning_token: OpaqueToken,
  exchange_id: z.string().regex(/^xchg_[A-Za-z0-9_-]{43}$/, 'must be xchg_ followed by 43 base64url characters'),
});
export type BrowserProvisioningExchange = z.infer<typeof BrowserProvisioningExchange>;

export interface Screen {
  id: string;
  public_id: string;
  label: string;
  /** The same as label (the spec's word). */
  name: string;
  revision: number;
  manifest_revision: number;
  content_access_generation: number;
  state: ScreenState;
  playlist_id?: string;
  timezone?: string;
  tags: string[];
  /** Lockstep: the screen's sync group, when it has one. */
  sync_group?: string;
  /** Lockstep: the region of the canvas a video wall's screen shows, when it has one. */
  wall_region?: WallRegion;
  /** A paired runtime event stream is connected (or was, within a few seconds). */
  online: boolean;
  /** Last time a paired runtime event stream was connected; absent until the first. */
  last_online_at?: string;
  /** A native device offers to take this screen over (its key was lost); confirm with recovery/confirm. */
  recovery_pending?: RecoveryPending;
  /** The agent's opaque comments (comments routes); absent when unset, never on a manifest. */
  comments?: Record<string, unknown>;
  /** The surface the player last reported (PUT /runtime/v1/observation); absent until the first. */
  observation?: ScreenObservation;
  /** Is it alive, and what is on it (screen views of the control plane). */
  health?: ScreenHealth;
  created_at: string;
  updated_at: string;
}

/** What the owner sees of a recovery offer: when, until when, and the offering device (never its identifiers). */
export interface RecoveryPending {
  offered_at: string;
  expires_at: string;
  host: { platform: string; model?: string; firmware?: string; manufacturer?: string };
}

export interface ScreenList {
  items: Screen[];
}

export interface PairingSession {
  code: string;
  expires_at: string;
}

export interface PairingClaim {
  screen: Screen;
  /** `<play origin>/s/<public_id>` */
  public_url: string;
}

export type PairingCompletion = PairingClaim;
export type BrowserProvisioningCompletion = PairingClaim;

export interface PairingClaimedEvent {
  type: 'pairing.claimed';
  completion_nonce: string;
}

export interface ScreenProvisioning {
  screen: Screen;
  public_url: string;
  /** `<public_url>#provision=<token>`: open it on the screen's browser; treat it as a credential. */
  provisioning_url: string;
  expires_at: string;
}

export interface RuntimeSession {
  paired: boolean;
  capabilities: RuntimeCapability[];
  event_cursor: string;
  public_url: string;
  /** Our addition: the screen's display state now (later changes arrive as screen.display_changed). */
  display: DisplayState;
}

export interface ScreenReloadAccepted {
  reload_id: string;
  expires_at: string;
}

/** Formats a code for display on glass: `ABC234` → `ABC-234`. */
export function displayPairingCode(code: string): string {
  return `${code.slice(0, 3)}-${code.slice(3)}`;
}
