// Applications and their immutable releases: reads, the Application view, publication of a release
// in the upload operation's finalizing transaction, and delete with tombstones.
import type { Application, ApplicationState, ApplicationUploadResult } from '../../sdk/contract/applications';
import { isoTime } from '../clock';
import { problem } from '../problem';
import type { Services } from '../services';
import { expectUpdated, type Db, type Tx, type Work } from '../store/store';
import { commitReservation, releaseUsedBytes } from '../tenants/tenants';
import type { ApplicationTable, ReleaseTable } from './applications.tables';
import type { ReleaseFile } from './archive-scan';

export const UPLOAD_KIND = 'application.upload';
/** Name of an application uploaded without a name header. */
export const DEFAULT_APPLICATION_NAME = 'Untitled application';
/** Rows per INSERT of a release's file index (well under SQLite's and PostgreSQL's parameter limits). */
const FILE_ROWS_PER_INSERT = 500;

export const releasePrefix = (releaseId: string) => `releases/${releaseId}`;
export const releaseFileKey = (releaseId: string, ordinal: number) => `${releasePrefix(releaseId)}/${ordinal}`;

/** What an upload operation carries from acceptance to publication. */
export interface UploadInput {
  application_id: string;
  release_id: string;
  new_application: boolean;
  name: string | null;
  sdk_version: string | null;
  sha256: string;
  expanded_bytes: number;
  file_count: number;
  /** Bytes reserved against the content quota while the upload is in flight. */
  reserved_bytes: number;
}

export function uploadInput(op: { input: string }): UploadInput {
  return JSON.parse(op.input) as UploadInput;
}

/** The live application, or not_found (unknown, another tenant's, or tombstoned). */
export async function findApplication(db: Db | Tx, tenantId: string, id: string): Promise<ApplicationTable> {
  const row = await db
    .selectFrom('applications')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw problem('not_found', 'application not found');
  return row;
}

function selectApplications(db: Db | Tx, tenantId: string) {
  return db
    .selectFrom('applications as a')
    .selectAll('a')
    .select((eb) =>
      eb
        .selectFrom('releases as r')
        .select('r.state')
        .whereRef('r.application_id', '=', 'a.id')
        .orderBy('r.accepted_revision', 'desc')
        .limit(1)
        .as('newest_release_state'),
    )
    .where('a.tenant_id', '=', tenantId)
    .where('a.deleted_at', 'is', null);
}

type ApplicationRow = ApplicationTable & { newest_release_state: ReleaseTable['state'] | null };

export function applicationView(row: ApplicationRow): Application {
  const state: ApplicationState = row.latest_ready_release_id
    ? 'ready'
    : row.newest_release_state === 'pending'
      ? 'pending'
      : 'failed';
  const view: Application = {
    id: row.id,
    name: row.name,
    revision: row.revision,
    state,
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
  if (row.latest_ready_release_id) {
    view.latest_ready_release = row.latest_ready_release_id;
    view.release_id = row.latest_ready_release_id;
  }
  return view;
}

export async function getApplication(db: Db | Tx, tenantId: string, id: string): Promise<Application> {
  const row = await selectApplications(db, tenantId).where('a.id', '=', id).executeTakeFirst();
  if (!row) throw problem('not_found', 'application not found');
  return applicationView(row);
}

export async function listApplications(db: Db | Tx, tenantId: string): Promise<Application[]> {
  const rows = await selectApplications(db, tenantId).orderBy('a.created_at').orderBy('a.id').execute();
  return rows.map(applicationView);
}

/** Records where each file of a release is stored; written when the upload is accepted. */
export async function insertReleaseFiles(tx: Tx, releaseId: string, files: ReleaseFile[]): Promise<void> {
  for (let i = 0; i < files.length; i += FILE_ROWS_PER_INSERT) {
    const rows = files
      .slice(i, i + FILE_ROWS_PER_INSERT)
      .map((f) => ({ release_id: releaseId, path: f.path, ordinal: f.ordinal, bytes: f.bytes }));
    await tx.insertInto('release_files').values(rows).execute();
  }
}

/**
 * Publication, in the upload operation's fenced finalizing transaction: the release becomes
 * ready, the application's latest ready release moves forward (bumping its revision) unless a
 * newer release is already ready, the reservation becomes used bytes, and the event is appended.
 */
export async function publishRelease(
  work: Work,
  services: Services,
  op: { id: string; tenant_id: string },
  input: UploadInput,
): Promise<ApplicationUploadResult> {
  const now = services.clock.now();
  const app = await work.db
    .selectFrom('applications')
    .selectAll()
    .where('id', '=', input.application_id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!app) throw problem('resource_conflict', 'the application was deleted before this release could be published');
  const release = await work.db
    .selectFrom('releases')
    .selectAll()
    .where('id', '=', input.release_id)
    .executeTakeFirst();
  if (release?.state !== 'pending') throw problem('resource_conflict', 'the release is no longer pending publication');
  await work.db
    .updateTable('releases')
    .set({ state: 'ready', published_at: now })
    .where('id', '=', release.id)
    .execute();

  const current = app.latest_ready_release_id
    ? await work.db
        .selectFrom('releases')
        .select('accepted_revision')
        .where('id', '=', app.latest_ready_release_id)
        .executeTakeFirst()
    : undefined;
  const becomesLatest = !current || current.accepted_revision < release.accepted_revision;
  if (becomesLatest) {
    // Compare-and-set on the revision read: another publication of this application that committed
    // since (another worker) makes this run again, and the newer of the two stays the latest.
    expectUpdated(
      await work.db
        .updateTable('applications')
        .set({ latest_ready_release_id: release.id, revision: app.revision + 1, updated_at: now })
        .where('id', '=', app.id)
        .where('revision', '=', app.revision)
        .executeTakeFirst(),
      'application',
    );
  }
  await commitReservation(work.db, op.tenant_id, input.reserved_bytes, release.expanded_bytes);
  await services.events.append(
    work,
    {
      tenantId: op.tenant_id,
      type: 'application.published',
      message: `release ${release.id} of application "${app.name}" is ready`,
      resource: { type: 'application', id: app.id },
      operationId: op.id,
      details: {
        application_id: app.id,
        release_id: release.id,
        latest_ready_release: becomesLatest ? release.id : app.latest_ready_release_id,
      },
    },
    now,
  );
  return { application_id: app.id, release_id: release.id };
}

/**
 * Tombstones the application and every release in one transaction: uploads still in flight are
 * cancelled, used bytes are given back, and the files are removed once the transaction committed.
 */
export async function deleteApplication(
  work: Work,
  services: Services,
  app: ApplicationTable,
  now: number,
  requestId: string,
): Promise<void> {
  const releases = await work.db
    .selectFrom('releases')
    .select(['id', 'state', 'expanded_bytes', 'operation_id'])
    .where('application_id', '=', app.id)
    .execute();
  for (const release of releases) {
    if (release.state !== 'pending') continue;
    const op = await work.db
      .selectFrom('operations')
      .select('state')
      .where('id', '=', release.operation_id)
      .executeTakeFirst();
    if (op && op.state !== 'succeeded' && op.state !== 'failed' && op.state !== 'cancelled') {
      await services.operations.cancel(work, app.tenant_id, release.operation_id, now, requestId);
    }
  }
  const usedBytes = releases.filter((r) => r.state === 'ready').reduce((sum, r) => sum + r.expanded_bytes, 0);
  const releaseIds = releases.map((r) => r.id);
  if (releaseIds.length > 0) {
    await work.db
      .updateTable('releases')
      .set({ state: 'deleted', deleted_at: now })
      .where('id', 'in', releaseIds)
      .execute();
    await work.db.deleteFrom('release_files').where('release_id', 'in', releaseIds).execute();
    await work.db.deleteFrom('launch_tickets').where('release_id', 'in', releaseIds).execute();
    // Packages go with their files (a build still queued records none: it checks the release).
    await work.db.deleteFrom('release_packages').where('release_id', 'in', releaseIds).execute();
  }
  expectUpdated(
    await work.db
      .updateTable('applications')
      .set({
        state: 'deleted',
        deleted_at: now,
        updated_at: now,
        revision: app.revision + 1,
        latest_ready_release_id: null,
      })
      .where('id', '=', app.id)
      .where('revision', '=', app.revision)
      .executeTakeFirst(),
    'application',
  );
  await releaseUsedBytes(work.db, app.tenant_id, usedBytes);
  await services.events.append(
    work,
    {
      tenantId: app.tenant_id,
      type: 'application.deleted',
      message: `application "${app.name}" and its ${releases.length} release(s) were deleted`,
      resource: { type: 'application', id: app.id },
      requestId,
      details: { release_ids: releaseIds },
    },
    now,
  );
  // Playlists that name the application or its releases become unavailable in the same transaction.
  await services.references.applicationChanged(work, app.tenant_id, app.id, now);
  work.afterCommit(() => {
    for (const id of releaseIds) {
      services.blobs
        .deletePrefix(releasePrefix(id))
        .catch((error) => services.logger.warn({ err: error, release_id: id }, 'release files were not removed'));
    }
  });
}

/** The ready release a release host label names (its id and tenant), or undefined. */
export async function readyReleaseAt(
  db: Db | Tx,
  hostLabel: string,
): Promise<{ id: string; tenant_id: string } | undefined> {
  return db
    .selectFrom('releases')
    .select(['id', 'tenant_id'])
    .where('host_label', '=', hostLabel)
    .where('state', '=', 'ready')
    .executeTakeFirst();
}

/** A file of the release's index by its normalized path (its blob ordinal and size), or undefined. */
export async function releaseFile(
  db: Db | Tx,
  releaseId: string,
  path: string,
): Promise<{ ordinal: number; bytes: number } | undefined> {
  return db
    .selectFrom('release_files')
    .select(['ordinal', 'bytes'])
    .where('release_id', '=', releaseId)
    .where('path', '=', path)
    .executeTakeFirst();
}
