// Rate budgets in the shared database, so replicas behind one load balancer count one budget: each
// take is one atomic upsert (the row's window restarts, or its count grows only while it fits), so
// two replicas taking at once can never both spend the last unit. The in-memory limiter stays the
// default for one process; this one is chosen when the store is PostgreSQL.
import crypto from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { MAX_RATE_KEY_CHARS, type RateBudget, type RateDecision, type RateLimiter } from '../http/rate-limit';
import type { Database } from '../store/schema';

/** Ended windows are deleted at most this often, by whichever request comes by. */
const SWEEP_EVERY_MS = 60_000;

export class SharedRateLimiter implements RateLimiter {
  private lastSweep = 0;

  constructor(private readonly db: Kysely<Database>) {}

  async take(budget: RateBudget, now: number): Promise<RateDecision> {
    this.sweep(now);
    const { id, start, end, cost } = windowOf(budget, now);
    const resetSeconds = resetOf(end, now);
    if (cost > budget.limit) return this.refused(budget, id, start, resetSeconds);
    const used = await takeFromWindow(this.db, { id, start, end, amount: cost, limit: budget.limit });
    if (used === undefined) return this.refused(budget, id, start, resetSeconds);
    return { allowed: true, remaining: Math.max(0, budget.limit - Number(used)), resetSeconds };
  }

  async peek(budget: RateBudget, now: number): Promise<RateDecision> {
    const { id, start, end, cost } = windowOf(budget, now);
    const used = await this.used(id, start);
    const resetSeconds = resetOf(end, now);
    if (used + cost > budget.limit)
      return { allowed: false, remaining: Math.max(0, budget.limit - used), resetSeconds };
    return { allowed: true, remaining: budget.limit - used - cost, resetSeconds };
  }

  private async refused(budget: RateBudget, id: string, start: number, resetSeconds: number): Promise<RateDecision> {
    // A refused unit leaves nothing: the window is full, and no second read is needed to say so.
    if ((budget.cost ?? 1) === 1) return { allowed: false, remaining: 0, resetSeconds };
    const used = await this.used(id, start);
    return { allowed: false, remaining: Math.max(0, budget.limit - used), resetSeconds };
  }

  /** Units spent in the window starting at `start` (a row of an older window counts nothing). */
  private async used(id: string, start: number): Promise<number> {
    const row = await this.db
      .selectFrom('rate_windows')
      .select(['used', 'window_start'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && Number(row.window_start) >= start ? Number(row.used) : 0;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    // Best effort: a failed sweep leaves ended rows for the next one, and never fails a request.
    this.db
      .deleteFrom('rate_windows')
      .where('ends_at', '<=', now)
      .execute()
      .catch(() => {});
  }
}

function windowOf(budget: RateBudget, now: number) {
  const windowMs = budget.windowSeconds * 1000;
  const start = Math.floor(now / windowMs) * windowMs;
  return { id: windowRowId(budget.name, budget.key), start, end: start + windowMs, cost: budget.cost ?? 1 };
}

function resetOf(end: number, now: number): number {
  return Math.max(1, Math.ceil((end - now) / 1000));
}

/**
 * The row of a budget's key: its name and key, the key as its SHA-256 when long or holding control
 * characters (PostgreSQL text cannot hold NUL).
 */
export function windowRowId(name: string, key: string): string {
  const plain = key.length <= MAX_RATE_KEY_CHARS && !/[\u0000-\u001f]/.test(key);
  return `${name} ${plain ? key : `sha256:${crypto.createHash('sha256').update(key).digest('base64url')}`}`;
}

/**
 * Takes `amount` from the window row `id` in one atomic upsert, or nothing: a later window restarts
 * the count; the same (or, from a replica whose clock lags, an earlier) window adds to it, and only
 * while the sum fits (or, with `emptyAdmitsAny`, while it is empty: a byte budget admits a response
 * larger than itself into an empty window, once). Answers the units used after the take, or
 * undefined when it did not fit and nothing changed.
 */
export async function takeFromWindow(
  db: Kysely<Database>,
  w: { id: string; start: number; end: number; amount: number; limit: number; emptyAdmitsAny?: boolean },
): Promise<number | undefined> {
  const { rows } = await sql<{ used: number }>`
    INSERT INTO rate_windows (id, window_start, used, ends_at) VALUES (${w.id}, ${w.start}, ${w.amount}, ${w.end})
    ON CONFLICT (id) DO UPDATE SET
      used = CASE WHEN rate_windows.window_start < excluded.window_start THEN excluded.used
                  ELSE rate_windows.used + excluded.used END,
      ends_at = CASE WHEN rate_windows.window_start < excluded.window_start THEN excluded.ends_at
                     ELSE rate_windows.ends_at END,
      window_start = CASE WHEN rate_windows.window_start < excluded.window_start THEN excluded.window_start
                          ELSE rate_windows.window_start END
    WHERE rate_windows.window_start < excluded.window_start
       OR rate_windows.used + excluded.used <= ${w.limit}
       ${w.emptyAdmitsAny ? sql`OR rate_windows.used = 0` : sql``}
    RETURNING used`.execute(db);
  return rows[0] === undefined ? undefined : Number(rows[0].used);
}
