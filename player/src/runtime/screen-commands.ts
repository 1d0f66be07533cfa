// Commands the runtime stream brings besides manifests: toasts (queued, shown one at a time; one
// that arrives after it expired is never shown), reboots (once each, never after they expired) and
// the display state.
import type { EventDetails } from '../../../sdk/contract/event-types';
import type { ToastLevel } from '../../../sdk/contract/fleet';

/** Toasts waiting at most: a burst beyond this drops the oldest waiting ones, not the one on glass. */
export const TOAST_QUEUE_MAX = 10;
/**
 * A waiting toast starts within this long of arriving, or not at all. Not its `expires_at`: that is
 * the send time plus its duration, so a toast queued behind a longer one would always miss it.
 */
export const TOAST_WAIT_MAX_MS = 60_000;
export const ACTED_REBOOT_KEY = 'marquee.player.acted-reboot';

export interface ToastView {
  id: string;
  level: ToastLevel;
  text: string;
  durationMs: number;
  /** Server time after which it is not shown (a player that was offline does not replay it). */
  expiresAt: number;
  /** When this player admitted it to its queue (its clock). */
  admittedAt?: number;
}

export function toastOf(details: EventDetails<'screen.toast'>): ToastView {
  return {
    id: details.toast_id,
    level: details.level,
    text: details.text,
    durationMs: details.duration_ms,
    expiresAt: Date.parse(details.expires_at),
  };
}

/** The queue with this toast admitted: expired or already queued toasts change nothing. */
export function admitToast(queue: readonly ToastView[], toast: ToastView, now: number): ToastView[] {
  if (!(toast.expiresAt > now) || queue.some((t) => t.id === toast.id)) return [...queue];
  const next = [...queue, { ...toast, admittedAt: now }];
  // Keep the one on glass (first); drop the oldest waiting ones beyond the bound.
  return next.length > TOAST_QUEUE_MAX ? [next[0]!, ...next.slice(next.length - TOAST_QUEUE_MAX + 1)] : next;
}

/**
 * The waiting toasts, no toast being on glass (the last one's time is up), without those that waited
 * too long to start. The first of them is judged too: it is about to start, not on glass yet.
 */
export function dropStaleWaiting(queue: readonly ToastView[], now: number): ToastView[] {
  return queue.filter((t) => now - (t.admittedAt ?? now) < TOAST_WAIT_MAX_MS);
}

/** A reboot is acted on once, and only before it expires. */
export function shouldReboot(details: EventDetails<'player.reboot'>, now: number, lastActed: string | null): boolean {
  const expires = Date.parse(details.expires_at);
  return Number.isFinite(expires) && expires > now && lastActed !== details.reboot_id;
}
