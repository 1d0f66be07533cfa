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
import type { CallOptions, ClientTransport, GuardedCallOptions } from './transport';

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
