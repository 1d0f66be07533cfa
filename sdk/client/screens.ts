// Screens: pair a code or provision, list, read, patch (assign a playlist), the lifecycle
// transitions, reload and delete.
import type { BrowserLinkClaim, BrowserLinkClaimRequest } from '../contract/browser-links';
import type {
  PairingClaim,
  PairScreen,
  ProvisionScreen,
  Screen,
  ScreenList,
  ScreenListQuery,
  ScreenPatch,
  ScreenProvisioning,
  ScreenReloadAccepted,
} from '../contract/screens';
import type {
  DisplayPower,
  DisplaySchedule,
  DisplayState,
  FleetAction,
  FleetSelector,
  PlaylistScheduleEntryWrite,
  RebootAccepted,
  ScreenActionResult,
  ScreenPlaylistScheduleView,
  TakeoverRequest,
  ToastAccepted,
  ToastRequest,
} from '../contract/fleet';
import type { ScreenshotAccepted, ScreenshotStatus } from '../contract/screen-health';
import type { CallOptions, ClientTransport, GuardedCallOptions } from './transport';

/** reference CLI: the status is polled every 500 ms, for up to 35 s (the request lives 30 s). */
export const SCREENSHOT_POLL_MS = 500;
export const SCREENSHOT_WAIT_MS = 35_000;

/** How waiting for a screenshot ended: its status then. */
export type ScreenshotWait = {
  outcome: 'ready' | 'timed_out' | 'replaced' | 'still_pending';
  status: ScreenshotStatus;
};

export function screenRoutes(t: ClientTransport) {
  const path = (id: string) => `/api/v1/screens/${encodeURIComponent(id)}`;
  const update = (id: string, patch: ScreenPatch, options: GuardedCallOptions = {}) =>
    t.request<Screen>({ method: 'PATCH', path: path(id), json: patch, idempotent: true, ...options });
  const transition =
    (id: string, action: string) =>
    (options: GuardedCallOptions = {}) =>
      t.request<Screen>({ method: 'POST', path: `${path(id)}/${action}`, idempotent: true, ...options });

  return {
    /** Claims the six-character code a player shows; 201 with the pairing_pending screen. */
    pair: (body: PairScreen, options: CallOptions = {}) =>
      t.request<PairingClaim>({
        method: 'POST',
        path: '/api/v1/screens/pair',
        json: body,
        idempotent: true,
        ...options,
      }),
    /** Creates a screen and a provisioning URL (a credential) to open on its browser. Model P. */
    provision: (body: ProvisionScreen = {}, options: CallOptions = {}) =>
      t.request<ScreenProvisioning>({
        method: 'POST',
        path: '/api/v1/screens/provision',
        json: body,
        idempotent: true,
        ...options,
      }),
    /** Claims the setup code a browser's /setup page shows: a pairing_pending screen it then provisions. */
    claimBrowserLink: (body: BrowserLinkClaimRequest, options: CallOptions = {}) =>
      t.request<BrowserLinkClaim>({
        method: 'POST',
        path: '/api/v1/account/browser-links/claim',
        json: body,
        idempotent: true,
        ...options,
      }),
    /** pairing_pending and active screens by default; `state: 'archived'` lists archived ones. */
    list: (query: ScreenListQuery = {}) =>
      t.request<ScreenList>({ method: 'GET', path: '/api/v1/screens', query: { ...query } }),
    get: (id: string) => t.request<Screen>({ method: 'GET', path: path(id) }),
    update,
    /** Assigns a playlist (null unassigns): PATCH with playlist_id. */
    assign: (id: string, playlistId: string | null, options: GuardedCallOptions = {}) =>
      update(id, { playlist_id: playlistId }, options),
    /** Tombstones the screen; its player's cookies stop working. */
    delete: (id: string, options: GuardedCallOptions = {}) =>
      t.request<void>({ method: 'DELETE', path: path(id), idempotent: true, ...options }),
    /** Hides the screen and darkens its glass; releases its quota. Model P. */
    archive: (id: string, options?: GuardedCallOptions) => transition(id, 'archive')(options),
    /** Model P. */
    unarchive: (id: string, options?: GuardedCallOptions) => transition(id, 'unarchive')(options),
    /** New public URL; runtime sessions end, the paired device stays. */
    rotatePublicId: (id: string, options?: GuardedCallOptions) => transition(id, 'public-id/rotate')(options),
    /** Revokes the paired device and every runtime grant. Model A. */
    revokeCredential: (id: string, options?: GuardedCallOptions) => transition(id, 'credential/revoke')(options),
    /** Tells the players to reload within ten minutes (202; not metered). Model P. */
    reload: (id: string, options: GuardedCallOptions = {}) =>
      t.request<ScreenReloadAccepted>({ method: 'POST', path: `${path(id)}/reload`, idempotent: true, ...options }),

    // Fleet control (Model P): schedules, takeovers, commands, and actions over many screens.
    playlistSchedule: (id: string) =>
      t.request<ScreenPlaylistScheduleView>({ method: 'GET', path: `${path(id)}/playlist-schedule` }),
    /** Replaces the schedule (entries in priority order; an empty list clears it). */
    setPlaylistSchedule: (id: string, entries: PlaylistScheduleEntryWrite[], options: GuardedCallOptions = {}) =>
      t.request<ScreenPlaylistScheduleView>({
        method: 'PUT',
        path: `${path(id)}/playlist-schedule`,
        json: { entries },
        idempotent: true,
        ...options,
      }),
    takeover: (id: string, body: TakeoverRequest, options: GuardedCallOptions = {}) =>
      t.request<ScreenPlaylistScheduleView>({
        method: 'POST',
        path: `${path(id)}/takeover`,
        json: body,
        idempotent: true,
        ...options,
      }),
    clearTakeover: (id: string, options: GuardedCallOptions = {}) =>
      t.request<ScreenPlaylistScheduleView>({
        method: 'POST',
        path: `${path(id)}/takeover/clear`,
        idempotent: true,
        ...options,
      }),
    toast: (id: string, body: ToastRequest, options: GuardedCallOptions = {}) =>
      t.request<ToastAccepted>({ method: 'POST', path: `${path(id)}/toast`, json: body, idempotent: true, ...options }),
    /** The screen's display state: its power override and weekly schedule. */
    getDisplay: (id: string) => t.request<DisplayState>({ method: 'GET', path: `${path(id)}/display` }),
    /** Moves the screen to the native device that offered to take it over (`recovery_pending`). */
    confirmRecovery: (id: string, options: GuardedCallOptions = {}) =>
      t.request<Screen>({ method: 'POST', path: `${path(id)}/recovery/confirm`, idempotent: true, ...options }),
    /** Display power override (`on`/`off`), or null to clear it and follow the schedule. */
    display: (id: string, power: DisplayPower | null, options: GuardedCallOptions = {}) =>
      t.request<DisplayState>({
        method: 'POST',
        path: power === null ? `${path(id)}/display/clear` : `${path(id)}/display`,
        ...(power === null ? {} : { json: { power } }),
        idempotent: true,
        ...options,
      }),
    /** Weekly on-windows in the screen's timezone; null clears the schedule. */
    displaySchedule: (id: string, schedule: DisplaySchedule | null, options: GuardedCallOptions = {}) =>
      t.request<DisplayState>({
        method: schedule === null ? 'DELETE' : 'PUT',
        path: `${path(id)}/display-schedule`,
        ...(schedule === null ? {} : { json: schedule }),
        idempotent: true,
        ...options,
      }),
    reboot: (id: string, options: GuardedCallOptions = {}) =>
      t.request<RebootAccepted>({ method: 'POST', path: `${path(id)}/reboot`, idempotent: true, ...options }),
    /** Asks the screen's player for a still of its glass; latest wins (a new request replaces an in-flight one). */
    requestScreenshot: (id: string, options: CallOptions = {}) =>
      t.request<ScreenshotAccepted>({ method: 'POST', path: `${path(id)}/screenshot`, idempotent: true, ...options }),
    /** idle, pending, ready (with size, bytes, sha256, method) or timed_out (with its reason). */
    screenshotStatus: (id: string, options: CallOptions = {}) =>
      t.request<ScreenshotStatus>({ method: 'GET', path: `${path(id)}/screenshot/status`, ...options }),
    /** The ready still WebP (of `captureId`, when named) as a stream; its ETag is the quoted SHA-256. */
    async screenshotImage(
      id: string,
      options: { captureId?: string; signal?: AbortSignal } = {},
    ): Promise<{ body: ReadableStream<Uint8Array> | null; sha256: string | undefined; bytes: number | undefined }> {
      const { response } = await t.send({
        method: 'GET',
        path: `${path(id)}/screenshot`,
        query: { capture_id: options.captureId },
        headers: { Accept: 'image/webp' },
        signal: options.signal,
      });
      const etag = /^"([a-f0-9]{64})"$/.exec(response.headers.get('etag') ?? '')?.[1];
      const length = Number(response.headers.get('content-length') ?? NaN);
      return { body: response.body, sha256: etag, bytes: Number.isFinite(length) ? length : undefined };
    },
    /**
     * Polls the status of `captureId` until it is ready, replaced by a later request, timed out, or
     * `timeoutMs` passed (reference CLI: every 500 ms for up to 35 s).
     */
    async awaitScreenshot(
      id: string,
      captureId: string,
      options: {
        intervalMs?: number;
        timeoutMs?: number;
        sleep?: (ms: number) => Promise<void>;
        signal?: AbortSignal;
      } = {},
    ): Promise<ScreenshotWait> {
      const interval = options.intervalMs ?? SCREENSHOT_POLL_MS;
      const deadline = Date.now() + (options.timeoutMs ?? SCREENSHOT_WAIT_MS);
      const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
      for (;;) {
        const status = (
          await t.request<ScreenshotStatus>({
            method: 'GET',
            path: `${path(id)}/screenshot/status`,
            signal: options.signal,
          })
        ).data;
        if (status.capture_id !== captureId) return { outcome: 'replaced', status };
        if (status.state === 'ready' || status.state === 'timed_out') return { outcome: status.state, status };
        if (Date.now() >= deadline) return { outcome: 'still_pending', status };
        await sleep(interval);
      }
    },
    /** One action over up to 500 screens (ids, or an exact tag over active screens). */
    actions: (selector: FleetSelector, action: FleetAction, options: CallOptions = {}) =>
      t.request<ScreenActionResult>({
        method: 'POST',
        path: '/api/v1/screens/actions',
        json: { selector, action },
        idempotent: true,
        ...options,
      }),
  };
}
