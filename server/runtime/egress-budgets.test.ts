import { describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import { MemoryEgressBudgets, type ByteBudget } from './egress-budgets';

const MINUTE = 60_000;
const T0 = 100 * MINUTE + 1000;
const client: ByteBudget = { name: 'runtime-egress-client', limitBytes: 1000, windowSeconds: 60, key: 'session-a' };
const screen: ByteBudget = { name: 'runtime-egress-screen', limitBytes: 1500, windowSeconds: 60, key: 'screen-a' };

async function refusal(fn: () => Promise<unknown>): Promise<ProblemError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('byte budgets', () => {
  it('reserve each response whole at admission, so concurrent responses cannot overrun a budget', async () => {
    const budgets = new MemoryEgressBudgets();
    await budgets.reserve([client], 600, T0); // still sending
    const refused = await refusal(() => budgets.reserve([client], 600, T0 + 10));
    expect(refused.code).toBe('rate_limited');
    expect(refused.options.retryAfter).toBe(59);
    await budgets.reserve([client], 400, T0 + 20); // exactly the rest
    expect((await refusal(() => budgets.reserve([client], 1, T0 + 30))).code).toBe('rate_limited');
  });

  it('give back what a response did not send, and nothing twice', async () => {
    const budgets = new MemoryEgressBudgets();
    const first = await budgets.reserve([client], 800, T0);
    await budgets.settle(first, 300); // the client hung up after 300 bytes
    await budgets.settle(first, 0); // a second close changes nothing
    await budgets.reserve([client], 700, T0 + 10);
    expect((await refusal(() => budgets.reserve([client], 1, T0 + 20))).code).toBe('rate_limited');
  });

  it('admit a response larger than a whole budget only into an empty window', async () => {
    const budgets = new MemoryEgressBudgets();
    await budgets.reserve([client], 5000, T0);
    expect((await refusal(() => budgets.reserve([client], 10, T0 + 1))).code).toBe('rate_limited');
    const next = T0 + MINUTE;
    await budgets.reserve([client], 10, next);
    expect((await refusal(() => budgets.reserve([client], 5000, next + 1))).code).toBe('rate_limited');
  });

  it('reserve nothing anywhere when one budget refuses', async () => {
    const budgets = new MemoryEgressBudgets();
    await budgets.reserve([screen], 1000, T0);
    expect((await refusal(() => budgets.reserve([client, screen], 600, T0 + 1))).message).toMatch(
      /runtime-egress-screen/,
    );
    await budgets.reserve([client], 1000, T0 + 2); // the client budget was left untouched
  });

  it('refund into the window of admission only, never into the next one', async () => {
    const budgets = new MemoryEgressBudgets();
    const old = await budgets.reserve([client], 1000, T0);
    const next = T0 + MINUTE;
    await budgets.reserve([client], 900, next);
    await budgets.settle(old, 0);
    expect((await refusal(() => budgets.reserve([client], 200, next + 1))).code).toBe('rate_limited');
  });
});
