// The balance and statement of a project's credit ledger (tenants/credits.ts): what the meter, the
// monthly grant, media generation and operators wrote, read back in millicredits.
import { millicredits, type BillingBalance, type BillingStatement } from '../../sdk/contract/billing';
import { problem } from '../problem';
import type { Db, Store } from '../store/store';
import {
  applyMonthlyGrant,
  creditHeaders,
  creditState,
  floorMillis,
  MILLIS_PER_CREDIT,
  nextReset,
} from '../tenants/credits';
import { planOf } from '../tenants/plans';

export async function billingBalance(db: Db, tenantId: string, now: number): Promise<BillingBalance> {
  const state = await creditState(db, tenantId);
  return {
    balance_millicredits: millicredits(state.millis),
    included_millicredits: millicredits((planOf(state.plan)?.includedCredits ?? 0) * MILLIS_PER_CREDIT),
    floor_millicredits: millicredits(floorMillis(now)),
    next_grant_at: nextReset(now),
    rails_available: false,
  };
}

function encodeCursor(day: string, kind: string): string {
  return Buffer.from(JSON.stringify([day, kind])).toString('base64url');
}

function decodeCursor(cursor: string): { day: string; kind: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      !`${value[0]}${value[1]}`.includes('\u0000') // no cursor of ours; PostgreSQL cannot compare it (D-471)
    )
      return { day: value[0], kind: value[1] };
  } catch {
    // fall through to the problem
  }
  throw problem('invalid_request', 'cursor: not a cursor this server issued', {
    errors: [{ field: 'cursor', code: 'invalid', detail: 'pass next_cursor unchanged' }],
  });
}

/** The ledger by UTC day, newest first, kinds in name order within a day. */
export async function billingStatement(
  db: Db,
  tenantId: string,
  page: { cursor?: string; limit: number },
): Promise<BillingStatement> {
  let q = db.selectFrom('credit_ledger').selectAll().where('tenant_id', '=', tenantId);
  if (page.cursor !== undefined) {
    const after = decodeCursor(page.cursor);
    q = q.where((eb) =>
      eb.or([eb('day', '<', after.day), eb.and([eb('day', '=', after.day), eb('kind', '>', after.kind)])]),
    );
  }
  const rows = await q
    .orderBy('day', 'desc')
    .orderBy('kind')
    .limit(page.limit + 1)
    .execute();
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return {
    items: items.map((r) => ({
      day: r.day,
      kind: r.kind,
      amount_millicredits: millicredits(r.millis),
      count: r.count,
    })),
    next_cursor: rows.length > page.limit && last ? encodeCursor(last.day, last.kind) : null,
  };
}

/** The dashboard's whole-credit balance: never debits, so it answers at zero too. */
export async function wholeCreditBalance(store: Store, tenantId: string, now: number) {
  const state = await store.transaction(async ({ db }) => {
    await applyMonthlyGrant(db, tenantId, now);
    return creditState(db, tenantId);
  });
  const headers = creditHeaders(state, now);
  return {
    credit_remaining: Number(headers['Marquee-Credits-Remaining']),
    credit_included: Number(headers['Marquee-Credits-Included']),
    credit_reset: headers['Marquee-Credits-Reset']!,
  };
}
