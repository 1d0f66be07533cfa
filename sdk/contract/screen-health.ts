// What is on a screen's glass and whether it is alive: screenshots (request, status, the runtime
// upload), the player's observation of its display surface, and the health a screen view carries.
// Shapes follow the reference contract (screenshot, observation); health is ours (docs/decisions.md,
// D-numbered entries under "Screenshots and screen health").
import { z } from 'zod';

/** reference contract: a still WebP of at most 2 MiB. */
export const SCREENSHOT_MAX_BYTES = 2_097_152;
/** reference contract: a request is answered within 30 s or it times out. */
export const SCREENSHOT_TTL_MS = 30_000;
/** reference contract: what a player is asked for (requested event details). */
export const SCREENSHOT_FORMAT = 'image/webp';
export const SCREENSHOT_QUALITY = 80;
/** reference contract: at most half the surface's pixels each way (a still for a person, not a print). */
export const SCREENSHOT_SIZE_DIVISOR = 2;

export const CAPTURE_ID_PATTERN = /^shot_[A-Za-z0-9_-]{16,64}$/;
export const CaptureId = z.string().regex(CAPTURE_ID_PATTERN, 'must be shot_ and 16 to 64 base64url characters');

/** The runtime upload names its request (Marquee-Capture-Id) and how the image was made. */
export const CAPTURE_ID_HEADER = 'Marquee-Capture-Id';
export const CAPTURE_METHOD_HEADER = 'Marquee-Capture-Method';
/**
 * How a screenshot was made: `composed` (the browser player drew its own layers on a canvas;
 * cross-origin application frames are placeholders unless they answered a snapshot request),
 * `kiosk` (real pixels of the kiosk's browser window).
 */
export const CAPTURE_METHODS = ['composed', 'kiosk'] as const;
export type CaptureMethod = (typeof CAPTURE_METHODS)[number];

export const SCREENSHOT_STATES = ['idle', 'pending', 'ready', 'timed_out'] as const;
export type ScreenshotState = (typeof SCREENSHOT_STATES)[number];

export interface ScreenshotAccepted {
  capture_id: string;
  expires_at: string;
}

export interface ScreenshotStatus {
  state: ScreenshotState;
  capture_id?: string;
  expires_at?: string;
  /** Of the ready image. */
  width?: number;
  height?: number;
  bytes?: number;
  sha256?: string;
  captured_at?: string;
  /** Ours: how the ready image was made. */
  method?: CaptureMethod;
  /** Ours, when timed_out: why, in words (was the screen online at all). */
  reason?: string;
}

/** Details of screen.screenshot_requested: what the player is asked to send. */
export interface ScreenshotRequest {
  capture_id: string;
  expires_at: string;
  max_width_divisor: number;
  max_height_divisor: number;
  format: string;
  quality: number;
  max_bytes: number;
}

/** reference contract: surface sizes are device-independent pixels, range-checked only. */
export const SURFACE_MAX = 100_000;
export const PIXEL_RATIO_MAX = 32;

export const ScreenSurface = z.strictObject({
  /** Player-local label such as `primary`. */
  id: z.string().min(1).max(64),
  width: z.number().int().min(1).max(SURFACE_MAX),
  height: z.number().int().min(1).max(SURFACE_MAX),
  pixel_ratio: z.number().finite().positive().max(PIXEL_RATIO_MAX),
  /** `output`: the surface fills the display (kiosk, full screen); `windowed`: a window of a desktop. */
  presentation: z.enum(['output', 'windowed']),
});
export type ScreenSurface = z.infer<typeof ScreenSurface>;

/** PUT /runtime/v1/observation: the surface the player laid its canvas out on. */
export const ScreenObservation = z.strictObject({
  observed_at: z.iso.datetime({ offset: true }),
  surfaces: z.array(ScreenSurface).length(1),
});
export type ScreenObservation = z.infer<typeof ScreenObservation>;

/** The player's build, self-reported on the observation (`<kind>/<version>`, e.g. `browser/1.4.0`). */
export const PLAYER_HEADER = 'Marquee-Player';
export const PLAYER_VERSION_PATTERN = /^[A-Za-z0-9._+-]{1,40}$/;

/** Which player a screen runs, judged from its credential: a paired browser, or a native (kiosk) key. */
export const PLAYER_KINDS = ['browser', 'kiosk'] as const;
export type PlayerKind = (typeof PLAYER_KINDS)[number];

/** Is my screen alive, and what is on it: the `health` member of a screen view. */
export interface ScreenHealth {
  /** `online`/`offline` as announced (screen.online/offline, after the debounce); null before the first. */
  presence: 'online' | 'offline' | null;
  /** Last time a paired runtime stream of the screen was connected (now, while it is). */
  last_seen_at: string | null;
  /** Since when the screen is announced offline; null while online or never seen. */
  offline_since: string | null;
  player: { kind: PlayerKind; version: string | null } | null;
  /** The native device's own description (kiosk), as sent with native pairing; never its identifiers. */
  host: { platform: string; model?: string; firmware?: string; manufacturer?: string } | null;
  /** The manifest on glass: the player's last activation. */
  now_playing: { playlist_id: string | null; manifest_revision: string; activated_at: string } | null;
  /** Kiosk watchdog recoveries (renderer reloads and restarts) and the last one's time. */
  watchdog: { recoveries: number; last_recovery_at: string | null; last_reason: string | null };
  /** The last screenshot's state (the image: GET …/screenshot). */
  screenshot: ScreenshotStatus;
}
