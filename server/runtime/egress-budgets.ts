// Byte budgets for protected content delivery: per client (runtime session or device), per screen
// and per account, in fixed windows. A request is admitted while every budget it falls under has
// bytes left; what it really sent is charged when it ends, so an aborted transfer costs only what
// went out. Denials are 429 with Retry-After and, being byte budgets, no RateLimit headers (spec).
import { problem } from '../http/problem';

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

export class ByteBudgets {
  private readonly windows = new Map<string, { start: number; used: number }>();
  private lastSweep = 0;

  /** Throws rate_limited when any budget is spent for its current window. */
  admit(budgets: ByteBudget[], now: number): void {
    this.sweep(now);
    for (const budget of budgets) {
      const windowMs = budget.windowSeconds * 1000;
      const start = Math.floor(now / windowMs) * windowMs;
      const window = this.windows.get(id(budget));
      if (window && window.start === start && window.used >= budget.limitBytes) {
        const retryAfter = Math.max(1, Math.ceil((start + windowMs - now) / 1000));
        throw problem('rate_limited', `the ${budget.name} egress budget is spent; retry after ${retryAfter} s`, { retryAfter });
      }
    }
  }

  charge(budgets: ByteBudget[], bytes: number, now: number): void {
    if (bytes <= 0) return;
    for (const budget of budgets) {
      const windowMs = budget.windowSeconds * 1000;
      const start = Math.floor(now / windowMs) * windowMs;
      let window = this.windows.get(id(budget));
      if (!window || window.start !== start) this.windows.set(id(budget), (window = { start, used: 0 }));
      window.used += bytes;
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
