// The credit meter (Model P): 1 credit per authenticated control-plane request unless exempt, a
// ledger in millicredits aggregated per UTC day, a monthly included grant, and the floor rule.
import { sql } from 'kysely';
import { utcDay } from '../clock';
import { problem } from '../problem';
import { compiledOnce } from '../store/compiled-once';
import type { Db, Tx } from '../store/store';
import { planOf } from './plans';

export { utcDay };

export const MILLIS_PER_CREDIT = 1000;
export const REQUEST_COST_MILLIS = 1000; // spec: authenticated /api/v1 requests debit 1 credit
/** spec Limits: the floor is negative 1,000,000 credits until 2027-01-01, then zero. */
export const FLOOR_CHANGES_AT = Date.parse('2027-01-01T00:00:00Z');
const FLOOR_BEFORE_CHANGE_MILLIS = -1_000_000 * MILLIS_PER_CREDIT;

export function floorMillis(now: number): number {
  return now < FLOOR_CHANGES_AT ? FLOOR_BEFORE_CHANGE_MILLIS : 0;
}

export function utcMonth(now: number): string {
  // utcDay keeps the day's text; its month is the first seven characters.
  return utcDay(now).slice(0, 7);
}

/** The last answer of nextReset: every request of a month asks for the same instant. */
let lastReset = { month: '', at: '' };

/** First instant of the next UTC month: when the next included grant is added. */
export function nextReset(now: number): string {
  const month = utcMonth(now);
  if (lastReset.month !== month) {
    const d = new Date(now);
    lastReset = { month, at: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString() };
  }
  return lastReset.at;
}

/**
 * Takes `amount` millicredits when the balance is at least `atLeast`; answers the balance after it
 * and the plan, or no row. Every metered request runs it (and the ledger upsert below): both are
 * compiled once (compiled-once.ts), since building and compiling a query cost more than SQLite
 * takes to run it.
 */
export const takeCredits = compiledOnce<
  [amount: number, tenantId: string, atLeast: number],
  { credit_millis: number; plan: string }
>((db, slot) =>
  db
    .updateTable('tenants')
    .set({ credit_millis: sql`credit_millis - ${slot<number>(0)}` })
    .where('id', '=', slot<string>(1))
    .where('credit_millis', '>=', slot<number>(2))
    .returning(['credit_millis', 'plan']),
);

const ledgerUpsert = compiledOnce<[tenantId: string, day: string, kind: string, millis: number, count: number], never>(
  (db, slot) =>
    db
      .insertInto('credit_ledger')
      .values({
        tenant_id: slot<string>(0),
        day: slot<string>(1),
        kind: slot<string>(2),
        millis: slot<number>(3),
        count: slot<number>(4),
      })
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'day', 'kind']).doUpdateSet({
          millis: sql`credit_ledger.millis + ${slot<number>(3)}`,
          count: sql`credit_ledger.count + ${slot<number>(4)}`,
        }),
      ),
);

export interface CreditState {
  millis: number;
  plan: string;
}

export function creditHeaders(state: CreditState, now: number): Record<string, string> {
  return {
    'Marquee-Credits-Remaining': String(Math.max(0, Math.floor(state.millis / MILLIS_PER_CREDIT))),
    'Marquee-Credits-Reset': nextReset(now),
    'Marquee-Credits-Included': String(planOf(state.plan)?.includedCredits ?? 0),
  };
}

/** What the caller already knows of the tenant (the bearer query reads both), so nothing is read again. */
export interface KnownCredits {
  plan: string;
  grantMonth: string;
}

/**
 * Adds the month's included grant once per UTC month, lazily, before anything reads the balance:
 * one conditional UPDATE (a concurrent request that granted first makes it a no-op). Skipped
 * without a statement when `known` says this month's grant is in.
 */
export async function applyMonthlyGrant(tx: Tx, tenantId: string, now: number, known?: KnownCredits): Promise<void> {
  const month = utcMonth(now);
  if (known && known.grantMonth >= month) return;
  const plan =
    known?.plan ??
    (await tx.selectFrom('tenants').select('plan').where('id', '=', tenantId).executeTakeFirstOrThrow()).plan;
  const grant = (planOf(plan)?.includedCredits ?? 0) * MILLIS_PER_CREDIT;
  const granted = await tx
    .updateTable('tenants')
    .set({ credit_millis: sql`credit_millis + ${grant}`, credit_grant_month: month })
    .where('id', '=', tenantId)
    .where('credit_grant_month', '<', month)
    .executeTakeFirst();
  if (Number(granted.numUpdatedRows) === 1) await recordLedger(tx, tenantId, now, 'included_grant', grant);
}

/**
 * Debits `cost` millicredits unless that would take the balance below the floor by the cost,
 * in which case nothing is debited and payment_required is thrown. The balance comes back from
 * the UPDATE itself; with `known` (this month's grant already in) that UPDATE and the ledger
 * upsert are the only statements.
 */
export async function debit(
  tx: Tx,
  tenantId: string,
  now: number,
  kind: string,
  cost: number,
  known?: KnownCredits,
): Promise<CreditState> {
  await applyMonthlyGrant(tx, tenantId, now, known);
  const [updated] = (await takeCredits.run(tx, cost, tenantId, floorMillis(now) + cost)).rows;
  if (!updated) throw problem('payment_required', 'remaining credits cannot cover this request');
  await recordLedger(tx, tenantId, now, kind, -cost);
  return { millis: updated.credit_millis, plan: updated.plan };
}

/** Adds `count` entries totalling `millis` to the tenant's ledger row of that UTC day and kind. */
export async function recordLedger(
  tx: Tx,
  tenantId: string,
  now: number,
  kind: string,
  millis: number,
  count = 1,
): Promise<void> {
  await ledgerUpsert.run(tx, tenantId, utcDay(now), kind, millis, count);
}

export async function creditState(db: Db | Tx, tenantId: string): Promise<CreditState> {
  const row = await db
    .selectFrom('tenants')
    .select(['credit_millis', 'plan'])
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return { millis: row.credit_millis, plan: row.plan };
}
