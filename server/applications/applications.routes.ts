// Applications (spec: Endpoints / Applications and operations).
import { anyBearer, projectBearer, type TenantPrincipal } from '../http/auth';
import type { RateBudget } from '../http/rate-limit';
import { endpoint, mutation, query, reply, type IdempotencyPolicy, type RequestContext } from '../http/route';
import {
  deleteApplication as tombstone,
  findApplication,
  getApplication as readApplication,
  listApplications as readApplications,
} from './applications';
import { problem } from '../problem';
import { contentReferencesLock } from '../references';
import { UPLOAD_FINGERPRINT_HEADERS } from './upload-headers';
import { receiveUpload } from './upload';

/** The archive headers are part of what an Idempotency-Key identifies (the body is raw). */
const UPLOAD_IDEMPOTENCY: IdempotencyPolicy = { mode: 'required', fingerprintHeaders: UPLOAD_FINGERPRINT_HEADERS };
/** Reference contract: application-upload, 10 per minute. */
const UPLOADS_PER_MINUTE = 10;

const uploadBudget = (ctx: RequestContext<unknown, unknown, TenantPrincipal>): RateBudget[] => [
  { name: 'application-upload', limit: UPLOADS_PER_MINUTE, windowSeconds: 60, key: ctx.principal.tenantId },
];

export const listApplications = query({ auth: anyBearer, area: 'content' }, async (ctx) =>
  reply.ok({ items: await readApplications(ctx.services.store.db, ctx.principal.tenantId) }),
);

export const getApplication = query({ auth: anyBearer, area: 'content' }, async (ctx) => {
  const application = await readApplication(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(application, { revision: application.revision });
});

export const uploadApplication = endpoint(
  { auth: anyBearer, area: 'content', body: 'raw', idempotency: UPLOAD_IDEMPOTENCY, rateLimits: uploadBudget },
  (ctx) => receiveUpload(ctx, undefined),
);

export const uploadRelease = endpoint(
  {
    auth: projectBearer,
    area: 'content',
    body: 'raw',
    idempotency: UPLOAD_IDEMPOTENCY,
    ifMatch: 'optional',
    rateLimits: uploadBudget,
  },
  (ctx) => receiveUpload(ctx, ctx.params.id!),
);

export const deleteApplication = mutation(
  { auth: projectBearer, area: 'content', ifMatch: 'optional', idempotency: 'optional' },
  async (ctx, work) => {
    const app = await findApplication(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(app.revision);
    // A playlist write naming a release of it commits its dependency rows before the look below,
    // or reads the releases once they are tombstoned.
    await work.lock(contentReferencesLock('application', app.id));
    if (await ctx.services.references.applicationInUse(work, ctx.principal.tenantId, app.id)) {
      throw problem(
        'application_in_use',
        'a live manifest references this application; remove it from every playlist that screens are showing first',
      );
    }
    await tombstone(work, ctx.services, app, ctx.now, ctx.requestId);
    return reply.noContent();
  },
);
