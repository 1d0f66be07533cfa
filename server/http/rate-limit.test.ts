// admit() over the in-memory limiter: all-or-nothing over several budgets, and one budget admitted
// with a single take (a shared limiter answers each call with a round trip).
import { describe, expect, it } from 'vitest';
import { admit, MemoryRateLimiter, type RateBudget, type RateDecision, type RateLimiter } from './rate-limit';

/** The memory limiter, counting the calls admit makes. */
class CountingLimiter implements RateLimiter {
  readonly calls: string[] = [];
  constructor(private readonly inner = new MemoryRateLimiter()) {}
  take(budget: RateBudget, now: number): Promise<RateDecision> {
    this.calls.push(`take ${budget.name}`);
    return this.inner.take(budget, now);
  }
  peek(budget: RateBudget, now: number): Promise<RateDecision> {
    this.calls.push(`peek ${budget.name}`);
    return this.inner.peek(budget, now);
  }
}

const NOW = Date.parse('2026-11-27T12:00:30Z');
const screen: RateBudget = { name: 'screen', limit: 2, windowSeconds: 60, key: 'scr_1' };
const project: RateBudget = { name: 'project', limit: 10, windowSeconds: 60, key: 'prj_1' };

describe('admit', () => {
  it('admits one budget with one take, and a refusal spends nothing', async () => {
    const limiter = new CountingLimiter();
    expect(await admit(limiter, [screen], NOW)).toEqual({
      'RateLimit-Policy': '"screen";q=2;w=60',
      RateLimit: '"screen";r=1;t=30',
    });
    expect(limiter.calls).toEqual(['take screen']);
    await admit(limiter, [screen], NOW);
    await expect(admit(limiter, [screen], NOW)).rejects.toMatchObject({
      code: 'rate_limited',
      options: { retryAfter: 30 },
    });
    expect((await limiter.peek(screen, NOW)).remaining).toBe(0);
    // The refused take spent nothing: 2 are used, so one more would still fit a limit of 3.
    expect((await limiter.peek({ ...screen, limit: 3 }, NOW)).allowed).toBe(true);
  });

  it('refuses several budgets whole when one is spent, spending none of them', async () => {
    const limiter = new CountingLimiter();
    await admit(limiter, [screen], NOW);
    await admit(limiter, [screen], NOW);
    limiter.calls.length = 0;
    await expect(admit(limiter, [project, screen], NOW)).rejects.toMatchObject({ code: 'rate_limited' });
    expect(limiter.calls).toEqual(['peek project', 'peek screen']);
    expect((await limiter.peek(project, NOW)).remaining).toBe(9); // untouched: 10 - the peek's own cost
  });

  it('lets only one of two concurrent requests through when the budget they share fits one', async () => {
    // Both look before either takes: the second's take does not fit, and it must not go on unspent.
    const limiter = new MemoryRateLimiter();
    const fanOut: RateBudget = { ...project, cost: 8 };
    const answers = await Promise.allSettled([
      admit(limiter, [screen, fanOut], NOW),
      admit(limiter, [screen, fanOut], NOW),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((answers.find((a) => a.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      code: 'rate_limited',
      options: { headers: { RateLimit: '"project";r=2;t=30' } },
    });
    expect((await limiter.peek(project, NOW)).remaining).toBe(1); // 8 spent, by the one admitted
  });
});
