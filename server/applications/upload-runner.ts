// The `application.upload` operation after acceptance: the validated tree is already staged, so the
// worker moves it under the release prefix and publishes in the fenced finalizing transaction; once
// that committed, the release's webapp package is queued for building (so no request builds one).
// Failure and cancel give the reservation back and remove every byte of the release.
import { problem } from '../problem';
import type { OperationRow, OperationRunner, RunControl } from '../operations/worker';
import type { Services } from '../services';
import { releaseReservation } from '../tenants/tenants';
import { UPLOAD_KIND, publishRelease, releaseFileKey, releasePrefix, uploadInput } from './applications';
import { durableTrees, uploadCancelChannel } from './upload';

export interface UploadRunnerHooks {
  /** Runs before the tree is moved (tests hold an operation `running` here). */
  beforePublish?: (op: OperationRow, control: RunControl) => Promise<void>;
}

export function uploadRunner(services: Services, hooks: UploadRunnerHooks = {}): OperationRunner {
  return {
    kind: UPLOAD_KIND,
    // A body that was streaming when the server stopped is gone: the upload must be sent again.
    receivingSurvivesRestart: false,

    async run(op, control) {
      const input = uploadInput(op);
      await hooks.beforePublish?.(op, control);
      control.signal.throwIfAborted();
      if (await services.blobs.hasStagedTree(op.id)) {
        await services.blobs.publishTree(op.id, releasePrefix(input.release_id), { durable: durableTrees(services) });
      } else if (!(await services.blobs.stat(releaseFileKey(input.release_id, 0)))) {
        // Neither staged nor moved by an earlier attempt: nothing left to publish.
        throw problem('internal_error', 'the staged files of this upload are gone; upload the archive again');
      }
      return async (work) => {
        const result = await publishRelease(work, services, op, input);
        // Deflating up to 250 MiB takes seconds to minutes: after publication, not inside it.
        work.afterCommit(() => services.packageBuilds.request({ id: input.release_id, tenant_id: op.tenant_id }));
        return { ...result };
      };
    },

    async onTerminal(work, op, state) {
      const input = uploadInput(op);
      await work.db
        .updateTable('releases')
        .set({ state: 'failed' })
        .where('id', '=', input.release_id)
        .where('state', '=', 'pending')
        .execute();
      await work.db.deleteFrom('release_files').where('release_id', '=', input.release_id).execute();
      await releaseReservation(work.db, op.tenant_id, input.reserved_bytes);
      work.afterCommit(() => {
        if (state === 'cancelled') services.notifier.publish(uploadCancelChannel(op.id));
        void removeUnpublished(services, op.id, input.release_id);
      });
    },

    // An interrupted run keeps its files so the next attempt can publish them; only a run that
    // ended for good (failed, cancelled) leaves garbage, for instance a tree it moved after a cancel.
    async discard(op) {
      const row = await services.store.db
        .selectFrom('operations')
        .select('state')
        .where('id', '=', op.id)
        .executeTakeFirst();
      if (row?.state === 'failed' || row?.state === 'cancelled')
        await removeUnpublished(services, op.id, uploadInput(op).release_id);
    },
  };
}

/** Removes the staged tree and, unless the release is ready, anything under its prefix. */
export async function removeUnpublished(services: Services, operationId: string, releaseId: string): Promise<void> {
  try {
    await services.blobs.discardTree(operationId);
    const release = await services.store.db
      .selectFrom('releases')
      .select('state')
      .where('id', '=', releaseId)
      .executeTakeFirst();
    if (release?.state !== 'ready') await services.blobs.deletePrefix(releasePrefix(releaseId));
  } catch (error) {
    services.logger.warn({ err: error, operation_id: operationId }, 'files of an unpublished release were not removed');
  }
}
