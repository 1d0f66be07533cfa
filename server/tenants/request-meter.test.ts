import { describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import type { Store } from '../store/store';
import { useTestStore } from '../testing/test-store';
import { floorMillis } from './credits';
import { RequestMeter } from './request-meter';

const testStore = useTestStore('meter');
const now = Date.parse('2026-11-21T12:00:00Z');
const known = { plan: 'signage', grantMonth: '2026-11' };
let tenants = 0;

async function tenant(creditMillis: number): Promise<string> {
  const id = `prj_meter${++tenants}`;
  await testStore.store.db
    .insertInto('tenants')
    .values({
      id,
      generation: 'P',
      name: 'meter',
      email: 'm@example.com',
      plan: 'signage',
      status: 'active',
      revision: 1,
      content_limit_bytes: 0,
      screen_limit: 0,
      credit_millis: creditMillis,
      credit_grant_month: '2026-11',
      created_at: now,
      updated_at: now,
    } as never)
    .execute();
  return id;
}

const balance = async (id: string) =>
  (
    await testStore.store.db
      .selectFrom('tenants')
      .select('credit_millis')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).credit_millis;
const ledger = (id: string) =>
  testStore.store.db
    .selectFrom('credit_ledger')
    .select(['millis', 'count'])
    .where('tenant_id', '=', id)
    .where('kind', '=', 'api_request')
    .executeTakeFirst();

describe('the request meter', () => {
  it('commits concurrent debits together, each with the balance it would have seen alone', async () => {
    const a = await tenant(10_000);
    const b = await tenant(5_000);
    const meter = new RequestMeter(testStore.store);
    const states = await Promise.all([
      ...Array.from({ length: 6 }, () => meter.debit(a, now, 1000, known)),
      meter.debit(b, now, 1000, known),
    ]);
    expect(states.slice(0, 6).map((s) => s.millis)).toEqual([9000, 8000, 7000, 6000, 5000, 4000]);
    expect(states[6]!.millis).toBe(4000);
    expect(await balance(a)).toBe(4000);
    expect(await ledger(a)).toEqual({ millis: -6000, count: 6 });
    expect(await ledger(b)).toEqual({ millis: -1000, count: 1 });
  });

  it('commits the debits that reach it in one turn of the event loop together (one transaction; one statement on PostgreSQL), whatever came between', async () => {
    const a = await tenant(10_000);
    let transactions = 0;
    const counting = Object.create(testStore.store) as Store;
    counting.transaction = (fn) => {
      transactions++;
      return testStore.store.transaction(fn);
    };
    const meter = new RequestMeter(counting);
    // As requests read in one I/O phase arrive: each after its own awaited steps (authentication).
    const debits: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) {
      await Promise.resolve();
      debits.push(meter.debit(a, now, 1000, known));
    }
    const states = await Promise.all(debits);
    // PostgreSQL debits one tenant's batch in one statement of its own, no transaction around it.
    expect(transactions).toBe(testStore.store.driver.engine === 'postgres' ? 0 : 1);
    expect(states).toEqual([9000, 8000, 7000, 6000, 5000].map((millis) => ({ millis, plan: 'signage' })));
    expect(await balance(a)).toBe(5000);
    expect(await ledger(a)).toEqual({ millis: -5000, count: 5 });
  });

  it('admits exactly the concurrent debits the balance covers above the floor, in order, and refuses the rest', async () => {
    const id = await tenant(floorMillis(now) + 3500);
    const meter = new RequestMeter(testStore.store);
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => meter.debit(id, now, 1000, known)));
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'rejected',
    ]);
    for (const o of outcomes.slice(3))
      expect(((o as PromiseRejectedResult).reason as ProblemError).code).toBe('payment_required');
    expect(await balance(id)).toBe(floorMillis(now) + 500);
    expect(await ledger(id)).toEqual({ millis: -3000, count: 3 });
  });

  it('fails every debit of a batch whose transaction fails, across tenants, and charges none of them', async () => {
    const a = await tenant(10_000);
    const b = await tenant(10_000);
    // The meter's transaction of the second batch fails after its writes (as a full disk or an I/O
    // error would), so it rolls back. On PostgreSQL the first batch (one tenant) takes no transaction.
    const failingAt = testStore.store.driver.engine === 'postgres' ? 1 : 2;
    let transactions = 0;
    const failing = Object.create(testStore.store) as Store;
    failing.transaction = (fn) =>
      testStore.store.transaction(async (work) => {
        const result = await fn(work);
        if (++transactions === failingAt) throw new Error('SQLITE_IOERR: disk I/O error');
        return result;
      });
    const meter = new RequestMeter(failing);
    // The first debit is a batch alone; the others arrive together and form the second batch.
    const outcomes = [
      ...(await Promise.allSettled([meter.debit(a, now, 1000, known)])),
      ...(await Promise.allSettled([a, b, a, b].map((id) => meter.debit(id, now, 1000, known)))),
    ];
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { millis: 9000 } });
    for (const o of outcomes.slice(1)) {
      expect(o.status).toBe('rejected');
      const reason = (o as PromiseRejectedResult).reason;
      expect(reason).not.toBeInstanceOf(ProblemError); // the pipeline answers it with 500 internal_error
      expect(String(reason)).toContain('disk I/O error');
    }
    expect(transactions).toBe(failingAt);
    expect(await balance(a)).toBe(9000);
    expect(await balance(b)).toBe(10_000);
    expect(await ledger(a)).toEqual({ millis: -1000, count: 1 });
    expect(await ledger(b)).toBeUndefined();
    // The meter carries on with the next batch.
    expect((await meter.debit(b, now, 1000, known)).millis).toBe(9000);
    expect(await ledger(b)).toEqual({ millis: -1000, count: 1 });
  });

  it('adds a due monthly grant once for a group of debits', async () => {
    const id = await tenant(0);
    const meter = new RequestMeter(testStore.store);
    const december = Date.parse('2026-12-01T00:00:05Z');
    const states = await Promise.all(Array.from({ length: 4 }, () => meter.debit(id, december, 1000, known)));
    expect(states.map((s) => s.millis)).toEqual([9_999_000, 9_998_000, 9_997_000, 9_996_000]);
    const grants = await testStore.store.db
      .selectFrom('credit_ledger')
      .select(['millis', 'count'])
      .where('tenant_id', '=', id)
      .where('kind', '=', 'included_grant')
      .executeTakeFirstOrThrow();
    expect(grants).toEqual({ millis: 10_000_000, count: 1 });
  });
});
