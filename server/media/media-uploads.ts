// The upload lifecycle: declare (reserve quota, pending media, a `receiving` operation, a signed
// PUT), commit (exact declaration → queued), verify and publish (the `media.upload` runner), and the
// ends that release the reservation exactly once: failure, cancel, expiry.
import {
  CANONICAL_EXTENSION,
  kindOf,
  type MediaContentType,
  type MediaUploadDeclaration,
  type MediaUploadSession,
} from '../../sdk/contract/media';
import { isoTime } from '../clock';
import { problem } from '../problem';
import { mediaSelectionLock } from '../references';
import { newId } from '../keys';
import { operationView, type OperationRow, type OperationRunner } from '../operations/worker';
import type { Services } from '../services';
import type { Db, Tx, Work } from '../store/store';
import { commitReservation, releaseReservation, reserveBytes } from '../tenants/tenants';
import { MEDIA_UPLOAD_KIND, objectKeyOf } from './media';
import type { MediaUploadTable } from './media.tables';
import type { FieldError } from '../problem';
import { verifyStoredMedia } from './media-verification';

/** The signed PUT must start within this window: short-lived, long enough to begin a big file. */
export const UPLOAD_URL_TTL_MS = 15 * 60_000;
/** An upload not committed by then expires; 1 GiB over a slow uplink still fits. */
export const UPLOAD_COMMIT_WINDOW_MS = 6 * 3600_000;

export interface UploadInput {
  upload_id: string;
  media_id: string;
}

/** The stored filename: from source_filename when given (its stem and the sent type's extension). */
export function storedFilename(declaration: MediaUploadDeclaration): string {
  if (declaration.source_filename === undefined) return declaration.filename;
  const dot = declaration.source_filename.lastIndexOf('.');
  const stem = dot > 0 ? declaration.source_filename.slice(0, dot) : declaration.source_filename;
  const extension = CANONICAL_EXTENSION[declaration.content_type];
  return [...stem].slice(0, 255 - extension.length).join('') + extension;
}

export async function declareUpload(
  services: Services,
  work: Work,
  tenantId: string,
  declaration: MediaUploadDeclaration,
  now: number,
  requestId: string,
): Promise<MediaUploadSession> {
  const uploadId = newId('upl');
  const mediaId = newId('med');
  const objectKey = objectKeyOf(mediaId);
  await reserveBytes(work.db, tenantId, declaration.bytes);
  const op = await services.operations.create(
    work,
    {
      tenantId,
      kind: MEDIA_UPLOAD_KIND,
      state: 'receiving',
      input: { upload_id: uploadId, media_id: mediaId } satisfies UploadInput,
      requestId,
    },
    now,
  );
  await work.db
    .insertInto('media')
    .values({
      id: mediaId,
      tenant_id: tenantId,
      state: 'pending',
      kind: kindOf(declaration.content_type),
      filename: storedFilename(declaration),
      source_filename: declaration.source_filename ?? null,
      content_type: declaration.content_type,
      bytes: declaration.bytes,
      sha256: declaration.sha256,
      tag: declaration.tag ?? null,
      width: null,
      height: null,
      duration_ms: null,
      codecs: null,
      revision: 1,
      operation_id: op.id,
      blob_key: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  const urlExpiresAt = now + UPLOAD_URL_TTL_MS;
  await work.db
    .insertInto('media_uploads')
    .values({
      id: uploadId,
      tenant_id: tenantId,
      media_id: mediaId,
      operation_id: op.id,
      object_key: objectKey,
      state: 'declared',
      reserved_bytes: declaration.bytes,
      url_expires_at: urlExpiresAt,
      commit_by: now + UPLOAD_COMMIT_WINDOW_MS,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await services.events.append(
    work,
    {
      tenantId,
      type: 'media.upload_declared',
      message: `upload of ${declaration.bytes} bytes of ${declaration.content_type} declared`,
      resource: { type: 'media', id: mediaId },
      operationId: op.id,
      requestId,
      details: { upload_id: uploadId, content_type: declaration.content_type, bytes: declaration.bytes },
    },
    now,
  );
  const signed = await services.blobs.presignPut({
    key: objectKey,
    bytes: declaration.bytes,
    contentType: declaration.content_type,
    expiresAt: urlExpiresAt,
  });
  return {
    id: uploadId,
    operation: operationView(op),
    upload_url: signed.url,
    method: signed.method,
    headers: signed.headers,
    expires_at: isoTime(signed.expiresAt),
  };
}

export async function findUpload(db: Db | Tx, tenantId: string, id: string): Promise<MediaUploadTable> {
  const row = await db
    .selectFrom('media_uploads')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row) throw problem('not_found', 'upload not found');
  return row;
}

/** Why an upload that is no longer `declared` cannot take a commit. */
export function closedUploadDetail(state: MediaUploadTable['state']): string {
  switch (state) {
    case 'cancelled':
      return 'the upload was cancelled; declare it again';
    case 'expired':
      return 'the upload expired before it was committed; declare it again';
    case 'failed':
      return 'the upload failed; see its operation for the problem, then declare it again';
    default:
      return `the upload is ${state}`;
  }
}

/**
 * Releases the reservation and closes the upload, once (false when it was already closed);
 * runs in the transaction that ends it, and appends the event.
 */
async function closeUpload(
  services: Services,
  work: Work,
  upload: MediaUploadTable,
  state: 'failed' | 'cancelled' | 'expired',
  now: number,
): Promise<boolean> {
  const closed = await work.db
    .updateTable('media_uploads')
    .set({ state, updated_at: now })
    .where('id', '=', upload.id)
    .where('state', 'in', ['declared', 'committed'])
    .executeTakeFirst();
  if (Number(closed.numUpdatedRows) === 0) return false;
  await releaseReservation(work.db, upload.tenant_id, upload.reserved_bytes);
  await work.db
    .updateTable('media')
    .set({ state: 'failed', updated_at: now })
    .where('id', '=', upload.media_id)
    .where('state', '=', 'pending')
    .execute();
  await services.events.append(
    work,
    {
      tenantId: upload.tenant_id,
      type: 'media.upload_failed',
      severity: 'warning',
      message: `upload ${state}; its ${upload.reserved_bytes} reserved bytes are released`,
      resource: { type: 'media', id: upload.media_id },
      operationId: upload.operation_id,
      details: { upload_id: upload.id, state },
    },
    now,
  );
  // The bytes of an upload that will never publish are garbage.
  work.afterCommit(() => void services.blobs.delete(upload.object_key).catch(() => undefined));
  return true;
}

async function uploadOf(db: Db | Tx, op: OperationRow): Promise<MediaUploadTable | undefined> {
  return db.selectFrom('media_uploads').selectAll().where('operation_id', '=', op.id).executeTakeFirst();
}

export function mediaUploadRunner(services: Services): OperationRunner {
  return {
    kind: MEDIA_UPLOAD_KIND,
    receivingSurvivesRestart: true,
    async run(op, control) {
      const upload = await uploadOf(services.store.db, op);
      const media =
        upload &&
        (await services.store.db.selectFrom('media').selectAll().where('id', '=', upload.media_id).executeTakeFirst());
      if (!upload || !media) throw problem('internal_error', 'the upload record is missing');
      const verified = await verifyStoredMedia(
        services.blobs,
        upload.object_key,
        { bytes: media.bytes, sha256: media.sha256, contentType: media.content_type as MediaContentType },
        control.signal,
      );
      return async (work) => {
        // Playlists selecting from all media (or by its tag) re-resolve below; one written at the
        // same moment commits first or reads the media ready (D-453's order: before any event).
        await work.lock(mediaSelectionLock(upload.tenant_id));
        const now = services.clock.now();
        const published = await work.db
          .updateTable('media')
          .set({
            state: 'ready',
            width: verified.width,
            height: verified.height,
            duration_ms: verified.durationMs,
            codecs: verified.codecs,
            blob_key: upload.object_key,
            updated_at: now,
          })
          .where('id', '=', media.id)
          .where('state', '=', 'pending')
          .executeTakeFirst();
        if (Number(published.numUpdatedRows) === 0)
          throw problem('resource_conflict', 'the media is no longer pending');
        await work.db
          .updateTable('media_uploads')
          .set({ state: 'ready', updated_at: now })
          .where('id', '=', upload.id)
          .execute();
        await commitReservation(work.db, upload.tenant_id, upload.reserved_bytes, media.bytes);
        await services.events.append(
          work,
          {
            tenantId: upload.tenant_id,
            type: 'media.ready',
            message: `media ${media.filename} is ready`,
            resource: { type: 'media', id: media.id },
            operationId: op.id,
            requestId: op.request_id ?? undefined,
            details: {
              kind: media.kind,
              content_type: media.content_type as MediaContentType,
              bytes: media.bytes,
              tag: media.tag,
            },
          },
          now,
        );
        await services.references.mediaChanged(work, upload.tenant_id, { mediaId: media.id, tags: [media.tag] }, now);
        return { media_id: media.id };
      };
    },
    async onTerminal(work, op, state, now) {
      const upload = await uploadOf(work.db, op);
      if (upload) await closeUpload(services, work, upload, state, now);
    },
  };
}

/**
 * Accepts a commit whose declaration matched: the operation moves to queued once. A commit of an
 * upload already committed answers with its operation as it is (the verification runs only once).
 */
export async function acceptCommit(
  services: Services,
  work: Work,
  upload: MediaUploadTable,
  now: number,
  requestId: string,
): Promise<OperationRow> {
  // Claimed by compare-and-set: of concurrent commits exactly one moves the upload on (a second
  // waits for the first's row lock where transactions run side by side, then finds it committed).
  const claimed = await work.db
    .updateTable('media_uploads')
    .set({ state: 'committed', updated_at: now })
    .where('id', '=', upload.id)
    .where('state', '=', 'declared')
    .executeTakeFirst();
  if (claimed.numUpdatedRows > 0n) {
    const queued = await services.operations.enqueue(work, upload.operation_id, now);
    if (!queued) throw problem('resource_conflict', 'the upload operation is no longer receiving');
    await services.events.append(
      work,
      {
        tenantId: upload.tenant_id,
        type: 'media.upload_committed',
        message: 'upload committed; verification queued',
        resource: { type: 'media', id: upload.media_id },
        operationId: upload.operation_id,
        requestId,
        details: { upload_id: upload.id },
      },
      now,
    );
  } else {
    const current = await work.db
      .selectFrom('media_uploads')
      .select('state')
      .where('id', '=', upload.id)
      .executeTakeFirstOrThrow();
    if (current.state !== 'committed' && current.state !== 'ready')
      throw problem('resource_conflict', closedUploadDetail(current.state));
  }
  return services.operations.get(work.db, upload.tenant_id, upload.operation_id);
}

/** Housekeeping: uploads never committed in time fail their operation, which releases the reservation. */
export async function expireUploads(services: Services): Promise<number> {
  const now = services.clock.now();
  const due = await services.store.db
    .selectFrom('media_uploads')
    .selectAll()
    .where('state', '=', 'declared')
    .where('commit_by', '<=', now)
    .limit(500)
    .execute();
  let expired = 0;
  for (const upload of due) {
    await services.store.transaction(async (work) => {
      const op = await work.db
        .selectFrom('operations')
        .selectAll()
        .where('id', '=', upload.operation_id)
        .executeTakeFirst();
      const current = await work.db
        .selectFrom('media_uploads')
        .select('state')
        .where('id', '=', upload.id)
        .executeTakeFirst();
      if (!op || current?.state !== 'declared') return;
      // Marked expired first, so the operation's terminal hook finds it closed and releases nothing twice.
      await closeUpload(services, work, upload, 'expired', now);
      await services.operations.fail(
        work,
        op,
        problem('resource_conflict', 'the upload was not committed in time; declare it again'),
        now,
      );
      expired++;
    });
  }
  return expired;
}

/** Why the upload URL of this object key takes no bytes (none waits for them, or it closed), or undefined. */
export async function uploadUrlClosed(db: Db | Tx, objectKey: string): Promise<string | undefined> {
  const upload = await db
    .selectFrom('media_uploads')
    .select('state')
    .where('object_key', '=', objectKey)
    .executeTakeFirst();
  if (!upload) return 'no upload is waiting for these bytes';
  if (upload.state !== 'declared') return `this upload URL can no longer be used: ${closedUploadDetail(upload.state)}`;
  return undefined;
}

/**
 * A commit must repeat the declaration exactly, and a declared upload must have received its bytes;
 * invalid_request or resource_conflict otherwise.
 */
export async function checkCommit(
  services: Services,
  upload: MediaUploadTable,
  commit: { content_type: string; bytes: number; sha256: string },
): Promise<void> {
  const media = await services.store.db
    .selectFrom('media')
    .select(['content_type', 'bytes', 'sha256'])
    .where('id', '=', upload.media_id)
    .executeTakeFirstOrThrow();
  const errors: FieldError[] = (['content_type', 'bytes', 'sha256'] as const)
    .filter((field) => commit[field] !== media[field])
    .map((field) => ({ field, code: 'mismatch', detail: `must equal the declared ${field}` }));
  if (errors.length > 0)
    throw problem('invalid_request', `${errors[0]!.field}: must equal the declaration exactly`, { errors });
  if (upload.state === 'declared' && !(await services.blobs.stat(upload.object_key))) {
    throw problem(
      'resource_conflict',
      'the upload has not received its bytes yet; finish the PUT to upload_url, then commit',
    );
  }
}
