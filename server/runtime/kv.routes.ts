// Runtime key/value: /runtime/v1/apps/{application_id}/kv[/{key}]. Reads need the runtime cookie,
// writes and deletes the paired one, and every call the placement capability of an application
// placement that a granted manifest of this screen shows, issued to this very session.
import { z } from 'zod';
import { KV_LIST_CURSOR_MAX, PLACEMENT_CAPABILITY_HEADER } from '../../sdk/contract/kv';
import { findApplication } from '../applications/applications';
import type { ApplicationTable } from '../applications/applications.tables';
import { problem, ProblemError } from '../problem';
import { mutation, query, reply, type RequestContext } from '../http/route';
import { deleteEntry, kvKeyOf, KVWriteBody, listEntries, readEntry, writeEntry } from '../kv/kv';
import { KV_WRITE_BODY_LIMIT } from '../kv/kv.routes';
import { pairedRuntimeCookie, runtimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import type { Db, Tx } from '../store/store';
import { manifestRevisionId } from '../manifests/manifest-ids';
import { grantedManifest } from '../manifests/manifest-store';
import { runtimeBudgetKey } from './runtime-budgets';
import { unsealPlacementCapability } from './placement-capability';

/** Per paired screen, and per viewer IP of its public URL (runtimeBudgetKey). */
const KV_READS_PER_SCREEN_PER_MINUTE = 600;
const KV_WRITES_PER_SCREEN_PER_MINUTE = 120; // spec / reference contract: runtime-kv-write 120 a minute

const KvListQuery = z.strictObject({ cursor: z.string().max(KV_LIST_CURSOR_MAX).optional() });
type Caller = { principal: RuntimePrincipal };
const reads = (ctx: RuntimeContext) => [
  { name: 'runtime-kv-read', limit: KV_READS_PER_SCREEN_PER_MINUTE, windowSeconds: 60, key: runtimeBudgetKey(ctx) },
];
const writes = (ctx: Caller) => [
  { name: 'runtime-kv-write', limit: KV_WRITES_PER_SCREEN_PER_MINUTE, windowSeconds: 60, key: ctx.principal.screenId },
];

type RuntimeContext = RequestContext<unknown, unknown, RuntimePrincipal>;

function unauthorized(detail: string) {
  return problem('unauthorized', `${detail}; fetch the current manifest and use its capabilityHandle`);
}

function forbidden(detail: string) {
  return problem('forbidden', `the placement capability ${detail}`);
}

/**
 * The application the call may use: the capability must verify, be unexpired, and be bound to
 * this session, screen, generation and application, to a placement that shows that application in
 * a manifest revision still granted to the screen, and (for writes) grant writes.
 */
async function authorizePlacement(
  ctx: RuntimeContext,
  db: Db | Tx,
  operation: 'read' | 'write',
): Promise<ApplicationTable> {
  const { services, principal, now } = ctx;
  const header = ctx.req.headers[PLACEMENT_CAPABILITY_HEADER.toLowerCase()];
  if (typeof header !== 'string' || header === '')
    throw unauthorized(`this route needs the ${PLACEMENT_CAPABILITY_HEADER} header`);
  const capability = unsealPlacementCapability(services.keys, header);
  if (!capability) throw unauthorized('the placement capability is not one this server issued');
  if (capability.expiresAt <= now) throw unauthorized('the placement capability expired');
  const applicationId = ctx.params.application_id!;
  if (capability.runtimeSessionId !== principal.runtimeSessionId)
    throw forbidden('was issued to another runtime session');
  if (capability.screenId !== principal.screenId || capability.tenantId !== principal.tenantId)
    throw forbidden('was issued for another screen');
  if (capability.contentGeneration !== principal.contentAccessGeneration)
    throw forbidden('was issued at another content-access generation');
  if (capability.applicationId !== applicationId) throw forbidden('is for another application');
  if (operation === 'write' && capability.operations !== 'read-write')
    throw forbidden('grants reads only (an anonymous session, or a read-only placement)');
  let manifest;
  try {
    manifest = await grantedManifest(
      services,
      db,
      principal,
      manifestRevisionId(principal.screenId, capability.manifestRevision),
      now,
    );
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'not_found')
      throw forbidden('names a manifest revision this screen was never given');
    throw error;
  }
  const page = manifest.stored.pages.find((p) => p.id === capability.pageId);
  const placement = page?.placements.find((p) => p.id === capability.placementId);
  const content = placement?.content;
  if (
    content?.type !== 'application' ||
    content.releaseId !== capability.releaseId ||
    content.applicationId !== applicationId
  ) {
    throw forbidden('names a placement that does not show this release in that manifest revision');
  }
  return findApplication(db, principal.tenantId, applicationId);
}

export const listRuntimeKv = query({ auth: runtimeCookie, query: KvListQuery, rateLimits: reads }, async (ctx) => {
  const { db } = ctx.services.store;
  const app = await authorizePlacement(ctx, db, 'read');
  return reply.ok(await listEntries(db, app.tenant_id, app.id, ctx.query.cursor), {
    headers: { 'Cache-Control': 'no-store' },
  });
});

export const getRuntimeKv = query({ auth: runtimeCookie, rateLimits: reads }, async (ctx) => {
  const { db } = ctx.services.store;
  const key = kvKeyOf(ctx.params.key);
  const app = await authorizePlacement(ctx, db, 'read');
  const entry = await readEntry(db, app.tenant_id, app.id, key);
  return reply.ok(entry, { revision: entry.revision, headers: { 'Cache-Control': 'no-store' } });
});

export const putRuntimeKv = mutation(
  {
    auth: pairedRuntimeCookie,
    body: KVWriteBody,
    bodyLimit: KV_WRITE_BODY_LIMIT,
    idempotency: 'required',
    ifMatch: 'optional',
    rateLimits: writes,
  },
  async (ctx, work) => {
    const key = kvKeyOf(ctx.params.key);
    const app = await authorizePlacement(ctx, work.db, 'write');
    const writer = {
      tenantId: app.tenant_id,
      applicationId: app.id,
      requestId: ctx.requestId,
      screenId: ctx.principal.screenId,
    };
    const entry = await writeEntry(ctx.services, work, writer, key, ctx.body, ctx.ifMatch, ctx.now);
    return reply.ok(entry, { revision: entry.revision });
  },
);

export const deleteRuntimeKv = mutation(
  { auth: pairedRuntimeCookie, idempotency: 'required', ifMatch: 'required', rateLimits: writes },
  async (ctx, work) => {
    const key = kvKeyOf(ctx.params.key);
    const app = await authorizePlacement(ctx, work.db, 'write');
    const writer = {
      tenantId: app.tenant_id,
      applicationId: app.id,
      requestId: ctx.requestId,
      screenId: ctx.principal.screenId,
    };
    await deleteEntry(ctx.services, work, writer, key, ctx.ifMatch!, ctx.now);
    return reply.noContent();
  },
);
