// The ten-minute rule for `player.reload` (spec: a Player ignores a reload within ten minutes of the
// last it acted on). What was acted on survives the reload itself in local storage.
import type { EventDetails } from '../../../sdk/contract/event-types';

export const RELOAD_QUIET_MS = 10 * 60_000;
export const LAST_RELOAD_KEY = 'marquee.player.last-reload';

export interface ActedReload {
  reloadId: string;
  at: number;
}

export interface ReloadRequest {
  reloadId: string;
  /** After this the request is stale (a player that was offline does not reload on return). */
  expiresAt?: number;
}

export function shouldActOnReload(request: ReloadRequest, now: number, last: ActedReload | null): boolean {
  if (request.expiresAt !== undefined && request.expiresAt <= now) return false;
  if (last === null) return true;
  if (last.reloadId === request.reloadId) return false;
  return now - last.at >= RELOAD_QUIET_MS;
}

/** The reload request in a `player.reload` event's details. */
export function reloadRequestOf(details: EventDetails<'player.reload'>): ReloadRequest {
  const expires = Date.parse(details.expires_at);
  return Number.isFinite(expires)
    ? { reloadId: details.reload_id, expiresAt: expires }
    : { reloadId: details.reload_id };
}

export function readActedReload(storage: Pick<Storage, 'getItem'>): ActedReload | null {
  try {
    const value = JSON.parse(storage.getItem(LAST_RELOAD_KEY) ?? 'null') as Partial<ActedReload> | null;
    return value && typeof value.reloadId === 'string' && typeof value.at === 'number'
      ? { reloadId: value.reloadId, at: value.at }
      : null;
  } catch {
    return null;
  }
}

export function writeActedReload(storage: Pick<Storage, 'setItem'>, acted: ActedReload): void {
  storage.setItem(LAST_RELOAD_KEY, JSON.stringify(acted));
}
