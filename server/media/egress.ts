// Completed response bytes, per tenant, UTC day and kind: what exports and runtime delivery sent.
// Aggregated like the credit ledger, so a busy day is one row, not one per request; and written in
// batches: responses add to totals in memory, committed together at most FLUSH_EVERY_MS later (one
// upsert per tenant, day and kind), and on shutdown before the store closes. A crash loses at most
// the last FLUSH_EVERY_MS of accounting (D-331); the byte budgets that refuse delivery are not
// affected (runtime/egress-budgets.ts reserves before the first byte).
import { sql } from 'kysely';
import { utcDay } from '../clock';
import type { Logger } from '../logger';
import type { Store } from '../store/store';

/** spec Endpoints / Media: export records completed response bytes as project_media_export egress. */
export const MEDIA_EXPORT_EGRESS = 'project_media_export';
/** Completed bytes wait in memory at most this long before they are committed. */
export const FLUSH_EVERY_MS = 1000;
/** Totals held at most (tenant × day × kind); past this a flush starts at once. */
const MAX_PENDING_TOTALS = 10_000;

interface Total {
  tenantId: string;
  day: string;
  kind: string;
  bytes: number;
  count: number;
}

export class EgressLedger {
  private pending = new Map<string, Total>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly flushEveryMs = FLUSH_EVERY_MS,
  ) {
    store.beforeClose(() => this.flush());
  }

  /** Adds one completed response of `bytes` to the tenant's total of `kind` for the UTC day of `now`. */
  record(tenantId: string, kind: string, bytes: number, now: number): void {
    const day = utcDay(now);
    const id = `${tenantId}\u0000${day}\u0000${kind}`;
    const total = this.pending.get(id);
    if (total) {
      total.bytes += bytes;
      total.count += 1;
    } else this.pending.set(id, { tenantId, day, kind, bytes, count: 1 });
    if (this.pending.size >= MAX_PENDING_TOTALS) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushEveryMs).unref();
  }

  /** Commits every total recorded so far; resolves once they are in the database (or logged as lost to a failure, and kept for the next flush). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async write(batch: Map<string, Total>): Promise<void> {
    try {
      await this.store.transaction(async ({ db }) => {
        for (const t of batch.values()) {
          await db
            .insertInto('egress_ledger')
            .values({ tenant_id: t.tenantId, day: t.day, kind: t.kind, bytes: t.bytes, count: t.count })
            .onConflict((oc) =>
              oc.columns(['tenant_id', 'day', 'kind']).doUpdateSet({
                bytes: sql`egress_ledger.bytes + ${t.bytes}`,
                count: sql`egress_ledger.count + ${t.count}`,
              }),
            )
            .execute();
        }
      });
    } catch (error) {
      // Kept and retried with the next flush: accounting is late, not lost, while the database recovers.
      for (const [id, t] of batch) {
        const now = this.pending.get(id);
        if (now) {
          now.bytes += t.bytes;
          now.count += t.count;
        } else this.pending.set(id, t);
      }
      this.timer ??= setTimeout(() => void this.flush(), this.flushEveryMs).unref();
      this.logger.error({ err: error }, 'egress not recorded yet; retrying');
    }
  }
}
