// Completed response bytes, per tenant, UTC day and kind: what exports (and later runtime delivery)
// sent. Aggregated like the credit ledger, so a busy day is one row, not one per request.
import { sql } from 'kysely';
import type { Store } from '../store/store';
import { utcDay } from '../tenants/credits';

/** spec Endpoints / Media: export records completed response bytes as project_media_export egress. */
export const MEDIA_EXPORT_EGRESS = 'project_media_export';

export async function recordEgress(
  store: Store,
  tenantId: string,
  kind: string,
  bytes: number,
  now: number,
): Promise<void> {
  await store.transaction(async ({ db }) => {
    await db
      .insertInto('egress_ledger')
      .values({ tenant_id: tenantId, day: utcDay(now), kind, bytes, count: 1 })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'day', 'kind'])
          .doUpdateSet({ bytes: sql`egress_ledger.bytes + ${bytes}`, count: sql`egress_ledger.count + 1` }),
      )
      .execute();
  });
}
