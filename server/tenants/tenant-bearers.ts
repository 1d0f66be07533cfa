// Control-plane credentials as authentication reads them (http/tenancy.ts): one query by token
// hash, with the tenant's plan, balance and the areas that plan allows the credential.
import type { BearerRecord, TenantBearers } from '../http/tenancy';
import type { Store } from '../store/store';
import { effectiveAreas } from './plans';

export class StoredTenantBearers implements TenantBearers {
  constructor(private readonly store: Store) {}

  async find(tokenHash: string): Promise<BearerRecord | undefined> {
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
