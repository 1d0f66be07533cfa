// Fixed-window rate budgets with RateLimit-Policy / RateLimit headers (draft-ietf-httpapi-ratelimit-headers).
import crypto from 'node:crypto';
import { problem } from '../problem';

/** Keys longer than this are held as their SHA-256 (a key is an id, address or email: short). */
export const MAX_RATE_KEY_CHARS = 128;
/**
 * Windows held at most (about 300 bytes each). Refused requests spend budgets too, so a client
 * rotating addresses could otherwise grow the table for as long as its windows last; past this the
 * oldest window goes first (that budget restarts, which only a flood of this size can cause).
 */
export const MAX_RATE_WINDOWS = 100_000;
/** Expired windows are dropped at most this often (and whenever the table is full). */
const SWEEP_EVERY_MS = 60_000;

export interface RateBudget {
  /** Public policy name, e.g. `enrollment-client`. */
  name: string;
  /** Requests allowed per window. */
  limit: number;
  windowSeconds: number;
  /** What the budget is counted per (client id, IP, screen, ...); never disclosed. */
  key: string;
  /** Units this request spends (fan-outs may spend more than one). */
  cost?: number;
}

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  /** Seconds until the window resets, at least 1. */
  resetSeconds: number;
}

/**
 * Request budgets in fixed windows, shared by every replica of one installation (a budget counts a
 * client, not a process). Asynchronous, so a shared store (Redis, PostgreSQL) can hold the windows.
 */
export interface RateLimiter {
  /** Spends the budget's cost when it fits; either way, says what is left. */
  take(budget: RateBudget, now: number): Promise<RateDecision>;
  /** Checks without spending (all-or-nothing admission of several budgets). */
  peek(budget: RateBudget, now: number): Promise<RateDecision>;
}

/** Counters in process memory: the default for one process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; end: number; used: number }>();
  private lastSweep = 0;

  constructor(private readonly maxWindows = MAX_RATE_WINDOWS) {}

  /** Windows held now (tests: the table stays bounded). */
  get size(): number {
    return this.windows.size;
  }

  async take(budget: RateBudget, now: number): Promise<RateDecision> {
    return this.decide(budget, now, true);
  }

  async peek(budget: RateBudget, now: number): Promise<RateDecision> {
    return this.decide(budget, now, false);
  }

  private decide(budget: RateBudget, now: number, spend: boolean): RateDecision {
    this.sweep(now);
    const windowMs = budget.windowSeconds * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const key =
      budget.key.length > MAX_RATE_KEY_CHARS
        ? `sha256:${crypto.createHash('sha256').update(budget.key).digest('base64url')}`
        : budget.key;
    const id = `${budget.name}\u0000${key}`;
    let window = this.windows.get(id);
    if (!window || window.start !== start) {
      window = { start, end: start + windowMs, used: 0 };
      if (spend) this.hold(id, window);
    }
    const cost = budget.cost ?? 1;
    const resetSeconds = Math.max(1, Math.ceil((start + windowMs - now) / 1000));
    if (window.used + cost > budget.limit)
      return { allowed: false, remaining: Math.max(0, budget.limit - window.used), resetSeconds };
    if (spend) window.used += cost;
    return { allowed: true, remaining: budget.limit - window.used - (spend ? 0 : cost), resetSeconds };
  }

  private hold(id: string, window: { start: number; end: number; used: number }): void {
    this.windows.delete(id); // re-inserted last: the oldest windows come first in the map
    // Full (a flood of new keys): the oldest window goes, in constant time; ended windows go at the
    // regular sweep, so a full table costs no scan per request.
    if (this.windows.size >= this.maxWindows) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(id, window);
  }

  /** Drops every window that has ended: a one-minute window is not kept for a day. */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [id, window] of this.windows) if (window.end <= now) this.windows.delete(id);
  }
}

function refuse(budget: RateBudget, decision: RateDecision): never {
  throw problem('rate_limited', `rate budget ${budget.name} is spent; retry after ${decision.resetSeconds} s`, {
    retryAfter: decision.resetSeconds,
    headers: rateLimitHeaders(budget, decision),
  });
}

export function rateLimitHeaders(budget: RateBudget, decision: RateDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"${budget.name}";q=${budget.limit};w=${budget.windowSeconds}`,
    RateLimit: `"${budget.name}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

/**
 * Spends every budget or none: all are checked first, so a request refused by its second budget
 * does not consume its first (unless a concurrent request spent that budget between the check and
 * the take). Returns the headers to disclose on success; throws rate_limited.
 */
export async function admit(limiter: RateLimiter, budgets: RateBudget[], now: number): Promise<Record<string, string>> {
  // One budget needs no look first: a take that does not fit spends nothing (one call, not two:
  // with a shared limiter each is a round trip, and a fan-out admits each screen's budget).
  if (budgets.length === 1) {
    const decision = await limiter.take(budgets[0]!, now);
    if (!decision.allowed) refuse(budgets[0]!, decision);
    return rateLimitHeaders(budgets[0]!, decision);
  }
  for (const budget of budgets) {
    const decision = await limiter.peek(budget, now);
    if (!decision.allowed) refuse(budget, decision);
  }
  const headers: Record<string, string[]> = { 'RateLimit-Policy': [], RateLimit: [] };
  for (const budget of budgets) {
    // A concurrent request may have spent what the look saw free: a take that does not fit refuses
    // this request too (the budgets taken before it in this loop stay spent; none is overrun).
    const decision = await limiter.take(budget, now);
    if (!decision.allowed) refuse(budget, decision);
    const h = rateLimitHeaders(budget, decision);
    headers['RateLimit-Policy']!.push(h['RateLimit-Policy']!);
    headers.RateLimit!.push(h.RateLimit!);
  }
  return budgets.length === 0
    ? {}
    : { 'RateLimit-Policy': headers['RateLimit-Policy']!.join(', '), RateLimit: headers.RateLimit!.join(', ') };
}
