// Control-plane credentials as authentication reads them (http/tenancy.ts): one query by token
// hash, with the tenant's plan, balance and the areas that plan allows the credential; then kept
// for at most BEARER_CACHE_MS. Any change this process makes to a credential (revocation,
// activation, areas) or to a tenant's status, plan or generation empties the cache as the statement
// runs (a WatchedCache over Store.watchWrites), so in-process revocation takes effect at once; another
// replica's change once its relayed write arrives (D-386), another process's otherwise (the operator
// CLI on SQLite) within BEARER_CACHE_MS (D-332).
import type { BearerRecord, TenantBearers } from '../http/tenancy';
import type { Store } from '../store/store';
import { WatchedCache } from '../store/watched-cache';
import { effectiveAreas } from './plans';

/** The longest a looked-up credential is trusted without reading it again. */
export const BEARER_CACHE_MS = 5_000;
/** Credentials cached at most; past this the oldest entry goes. */
const MAX_CACHED_BEARERS = 10_000;

export class StoredTenantBearers implements TenantBearers {
  private readonly cache: WatchedCache<BearerRecord | undefined>;

  constructor(
    private readonly store: Store,
    cacheMs = BEARER_CACHE_MS,
  ) {
    this.cache = new WatchedCache(store, {
      ttlMs: cacheMs,
      maxEntries: MAX_CACHED_BEARERS,
      watches: [{ table: 'credentials' }, { table: 'tenants', columns: ['status', 'plan', 'generation'] }],
    });
  }

  find(tokenHash: string): Promise<BearerRecord | undefined> {
    // An unknown token is read again next time (it may be an enrollment's, committed meanwhile).
    return this.cache.get(
      tokenHash,
      () => this.read(tokenHash),
      (record) => record !== undefined,
    );
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
