// POST /api/v1/media/uploads (declare), PUT <signed upload URL> (the local store receiving bytes),
// POST /api/v1/media/uploads/{id}/commit.
import { MediaCommit, MediaUploadDeclaration } from '../../sdk/contract/media';
import { BlobExistsError, BlobTooLargeError } from '../blobs/blob-store';
import { anyBearer } from '../http/auth';
import { BodyStalled, bodyIdleTimeoutMs, guardBodyProgress } from '../http/body-progress';
import { problem, type FieldError } from '../problem';
import { endpoint, mutation, reply } from '../http/route';
import { operationView } from '../operations/worker';
import { acceptCommit, checkCommit, declareUpload, findUpload, uploadUrlClosed } from './media-uploads';

/** Reference contract x-rate-limit-policies: media-upload-admission, 20 per 60 s. */
const UPLOAD_ADMISSION_PER_MINUTE = 20;
/** Fields only Model P declarations carry (spec: source_filename and tag are "optional (P)"). */
const PROJECT_ONLY_FIELDS = ['source_filename', 'tag'] as const;

export const declareMediaUpload = mutation(
  {
    auth: anyBearer,
    area: 'content',
    body: MediaUploadDeclaration,
    idempotency: 'required',
    rateLimits: (ctx) => [
      {
        name: 'media-upload-admission',
        limit: UPLOAD_ADMISSION_PER_MINUTE,
        windowSeconds: 60,
        key: ctx.principal.tenantId,
      },
    ],
  },
  async (ctx, work) => {
    if (ctx.principal.generation === 'A') {
      const errors: FieldError[] = PROJECT_ONLY_FIELDS.filter((f) => ctx.body[f] !== undefined).map((field) => ({
        field,
        code: 'unknown_field',
        detail: `${field} is a project (Model P) field; an account declaration does not take it`,
      }));
      if (errors.length > 0) throw problem('invalid_request', `${errors[0]!.field}: ${errors[0]!.detail}`, { errors });
    }
    const session = await declareUpload(ctx.services, work, ctx.principal.tenantId, ctx.body, ctx.now, ctx.requestId);
    return reply.created(session, { headers: { 'Cache-Control': 'private, no-store' } });
  },
);

/**
 * The signed PUT of the local blob store. No bearer: the signature is the authority, bound to the
 * object key, length, content type and expiry. Single use: once the object exists, or while another
 * PUT to it runs, the URL is refused. A transfer that fails stores nothing and leaves it usable.
 */

export const receiveSignedPut = endpoint({ body: 'raw' }, async (ctx) => {
  const { services, req } = ctx;
  const key = ctx.params.key!;
  // Refusals end the connection: the client may still be sending a large body we will not read.
  const refuse = (code: 'forbidden' | 'invalid_request' | 'resource_conflict', detail: string, field?: string) =>
    problem(code, detail, {
      headers: { Connection: 'close' },
      errors: field ? [{ field, code: 'mismatch', detail }] : undefined,
    });

  if (!services.blobs.verifyPut) throw problem('not_found', 'this storage does not receive uploads');
  const verdict = services.blobs.verifyPut(key, ctx.url.searchParams, ctx.now);
  if (!verdict.ok) {
    throw refuse(
      'forbidden',
      verdict.reason === 'expired'
        ? 'this upload URL has expired; declare the upload again'
        : 'this upload URL is not valid; send it exactly as issued',
    );
  }
  const { grant } = verdict;
  if (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] === undefined) {
    throw refuse(
      'invalid_request',
      `send Content-Length: ${grant.bytes}, as issued with the upload URL`,
      'Content-Length',
    );
  }
  if (req.headers['content-length'] !== String(grant.bytes)) {
    throw refuse('invalid_request', `Content-Length must be ${grant.bytes}, the declared size`, 'Content-Length');
  }
  if ((req.headers['content-type'] ?? '').trim().toLowerCase() !== grant.contentType) {
    throw refuse('invalid_request', `Content-Type must be ${grant.contentType}, the declared type`, 'Content-Type');
  }

  // Claimed before anything else awaits, so two PUTs can never both pass the checks below.
  const unlock = await services.locks.acquire(`signed-put\u0000${grant.key}`, 0);
  if (!unlock) throw refuse('resource_conflict', 'another PUT to this upload URL is in progress');
  try {
    const open = () => uploadUrlClosed(services.store.db, grant.key);
    const closed = await open();
    if (closed) throw refuse('forbidden', closed);
    const used = () => refuse('forbidden', 'this upload URL was already used; it authorizes exactly one PUT');
    if (await services.blobs.stat(grant.key)) throw used();

    // Exclusive: should another process have stored the object meanwhile, it is kept, never replaced.
    const body = guardBodyProgress(req, bodyIdleTimeoutMs(services));
    const stored = await services.blobs
      .write(grant.key, body, { maxBytes: grant.bytes, exclusive: true })
      .catch((error: unknown) => {
        body.release();
        if (error instanceof BlobExistsError) throw used();
        if (error instanceof BodyStalled)
          throw refuse('invalid_request', `${error.message}; nothing was stored, send the PUT again`, 'body');
        // The client went away mid-body, or sent more than it announced: nothing was stored.
        if (error instanceof BlobTooLargeError || req.destroyed || !req.complete) {
          throw refuse(
            'invalid_request',
            `the body did not arrive as exactly ${grant.bytes} bytes; nothing was stored`,
            'body',
          );
        }
        throw error;
      });
    // From here on the object is this request's own: only it may remove it again.
    if (stored.bytes !== grant.bytes) {
      await services.blobs.delete(grant.key);
      throw refuse('invalid_request', `the body had ${stored.bytes} bytes; ${grant.bytes} were declared`, 'body');
    }
    // Cancelled or expired while the bytes arrived: they belong to nothing.
    const closedMeanwhile = await open();
    if (closedMeanwhile) {
      await services.blobs.delete(grant.key);
      throw refuse('forbidden', closedMeanwhile);
    }
    return { status: 200, headers: { ETag: `"${stored.sha256}"` } };
  } finally {
    await unlock();
  }
});

export const commitMediaUpload = endpoint(
  { auth: anyBearer, area: 'content', body: MediaCommit, idempotency: 'required' },
  async (ctx) => {
    const { services } = ctx;
    const tenantId = ctx.principal.tenantId;
    const upload = await findUpload(services.store.db, tenantId, ctx.params.id!);
    await checkCommit(services, upload, ctx.body);
    return ctx.commitReply(async (work) => {
      const op = await acceptCommit(services, work, upload, ctx.now, ctx.requestId);
      return reply.accepted(operationView(op));
    });
  },
);
