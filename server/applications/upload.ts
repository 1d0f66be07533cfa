// Receiving an upload: header rules, the quota reservation and a `receiving` operation first, then
// the body streamed once through the archive scan into a staged release tree, then acceptance
// (application and release rows, revision bump) in one transaction with the idempotency record.
// A rejected archive is still accepted as an upload: its operation fails with the scan's problem.
import type { Readable } from 'node:stream';
import { RELEASE_ENTRY } from '../../sdk/contract/applications';
import type { TenantPrincipal } from '../http/auth';
import { bodyIdleTimeoutMs, guardBodyProgress } from '../http/body-progress';
import { ProblemError, problem } from '../problem';
import { reply, type Reply, type RequestContext } from '../http/route';
import { newId } from '../keys';
import { TERMINAL, type OperationRow } from '../operations/worker';
import { releaseHostLabel } from '../release-host/host-label';
import type { Services } from '../services';
import { expectUpdated, type Work } from '../store/store';
import { reserveBytes } from '../tenants/tenants';
import type { ApplicationTable } from './applications.tables';
import {
  DEFAULT_APPLICATION_NAME,
  UPLOAD_KIND,
  findApplication,
  insertReleaseFiles,
  uploadInput,
  type UploadInput,
} from './applications';
import { COMPRESSED_BYTES_MAX } from './archive-rules';
import { UploadInterrupted, scanArchive, type ScanResult } from './archive-scan';
import { checkArchiveBody, parseUploadHeaders, type DistinctHeaders, type UploadHeaders } from './upload-headers';

type UploadContext = RequestContext<unknown, unknown, TenantPrincipal>;

/**
 * Published when an upload is cancelled: the replica still receiving its body (whichever it is)
 * aborts the scan.
 */
export const uploadCancelChannel = (operationId: string) => `upload-cancelled:${operationId}`;

/** Release trees are fsynced when the database is (MARQUEE_SQLITE_SYNC=FULL): one durability promise. */
export function durableTrees(services: Services): boolean {
  return services.config.sqliteSync === 'FULL';
}

/** POST /api/v1/applications (applicationId undefined) and POST /api/v1/applications/{id}/releases. */
export async function receiveUpload(ctx: UploadContext, applicationId: string | undefined): Promise<Reply> {
  const { services } = ctx;
  const headers = ctx.req.headersDistinct as DistinctHeaders;
  const upload = parseUploadHeaders(headers);
  checkArchiveBody(headers);
  const op = await startUpload(ctx, upload, applicationId);

  const controller = new AbortController();
  const unsubscribe = services.notifier.subscribe(uploadCancelChannel(op.id), () => controller.abort());
  const body = guardBodyProgress(ctx.req, bodyIdleTimeoutMs(services));
  let scanned: ScanResult | undefined;
  let rejection: ProblemError | undefined;
  try {
    const staging = await services.blobs.stageTree(op.id, { durable: durableTrees(services) });
    try {
      scanned = await scanArchive(
        body,
        upload.declaration,
        { add: (ordinal, data, bytes) => staging.add(String(ordinal), data, bytes) },
        controller.signal,
      );
      await staging.finish();
    } catch (error) {
      await staging.abort().catch(() => undefined);
      throw error;
    }
  } catch (error) {
    body.release();
    discardRest(ctx.req);
    if (error instanceof ProblemError && !controller.signal.aborted) {
      rejection = error;
    } else {
      const answer = controller.signal.aborted
        ? problem(
            'resource_conflict',
            `operation ${op.id} was cancelled while the archive was being received; nothing was accepted`,
          )
        : error instanceof UploadInterrupted
          ? problem('invalid_request', error.message, { headers: { Connection: 'close' } })
          : error;
      await abandonUpload(services, op, answer);
      throw answer;
    }
  } finally {
    body.release();
    unsubscribe();
  }

  try {
    return await ctx.commitReply((work) => acceptUpload(ctx, work, op, scanned, rejection));
  } catch (error) {
    await abandonUpload(services, op, error);
    throw error;
  }
}

/**
 * Reads and drops whatever is left of a body the scan stopped reading, so the client can always
 * finish sending and read the answer, whatever the HTTP server does with a partly read body.
 * Nothing is inflated; a body that goes on past the archive limit is cut off.
 */
function discardRest(req: Readable): void {
  if (req.readableEnded || req.destroyed) return;
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > COMPRESSED_BYTES_MAX) req.destroy();
  });
  req.resume();
}

/** Checks the target, reserves the declared bytes and records the `receiving` operation. */
async function startUpload(
  ctx: UploadContext,
  upload: UploadHeaders,
  applicationId: string | undefined,
): Promise<OperationRow> {
  const { services, principal } = ctx;
  return services.store.transaction(async (work) => {
    if (applicationId !== undefined) {
      const app = await findApplication(work.db, principal.tenantId, applicationId);
      ctx.checkRevision(app.revision);
      refuseRename(app, upload.name);
    }
    await reserveBytes(work.db, principal.tenantId, upload.declaration.expandedBytes);
    const input: UploadInput = {
      application_id: applicationId ?? newId('app'),
      release_id: newId('rel'),
      new_application: applicationId === undefined,
      name: upload.name?.value ?? null,
      sdk_version: upload.sdkVersion,
      sha256: upload.declaration.sha256,
      expanded_bytes: upload.declaration.expandedBytes,
      file_count: upload.declaration.fileCount,
      reserved_bytes: upload.declaration.expandedBytes,
    };
    return services.operations.create(
      work,
      {
        tenantId: principal.tenantId,
        kind: UPLOAD_KIND,
        state: 'receiving',
        input: { ...input },
        requestId: ctx.requestId,
      },
      ctx.now,
    );
  });
}

/** spec: neither name header may rename an application on a release update (the same name is no rename). */
function refuseRename(app: ApplicationTable, name: UploadHeaders['name']): void {
  if (name !== undefined && name.value !== app.name) {
    throw problem(
      'invalid_request',
      `${name.header}: a release upload cannot rename the application; its name stays ${JSON.stringify(app.name)}`,
      {
        errors: [
          { field: name.header, code: 'rename_refused', detail: 'a release upload cannot rename the application' },
        ],
      },
    );
  }
}

async function acceptUpload(
  ctx: UploadContext,
  work: Work,
  op: OperationRow,
  scanned: ScanResult | undefined,
  rejection: ProblemError | undefined,
): Promise<Reply> {
  const { services, now } = ctx;
  const input = uploadInput(op);
  const current = await work.db.selectFrom('operations').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
  if (current.state !== 'receiving') {
    throw problem(
      'resource_conflict',
      `operation ${op.id} was cancelled while the archive was being received; nothing was accepted`,
    );
  }
  let app: ApplicationTable;
  if (input.new_application) {
    app = {
      id: input.application_id,
      tenant_id: op.tenant_id,
      name: input.name ?? DEFAULT_APPLICATION_NAME,
      revision: 1,
      state: 'active',
      latest_ready_release_id: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await work.db.insertInto('applications').values(app).execute();
  } else {
    const existing = await findApplication(work.db, op.tenant_id, input.application_id);
    ctx.checkRevision(existing.revision);
    app = { ...existing, revision: existing.revision + 1, updated_at: now };
    // spec: a release upload increments the application revision on acceptance.
    expectUpdated(
      await work.db
        .updateTable('applications')
        .set({ revision: app.revision, updated_at: now })
        .where('id', '=', app.id)
        .where('revision', '=', existing.revision)
        .executeTakeFirst(),
      'application',
    );
  }
  await work.db
    .insertInto('releases')
    .values({
      id: input.release_id,
      tenant_id: op.tenant_id,
      application_id: app.id,
      state: 'pending',
      host_label: releaseHostLabel(input.release_id),
      operation_id: op.id,
      sdk_version: input.sdk_version,
      archive_sha256: input.sha256,
      expanded_bytes: input.expanded_bytes,
      file_count: input.file_count,
      entry: RELEASE_ENTRY,
      accepted_revision: app.revision,
      created_at: now,
      published_at: null,
      deleted_at: null,
    })
    .execute();
  await services.events.append(
    work,
    {
      tenantId: op.tenant_id,
      type: input.new_application ? 'application.created' : 'application.release_accepted',
      message: input.new_application
        ? `application "${app.name}" created by an upload`
        : `a new release of application "${app.name}" was uploaded`,
      resource: { type: 'application', id: app.id },
      requestId: ctx.requestId,
      operationId: op.id,
      details: { release_id: input.release_id, operation_id: op.id, revision: app.revision },
    },
    now,
  );
  if (rejection || !scanned) {
    await services.operations.fail(
      work,
      current,
      rejection ?? problem('internal_error', 'the archive was not read'),
      now,
    );
  } else {
    await insertReleaseFiles(work.db, input.release_id, scanned.files);
    await services.operations.enqueue(work, op.id, now);
  }
  return reply.accepted(
    { id: app.id, release_id: input.release_id, operation_id: op.id },
    { headers: { Location: `/api/v1/operations/${op.id}` } },
  );
}

/** Fails an upload that was never accepted (its reservation and staged files go with it). */
async function abandonUpload(services: Services, op: OperationRow, reason: unknown): Promise<void> {
  const cause =
    reason instanceof ProblemError
      ? reason
      : problem('internal_error', 'the upload could not be accepted; see the server log for its operation id');
  try {
    await services.store.transaction(async (work) => {
      const current = await work.db.selectFrom('operations').selectAll().where('id', '=', op.id).executeTakeFirst();
      if (!current || TERMINAL.has(current.state)) return;
      await services.operations.fail(work, current, cause, services.clock.now());
    });
  } catch (error) {
    // A server stopping mid-upload cannot record it; the next start fails `receiving` operations.
    services.logger.warn({ err: error, operation_id: op.id }, 'an abandoned upload could not be marked failed');
  }
  await services.blobs.discardTree(op.id).catch(() => undefined);
}
