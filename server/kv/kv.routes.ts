// Owner key/value on the control plane: GET/PUT/DELETE /api/v1/applications/{id}/kv[/{key}].
// The spec lists these for the account bearer (Model A); project bearers with the content area may
// use them too. PUT needs Idempotency-Key and, to update, If-Match; DELETE needs both.
import { z } from 'zod';
import { KV_LIST_CURSOR_MAX } from '../../sdk/contract/kv';
import { anyBearer, type TenantPrincipal } from '../http/auth';
import { mutation, query, reply } from '../http/route';
import { findApplication } from '../applications/applications';
import { deleteEntry, kvKeyOf, KVWriteBody, listEntries, readEntry, writeEntry } from './kv';

const OWNER_WRITES_PER_MINUTE = 600; // per tenant: ample for scripts, a bound on runaway loops
/** A KVWrite holds at most 1,398,104 base64 characters plus a short content type. */
export const KV_WRITE_BODY_LIMIT = 1_400_000 + 1024;

const KvListQuery = z.strictObject({ cursor: z.string().max(KV_LIST_CURSOR_MAX).optional() });
const ownerWrites = (ctx: { principal: TenantPrincipal }) => [
  { name: 'kv-owner-write', limit: OWNER_WRITES_PER_MINUTE, windowSeconds: 60, key: ctx.principal.tenantId },
];

export const listKv = query({ auth: anyBearer, area: 'content', query: KvListQuery }, async (ctx) => {
  const { db } = ctx.services.store;
  const app = await findApplication(db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(await listEntries(db, app.tenant_id, app.id, ctx.query.cursor));
});

export const getKv = query({ auth: anyBearer, area: 'content' }, async (ctx) => {
  const { db } = ctx.services.store;
  const key = kvKeyOf(ctx.params.key);
  const app = await findApplication(db, ctx.principal.tenantId, ctx.params.id!);
  const entry = await readEntry(db, app.tenant_id, app.id, key);
  return reply.ok(entry, { revision: entry.revision });
});

export const putKv = mutation(
  {
    auth: anyBearer,
    area: 'content',
    body: KVWriteBody,
    bodyLimit: KV_WRITE_BODY_LIMIT,
    idempotency: 'required',
    ifMatch: 'optional',
    rateLimits: ownerWrites,
  },
  async (ctx, work) => {
    const key = kvKeyOf(ctx.params.key);
    const app = await findApplication(work.db, ctx.principal.tenantId, ctx.params.id!);
    const entry = await writeEntry(
      ctx.services,
      work,
      { tenantId: app.tenant_id, applicationId: app.id, requestId: ctx.requestId },
      key,
      ctx.body,
      ctx.ifMatch,
      ctx.now,
    );
    return reply.ok(entry, { revision: entry.revision });
  },
);

export const deleteKv = mutation(
  { auth: anyBearer, area: 'content', idempotency: 'required', ifMatch: 'required', rateLimits: ownerWrites },
  async (ctx, work) => {
    const key = kvKeyOf(ctx.params.key);
    const app = await findApplication(work.db, ctx.principal.tenantId, ctx.params.id!);
    await deleteEntry(
      ctx.services,
      work,
      { tenantId: app.tenant_id, applicationId: app.id, requestId: ctx.requestId },
      key,
      ctx.ifMatch!,
      ctx.now,
    );
    return reply.noContent();
  },
);
