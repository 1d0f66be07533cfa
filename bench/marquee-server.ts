// `npm start`'s server for benchmarks that measure delivery, not abuse limits: the request and byte
// budgets of every route keep their cost (the same in-memory windows are consulted) but with limits
// a million times larger, so a closed loop of thousands of requests a second is never refused.
import type { RateBudget } from '../server/http/rate-limit';
import { MemoryRateLimiter } from '../server/http/rate-limit';
import { MemoryEgressBudgets } from '../server/runtime/egress-budgets';
import { serve } from '../server/serve';

const limiter = new MemoryRateLimiter();
const raised = (budget: RateBudget): RateBudget => ({ ...budget, limit: budget.limit * 1e6 });
void serve(process.env, process.argv.slice(2), {
  rateLimiter: {
    take: (budget, now) => limiter.take(raised(budget), now),
    peek: (budget, now) => limiter.peek(raised(budget), now),
  },
  egress: new MemoryEgressBudgets(),
  tuning: { egressLimits: { clientBytesPerMinute: 1e18, screenBytesPerMinute: 1e18, accountBytesPerMinute: 1e18 } },
});
