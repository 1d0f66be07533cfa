// The per-request debit of the credit meter, committed in groups: the debits of requests that
// arrive while a meter transaction runs wait for it and then commit together in the next one
// (one UPDATE per tenant, one ledger upsert per tenant and day). A batch starts on the next turn
// of the event loop (setImmediate), not at once: on SQLite a transaction runs to its end without
// yielding to I/O, so without that wait no other request could ever join it; with it, every
// request read in the same I/O phase commits in one transaction (D-333). Each request still waits
// for its own durable debit, is admitted or refused on its own against the floor, and gets its own
// balance.
import { sql } from 'kysely';
import { ProblemError } from '../problem';
import type { Store, Tx } from '../store/store';
import {
  applyMonthlyGrant,
  debit,
  floorMillis,
  recordLedger,
  takeCredits,
  utcDay,
  utcMonth,
  type CreditState,
  type KnownCredits,
} from './credits';

interface PendingDebit {
  tenantId: string;
  now: number;
  cost: number;
  known: KnownCredits;
  resolve(state: CreditState): void;
  reject(error: unknown): void;
}

/** Per debit: the balance after it, or why it was refused. */
type Outcomes = Map<PendingDebit, { state?: CreditState; error?: unknown }>;

export class RequestMeter {
  private queue: PendingDebit[] = [];
  private running = false;
  private scheduled = false;

  constructor(private readonly store: Store) {}

  /** Debits one request (`kind` api_request); resolves with the balance after it once committed. */
  debit(tenantId: string, now: number, cost: number, known: KnownCredits): Promise<CreditState> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tenantId, now, cost, known, resolve, reject });
      if (this.running || this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        if (!this.running) void this.drain();
      });
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        const outcomes: Outcomes = new Map();
        try {
          if (this.store.driver.engine === 'postgres' && (await debitInOneStatement(this.store, batch, outcomes))) {
            for (const d of batch) d.resolve(outcomes.get(d)!.state!);
            continue;
          }
          await this.store.transaction(async ({ db }) => {
            outcomes.clear();
            for (const group of byTenant(batch)) await debitGroup(db, group, outcomes);
          });
        } catch (error) {
          for (const d of batch) d.reject(error);
          continue;
        }
        for (const d of batch) {
          const outcome = outcomes.get(d)!;
          if (outcome.state) d.resolve(outcome.state);
          else d.reject(outcome.error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}

/**
 * PostgreSQL: a batch of one tenant whose month's grant is in and whose debits fall on one UTC day,
 * covered by its balance, in one statement (debit and ledger row together, atomic on its own): one
 * round trip where a transaction takes four (begin, update, upsert, commit). False when the batch
 * is not of that kind or the balance does not cover it all: the transaction then admits each.
 */
async function debitInOneStatement(store: Store, batch: PendingDebit[], outcomes: Outcomes): Promise<boolean> {
  const first = batch[0]!;
  const day = utcDay(first.now);
  for (const d of batch)
    if (d.tenantId !== first.tenantId || utcDay(d.now) !== day || d.known.grantMonth < utcMonth(d.now)) return false;
  const { spent, required } = needs(batch);
  const { rows } = await sql<{ credit_millis: number; plan: string }>`
    with taken as (
      update tenants set credit_millis = credit_millis - ${spent}
      where id = ${first.tenantId} and credit_millis >= ${required}
      returning id, credit_millis, plan
    ), recorded as (
      insert into credit_ledger (tenant_id, day, kind, millis, count)
      select id, ${day}, 'api_request', cast(${-spent} as bigint), cast(${batch.length} as bigint) from taken
      on conflict (tenant_id, day, kind) do update
        set millis = credit_ledger.millis + excluded.millis, count = credit_ledger.count + excluded.count
    )
    select credit_millis, plan from taken`.execute(store.db);
  const updated = rows[0];
  if (!updated) return false;
  admitAll(batch, Number(updated.credit_millis), updated.plan, outcomes);
  return true;
}

/**
 * What a tenant's debits take together, and the balance that covers them all: debit i (0-based)
 * needs the balance before it, B - (cost of those before), to cover floor_i + cost_i.
 */
function needs(group: PendingDebit[]): { spent: number; required: number } {
  let spent = 0;
  let required = -Infinity;
  for (const d of group) {
    spent += d.cost;
    required = Math.max(required, floorMillis(d.now) + spent);
  }
  return { spent, required };
}

/** Each debit's balance as it would have seen it, committed one after another, from the balance after all. */
function admitAll(group: PendingDebit[], balanceAfter: number, plan: string, outcomes: Outcomes): void {
  let after = balanceAfter + needs(group).spent;
  for (const d of group) {
    after -= d.cost;
    outcomes.set(d, { state: { millis: after, plan } });
  }
}

function byTenant(batch: PendingDebit[]): PendingDebit[][] {
  const groups = new Map<string, PendingDebit[]>();
  for (const d of batch) {
    const group = groups.get(d.tenantId);
    if (group) group.push(d);
    else groups.set(d.tenantId, [d]);
  }
  return [...groups.values()];
}

/**
 * One tenant's debits, in arrival order: one UPDATE when the balance covers them all (each must
 * leave its cost above its floor), else one by one so that exactly those that fit are admitted.
 */
async function debitGroup(db: Tx, group: PendingDebit[], outcomes: Outcomes): Promise<void> {
  if (group.length > 1 && (await debitTogether(db, group, outcomes))) return;
  for (const d of group) {
    try {
      outcomes.set(d, { state: await debit(db, d.tenantId, d.now, 'api_request', d.cost, d.known) });
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      outcomes.set(d, { error });
    }
  }
}

/** All of a tenant's debits in one UPDATE, when the balance covers them all; false when it does not. */
async function debitTogether(db: Tx, group: PendingDebit[], outcomes: Outcomes): Promise<boolean> {
  const first = group[0]!;
  for (const d of group) await applyMonthlyGrant(db, d.tenantId, d.now, d.known);
  const { spent, required } = needs(group);
  const [updated] = (await takeCredits.run(db, spent, first.tenantId, required)).rows;
  if (!updated) return false;
  admitAll(group, updated.credit_millis, updated.plan, outcomes);
  const days = new Map<string, { now: number; millis: number; count: number }>();
  for (const d of group) {
    const day = days.get(utcDay(d.now)) ?? { now: d.now, millis: 0, count: 0 };
    day.millis -= d.cost;
    day.count += 1;
    days.set(utcDay(d.now), day);
  }
  for (const day of days.values())
    await recordLedger(db, first.tenantId, day.now, 'api_request', day.millis, day.count);
  return true;
}
