// Byte budgets for protected content delivery: per client (runtime session or device), per screen
// and per account, in fixed windows. A response reserves its whole length in every budget it falls
// under before its first byte goes out, so concurrent requests cannot overrun a budget together;
// what it did not send (a client that hung up) is given back when it ends. Denials are 429 with
// Retry-After and, being byte budgets, no RateLimit headers (spec).
import { problem } from '../problem';

export interface ByteBudget {
  /** Public name, in the problem detail. */
  name: string;
  limitBytes: number;
  windowSeconds: number;
  /** What the budget is counted per; never disclosed. */
  key: string;
}

/** Abuse limits, not billing: far above what a screen playing its loop needs (1 GiB a minute ≈ 143 Mbit/s). */
export const EGRESS_LIMITS = {
  clientBytesPerMinute: 1024 ** 3,
  screenBytesPerMinute: 2 * 1024 ** 3,
  accountBytesPerMinute: 16 * 1024 ** 3,
};
export type EgressLimits = typeof EGRESS_LIMITS;

/** What one admitted response holds: its bytes, in the window each budget admitted it into. */
export interface EgressReservation {
  readonly bytes: number;
  /** Each budget's id and window start, so bytes go back to exactly that window (or nowhere). */
  readonly windows: readonly { readonly id: string; readonly start: number }[];
  settled: boolean;
}

/**
 * Byte budgets shared by every replica of one installation (a screen's requests may reach any
 * replica). Asynchronous, so a shared store can hold the windows.
 */
export interface EgressBudgets {
  /**
   * Reserves `bytes` in the current window of every budget, or rejects with rate_limited (reserving
   * nothing) when one of them cannot take them. A response larger than a whole budget is admitted
   * only into an empty window, so it can still be fetched, once per window.
   */
  reserve(budgets: ByteBudget[], bytes: number, now: number): Promise<EgressReservation>;
  /** Gives back, once, what an admitted response did not send (a window that has ended keeps no count). */
  settle(reservation: EgressReservation, sentBytes: number): Promise<void>;
}

interface Window {
  start: number;
  /** Bytes reserved by responses admitted in this window (less what they gave back). */
  used: number;
}

/** Windows in process memory: the default for one process. */
export class MemoryEgressBudgets implements EgressBudgets {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  async reserve(budgets: ByteBudget[], bytes: number, now: number): Promise<EgressReservation> {
    this.sweep(now);
    const admitted = budgets.map((budget) => {
      const windowMs = budget.windowSeconds * 1000;
      const start = Math.floor(now / windowMs) * windowMs;
      const key = id(budget);
      let window = this.windows.get(key);
      if (!window || window.start !== start) window = { start, used: 0 };
      const fits = window.used < budget.limitBytes && (window.used === 0 || window.used + bytes <= budget.limitBytes);
      if (!fits) {
        const retryAfter = Math.max(1, Math.ceil((start + windowMs - now) / 1000));
        throw problem('rate_limited', `the ${budget.name} egress budget is spent; retry after ${retryAfter} s`, {
          retryAfter,
        });
      }
      return [key, window] as const;
    });
    for (const [key, window] of admitted) {
      window.used += bytes;
      this.windows.set(key, window);
    }
    return { bytes, windows: admitted.map(([key, window]) => ({ id: key, start: window.start })), settled: false };
  }

  async settle(reservation: EgressReservation, sentBytes: number): Promise<void> {
    if (reservation.settled) return;
    reservation.settled = true;
    const unsent = reservation.bytes - Math.min(sentBytes, reservation.bytes);
    if (unsent <= 0) return;
    for (const admitted of reservation.windows) {
      const window = this.windows.get(admitted.id);
      if (window?.start === admitted.start) window.used = Math.max(0, window.used - unsent);
    }
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (now - window.start > 3600_000) this.windows.delete(key);
  }
}

function id(budget: ByteBudget): string {
  return `${budget.name}\u0000${budget.key}`;
}
