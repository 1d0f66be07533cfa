// The player's state in one zustand store: pairing, session, the manifest to play and the one on
// glass, the playback clock and connectivity. The controller writes it; React reads it.
import { createStore } from 'zustand/vanilla';
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import type { DisplayState } from '../../../sdk/contract/fleet';
import type { RuntimeCapability } from '../../../sdk/contract/screens';
import type { ToastView } from '../runtime/screen-commands';

export type Phase =
  /** Starting: no session yet and nothing cached to show. */
  | 'booting'
  /** Showing a pairing code and waiting for the claim. */
  | 'pairing'
  /** A session (or a cached manifest) exists: the stage shows the manifest, or the idle card when it has no pages. */
  | 'playing'
  /** The screen is archived: dark glass. */
  | 'archived'
  /** Opened at a public URL that names no screen. */
  | 'unknown-screen';

export type Connectivity = 'online' | 'connecting' | 'offline';

export interface PairingView {
  code: string;
  expiresAt: number;
}

export interface SessionView {
  paired: boolean;
  publicUrl: string;
  capabilities: RuntimeCapability[];
}

export interface PlayerState {
  phase: Phase;
  pairing: PairingView | null;
  session: SessionView | null;
  /** The newest validated manifest: the engine plays it, swapping at a page boundary. */
  manifest: RuntimeManifest | null;
  /** The manifest revision on glass. */
  activeRevision: string | null;
  /** What the manifest on glass is: the cards over the stage follow it, not the newest manifest. */
  onGlass: { pages: number; darkened: boolean; screenLabel: string } | null;
  /** Server time minus local time, from answers' Date headers (one-second resolution). */
  clockOffsetMs: number;
  connectivity: Connectivity;
  /** Since when the runtime has been unreachable (null while reachable). */
  offlineSince: number | null;
  /** The display state from the session and screen.display_changed (null: none set, display on). */
  display: DisplayState | null;
  /** Whether the display is on now (the controller re-judges it at each schedule switch). */
  displayOn: boolean;
  /** Toasts: the first is on glass, the rest wait their turn. */
  toasts: ToastView[];
}

export const initialPlayerState: PlayerState = {
  phase: 'booting',
  pairing: null,
  session: null,
  manifest: null,
  activeRevision: null,
  onGlass: null,
  clockOffsetMs: 0,
  connectivity: 'connecting',
  offlineSince: null,
  display: null,
  displayOn: true,
  toasts: [],
};

/** Clock skew below this is the Date header's own resolution plus latency: ignore it. */
export const CLOCK_SKEW_TOLERANCE_MS = 2000;

export function createPlayerStore(initial: Partial<PlayerState> = {}) {
  return createStore<PlayerState>()(() => ({ ...initialPlayerState, ...initial }));
}
export type PlayerStore = ReturnType<typeof createPlayerStore>;

/** The playback clock: local time corrected by the server's, so visibility is judged on the server's day. */
export function playbackNow(state: Pick<PlayerState, 'clockOffsetMs'>, local = Date.now()): number {
  return local + state.clockOffsetMs;
}

/** A new skew estimate: kept only when it is beyond the Date header's resolution. */
export function estimateClockOffset(serverMs: number, localMs: number): number {
  const offset = serverMs - localMs;
  return Math.abs(offset) < CLOCK_SKEW_TOLERANCE_MS ? 0 : offset;
}

export function markReachable(store: PlayerStore): void {
  if (store.getState().connectivity !== 'online') store.setState({ connectivity: 'online', offlineSince: null });
}

export function markUnreachable(store: PlayerStore, now = Date.now()): void {
  const state = store.getState();
  if (state.connectivity !== 'offline')
    store.setState({ connectivity: 'offline', offlineSince: state.offlineSince ?? now });
}
