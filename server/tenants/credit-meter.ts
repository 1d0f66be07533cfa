// The credit meter as the HTTP layer sees it (http/tenancy.ts): each authenticated Model P
// /api/v1 request debits one credit, committed in groups by RequestMeter; routes exempt from the
// meter only read the balance. Every answer, a refusal's too, carries the credit headers.
import type { MeterAnswer, MeteredRequest, Meter } from '../http/tenancy';
import type { Store } from '../store/store';
import { applyMonthlyGrant, creditHeaders, creditState, REQUEST_COST_MILLIS, utcMonth } from './credits';
import { RequestMeter } from './request-meter';

export class CreditMeter implements Meter {
  private readonly requests: RequestMeter;

  constructor(private readonly store: Store) {
    this.requests = new RequestMeter(store);
  }

  async charge(request: MeteredRequest): Promise<MeterAnswer> {
    const { tenantId, plan, credits, now } = request;
    // Exempt routes only read the balance (the credential may come from a cache, its balance
    // stale), unless a new UTC month's grant is due first.
    if (!request.debits && credits.grantMonth >= utcMonth(now))
      return { headers: creditHeaders(await creditState(this.store.db, tenantId), now) };
    const known = { plan, grantMonth: credits.grantMonth };
    try {
      const state = request.debits
        ? await this.requests.debit(tenantId, now, REQUEST_COST_MILLIS, known)
        : await this.store.transaction(async ({ db }) => {
            await applyMonthlyGrant(db, tenantId, now, known);
            return creditState(db, tenantId);
          });
      return { headers: creditHeaders(state, now) };
    } catch (error) {
      return { headers: creditHeaders(await creditState(this.store.db, tenantId), now), error };
    }
  }
}
