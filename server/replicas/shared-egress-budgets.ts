// Byte budgets in the shared database, so a screen whose requests reach several replicas spends
// one budget (runtime/egress-budgets.ts has the rules and the one-process default). The windows
// live in rate_windows beside the request budgets (an `egress ` prefix keeps the ids apart). A
// reservation takes every budget in one transaction, each by a conditional upsert, in id order so
// two replicas never wait on each other's rows crosswise: one budget refusing rolls back the rest.
import { sql } from 'kysely';
import { problem } from '../problem';
import type { ByteBudget, EgressBudgets, EgressReservation } from '../runtime/egress-budgets';
import type { Store } from '../store/store';
import { takeFromWindow, windowRowId } from './shared-rate-limiter';

export class SharedEgressBudgets implements EgressBudgets {
  constructor(private readonly store: Store) {}

  async reserve(budgets: ByteBudget[], bytes: number, now: number): Promise<EgressReservation> {
    const windows = budgets
      .map((budget) => {
        const windowMs = budget.windowSeconds * 1000;
        const start = Math.floor(now / windowMs) * windowMs;
        return { budget, id: windowRowId(`egress ${budget.name}`, budget.key), start, end: start + windowMs };
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    await this.store.transaction(async ({ db }) => {
      for (const { budget, id, start, end } of windows) {
        // A later window restarts the count; an empty one admits even a response larger than the
        // budget (once); otherwise the bytes must fit.
        const used = await takeFromWindow(db, {
          id,
          start,
          end,
          amount: bytes,
          limit: budget.limitBytes,
          emptyAdmitsAny: true,
        });
        if (used === undefined) {
          const retryAfter = Math.max(1, Math.ceil((end - now) / 1000));
          throw problem('rate_limited', `the ${budget.name} egress budget is spent; retry after ${retryAfter} s`, {
            retryAfter,
          });
        }
      }
    });
    return { bytes, windows: windows.map(({ id, start }) => ({ id, start })), settled: false };
  }

  async settle(reservation: EgressReservation, sentBytes: number): Promise<void> {
    if (reservation.settled) return;
    reservation.settled = true;
    const unsent = reservation.bytes - Math.min(sentBytes, reservation.bytes);
    if (unsent <= 0) return;
    for (const { id, start } of reservation.windows)
      await sql`
        UPDATE rate_windows SET used = CASE WHEN used > ${unsent} THEN used - ${unsent} ELSE 0 END
        WHERE id = ${id} AND window_start = ${start}`.execute(this.store.db);
  }
}
