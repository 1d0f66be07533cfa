// The byte budgets' rules, held alike by the one-process windows and by the windows in the shared
// database (replicas; on the engine MARQUEE_TEST_DATABASE_URL names, else SQLite).
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import { SharedEgressBudgets } from '../replicas/shared-egress-budgets';
import type { Store } from '../store/store';
import { useTestStore } from '../testing/test-store';
import { type EgressBudgets, MemoryEgressBudgets, type ByteBudget } from './egress-budgets';

const MINUTE = 60_000;
const T0 = 100 * MINUTE + 1000;
const clientBudget: ByteBudget = {
  name: 'runtime-egress-client',
  limitBytes: 1000,
  windowSeconds: 60,
  key: 'session-a',
};
const screenBudget: ByteBudget = {
  name: 'runtime-egress-screen',
  limitBytes: 1500,
  windowSeconds: 60,
  key: 'screen-a',
};

async function refusal(fn: () => Promise<unknown>): Promise<ProblemError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const testStore = useTestStore('egress');
let one: Store;
let two: Store;
let keys = 0;
beforeAll(async () => {
  one = testStore.store;
  // Two replicas are two connection pools on PostgreSQL; SQLite has one process, so one store.
  two = one.driver.engine === 'postgres' ? await testStore.another() : one;
});

// Each test of the shared windows gets budgets of its own keys (the database outlives the test).
function fresh(budget: ByteBudget, shared: boolean): ByteBudget {
  return shared ? { ...budget, key: `${budget.key}-${keys}` } : budget;
}

describe.each([
  ['in memory', false],
  ['in the shared database', true],
] as const)('byte budgets %s', (_, shared) => {
  let budgets: EgressBudgets;
  let client: ByteBudget;
  let screen: ByteBudget;
  beforeEach(() => {
    keys++;
    budgets = shared ? new SharedEgressBudgets(one) : new MemoryEgressBudgets();
    client = fresh(clientBudget, shared);
    screen = fresh(screenBudget, shared);
  });

  it('reserve each response whole at admission, so concurrent responses cannot overrun a budget', async () => {
    await budgets.reserve([client], 600, T0); // still sending
    const refused = await refusal(() => budgets.reserve([client], 600, T0 + 10));
    expect(refused.code).toBe('rate_limited');
    expect(refused.options.retryAfter).toBe(59);
    await budgets.reserve([client], 400, T0 + 20); // exactly the rest
    expect((await refusal(() => budgets.reserve([client], 1, T0 + 30))).code).toBe('rate_limited');
  });

  it('give back what a response did not send, and nothing twice', async () => {
    const first = await budgets.reserve([client], 800, T0);
    await budgets.settle(first, 300); // the client hung up after 300 bytes
    await budgets.settle(first, 0); // a second close changes nothing
    await budgets.reserve([client], 700, T0 + 10);
    expect((await refusal(() => budgets.reserve([client], 1, T0 + 20))).code).toBe('rate_limited');
  });

  it('admit a response larger than a whole budget only into an empty window', async () => {
    await budgets.reserve([client], 5000, T0);
    expect((await refusal(() => budgets.reserve([client], 10, T0 + 1))).code).toBe('rate_limited');
    const next = T0 + MINUTE;
    await budgets.reserve([client], 10, next);
    expect((await refusal(() => budgets.reserve([client], 5000, next + 1))).code).toBe('rate_limited');
  });

  it('admit an oversized response into a window emptied by give-backs, as into a new one', async () => {
    const cut = await budgets.reserve([client], 800, T0);
    await budgets.settle(cut, 0); // the client hung up before any byte: the window is empty again
    await budgets.reserve([client], 5000, T0 + 10);
    expect((await refusal(() => budgets.reserve([client], 1, T0 + 20))).code).toBe('rate_limited');
  });

  it('reserve nothing anywhere when one budget refuses', async () => {
    await budgets.reserve([screen], 1000, T0);
    expect((await refusal(() => budgets.reserve([client, screen], 600, T0 + 1))).message).toMatch(
      /runtime-egress-screen/,
    );
    await budgets.reserve([client], 1000, T0 + 2); // the client budget was left untouched
  });

  it('refund into the window of admission only, never into the next one', async () => {
    const old = await budgets.reserve([client], 1000, T0);
    const next = T0 + MINUTE;
    await budgets.reserve([client], 900, next);
    await budgets.settle(old, 0);
    expect((await refusal(() => budgets.reserve([client], 200, next + 1))).code).toBe('rate_limited');
  });
});

describe('byte budgets shared by two replicas', () => {
  it('admit no more than the budget when both reserve at once, and never half a reservation', async () => {
    const a = new SharedEgressBudgets(one);
    const b = new SharedEgressBudgets(two);
    const perClient: ByteBudget = { ...clientBudget, key: 'race-client' };
    const perScreen: ByteBudget = { ...screenBudget, key: 'race-screen' };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) => (i % 2 ? a : b).reserve([perScreen, perClient], 100, T0 + i)),
    );
    const admitted = outcomes.filter((o) => o.status === 'fulfilled');
    expect(admitted).toHaveLength(10); // the client budget's 1000 bytes, in 100-byte responses
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ProblemError).code).toBe('rate_limited');
    // The screen budget holds only what was admitted: 500 more fit there, by another client.
    await a.reserve([{ ...perScreen }, { ...clientBudget, key: 'race-client-2' }], 500, T0 + 30);
    expect((await refusal(() => b.reserve([perScreen], 1, T0 + 31))).code).toBe('rate_limited');
  });
});
