// Control-plane credentials as authentication reads them (http/tenancy.ts): one query by token
// hash, with the tenant's plan, balance and the areas that plan allows the credential; then kept
// for at most BEARER_CACHE_MS. Any change this process makes to a credential (revocation,
// activation, areas) or to a tenant's status, plan or generation empties the cache as the statement
// runs (Store.watchWrites), so in-process revocation takes effect at once; a change made by another
// process (a second replica, the operator CLI) is seen within BEARER_CACHE_MS (D-332).
import type { BearerRecord, TenantBearers } from '../http/tenancy';
import type { Store } from '../store/store';
import { effectiveAreas } from './plans';

/** The longest a looked-up credential is trusted without reading it again. */
export const BEARER_CACHE_MS = 5_000;
/** Credentials cached at most; past this the oldest entry goes. */
const MAX_CACHED_BEARERS = 10_000;

export class StoredTenantBearers implements TenantBearers {
  private readonly cache = new Map<string, { record: BearerRecord; until: number }>();
  /** Moves on with every invalidation, so a lookup that raced one is not cached. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly cacheMs = BEARER_CACHE_MS,
  ) {
    const forget = () => {
      this.generation++;
      this.cache.clear();
    };
    store.watchWrites('credentials', undefined, forget);
    store.watchWrites('tenants', ['status', 'plan', 'generation'], forget);
  }

  async find(tokenHash: string): Promise<BearerRecord | undefined> {
    // Monotonic time: the lifetime bound holds whatever the request clock says.
    const now = performance.now();
    const hit = this.cache.get(tokenHash);
    if (hit && hit.until > now) return hit.record;
    if (hit) this.cache.delete(tokenHash);
    const generation = this.generation;
    const record = await this.read(tokenHash);
    if (record && generation === this.generation && this.cacheMs > 0) {
      if (this.cache.size >= MAX_CACHED_BEARERS) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(tokenHash, { record, until: now + this.cacheMs });
    }
    return record;
  }

  private async read(tokenHash: string): Promise<BearerRecord | undefined> {
    const row = await this.store.db
      .selectFrom('credentials')
      .innerJoin('tenants', 'tenants.id', 'credentials.tenant_id')
      .select([
        'credentials.id as credential_id',
        'credentials.token_hash',
        'credentials.areas',
        'credentials.status as credential_status',
        'tenants.id as tenant_id',
        'tenants.generation',
        'tenants.status as tenant_status',
        'tenants.plan',
        'tenants.credit_millis',
        'tenants.credit_grant_month',
      ])
      .where('credentials.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      tokenHash: row.token_hash,
      credentialId: row.credential_id,
      active: row.credential_status === 'active' && row.tenant_status === 'active',
      suspended: row.credential_status === 'active' && row.tenant_status === 'suspended',
      revoked: row.credential_status === 'revoked',
      tenantId: row.tenant_id,
      generation: row.generation,
      plan: row.plan,
      areas: effectiveAreas(row.plan, JSON.parse(row.areas) as string[]),
      credits: { millis: row.credit_millis, grantMonth: row.credit_grant_month },
    };
  }
}
