// Application key/value storage: one store per application, shared by the owner (control plane)
// and the application's placements (runtime plane). Values are bytes (sent as base64), each key
// has its own revision, writes are conditional (create without If-Match, update and delete with
// the current revision), entries count against the content quota, and every change is an event.
import crypto from 'node:crypto';
import { z } from 'zod';
import {
  KV_LIST_CURSOR_MAX,
  KV_LIST_MAX_ITEMS,
  KV_MAX_ENTRIES_PER_APPLICATION,
  kvContentTypeProblem,
  kvKeyProblem,
  kvValueProblem,
  type KVEntry,
  type KVList,
  type KVSummary,
} from '../../sdk/contract/kv';
import { isoTime } from '../clock';
import { invalidField, problem } from '../problem';
import type { Services } from '../services';
import { greatest } from '../store/portable-sql';
import type { Db, Tx, Work } from '../store/store';
import { commitReservation, releaseUsedBytes, reserveBytes } from '../tenants/tenants';
import type { KvEntryTable } from './kv.tables';

/**
 * A deleted key's tombstone is kept this long, so its revisions continue if it is written again.
 * When it goes, the application's revision floor takes over (a new key starts above every pruned
 * tombstone), so a revision never repeats for a key and a stale If-Match can never match.
 */
export const KV_TOMBSTONE_RETENTION_MS = 24 * 3600_000;

const refine = (why: (v: unknown) => string | null) => (value: unknown, ctx: z.RefinementCtx) => {
  const problem = why(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
};

/** KVWrite: both members required (reference contract). */
export const KVWriteBody = z.strictObject({
  value_base64: z.string().superRefine(refine(kvValueProblem)),
  content_type: z.string().superRefine(refine(kvContentTypeProblem)),
});
export type KVWriteBody = z.infer<typeof KVWriteBody>;

/** Who changes an entry, for its event: the owner's bearer, or a placement on a screen. */
export interface KvWriter {
  tenantId: string;
  applicationId: string;
  requestId: string;
  screenId?: string;
}

/** A key from the path, or invalid_request naming `key`. */
export function kvKeyOf(raw: string | undefined): string {
  const why = kvKeyProblem(raw);
  if (why) throw invalidField('key', why);
  return raw!;
}

function keyBytes(key: string): number {
  return Buffer.byteLength(key, 'utf8');
}

function entryView(row: KvEntryTable): KVEntry {
  return {
    application_id: row.application_id,
    key: row.key,
    value_base64: (row.value ?? Buffer.alloc(0)).toString('base64'),
    content_type: row.content_type,
    bytes: row.bytes,
    sha256: row.sha256,
    revision: row.revision,
  };
}

function summaryView(row: Omit<KvEntryTable, 'value'>): KVSummary {
  return {
    application_id: row.application_id,
    key: row.key,
    content_type: row.content_type,
    bytes: row.bytes,
    sha256: row.sha256,
    revision: row.revision,
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
}

async function findRow(
  db: Db | Tx,
  tenantId: string,
  applicationId: string,
  key: string,
): Promise<KvEntryTable | undefined> {
  return db
    .selectFrom('kv_entries')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('key', '=', key)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

export async function readEntry(db: Db | Tx, tenantId: string, applicationId: string, key: string): Promise<KVEntry> {
  const row = await findRow(db, tenantId, applicationId, key);
  if (!row || row.deleted_at !== null) throw problem('not_found', 'no such key');
  return entryView(row);
}

/** A page of live entries in UTF-8 byte order of their keys (every store compares text bytewise). */
export async function listEntries(
  db: Db | Tx,
  tenantId: string,
  applicationId: string,
  cursor: string | undefined,
): Promise<KVList> {
  let q = db
    .selectFrom('kv_entries')
    .select([
      'application_id',
      'key',
      'tenant_id',
      'content_type',
      'bytes',
      'sha256',
      'revision',
      'created_at',
      'updated_at',
      'deleted_at',
    ])
    .where('application_id', '=', applicationId)
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null);
  if (cursor !== undefined) q = q.where('key', '>', decodeCursor(cursor));
  const rows = await q
    .orderBy('key')
    .limit(KV_LIST_MAX_ITEMS + 1)
    .execute();
  const page = rows.slice(0, KV_LIST_MAX_ITEMS);
  return {
    items: page.map(summaryView),
    next_cursor: rows.length > KV_LIST_MAX_ITEMS ? Buffer.from(page.at(-1)!.key).toString('base64url') : null,
  };
}

const CURSOR_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${KV_LIST_CURSOR_MAX}}$`);

function decodeCursor(cursor: string): string {
  const key = CURSOR_PATTERN.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (kvKeyProblem(key) !== null) throw invalidField('cursor', 'pass next_cursor unchanged');
  return key;
}

/**
 * Creates or updates one entry. Without If-Match it only creates: an existing key answers
 * revision_conflict with its current revision. With If-Match it only updates that revision.
 */
export async function writeEntry(
  services: Services,
  work: Work,
  writer: KvWriter,
  key: string,
  body: KVWriteBody,
  ifMatch: number | undefined,
  now: number,
): Promise<KVEntry> {
  const value = Buffer.from(body.value_base64, 'base64');
  if (value.toString('base64') !== body.value_base64)
    throw invalidField(
      'value_base64',
      'must be canonical standard base64 (padding and trailing bits as an encoder writes them)',
    );
  // The key count, the revision floor and the quota delta are read, then written: one writer per
  // application at a time where transactions run side by side.
  await work.lock(`kv:${writer.applicationId}`);
  const existing = await findRow(work.db, writer.tenantId, writer.applicationId, key);
  const live = existing !== undefined && existing.deleted_at === null ? existing : undefined;
  if (live) {
    if (ifMatch === undefined) {
      throw problem('revision_conflict', `key exists at revision ${live.revision}; send If-Match with it to update`, {
        current_revision: live.revision,
      });
    }
    if (ifMatch !== live.revision)
      throw problem('revision_conflict', `If-Match "${ifMatch}" is stale; the key is at revision ${live.revision}`, {
        current_revision: live.revision,
      });
  } else {
    // RFC 9110 (13.1.1): If-Match is false when there is no current representation, so 412, not
    // 404: the precondition is what failed. It names no current_revision because there is none.
    if (ifMatch !== undefined) {
      throw problem('revision_conflict', 'the key does not exist; create it without If-Match', {
        errors: [{ field: 'If-Match', code: 'not_found', detail: 'the key has no current revision' }],
      });
    }
    const count = await work.db
      .selectFrom('kv_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('application_id', '=', writer.applicationId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= KV_MAX_ENTRIES_PER_APPLICATION) {
      throw problem(
        'quota_exceeded',
        `an application holds at most ${KV_MAX_ENTRIES_PER_APPLICATION} keys; delete some first`,
      );
    }
  }

  // Quota: value and key bytes, counted as used content bytes.
  const before = live ? live.bytes + keyBytes(key) : 0;
  const delta = value.length + keyBytes(key) - before;
  if (delta > 0) {
    await reserveBytes(work.db, writer.tenantId, delta);
    await commitReservation(work.db, writer.tenantId, delta, delta);
  } else if (delta < 0) {
    await releaseUsedBytes(work.db, writer.tenantId, -delta);
  }

  const row: KvEntryTable = {
    application_id: writer.applicationId,
    key,
    tenant_id: writer.tenantId,
    value,
    content_type: body.content_type,
    bytes: value.length,
    sha256: crypto.createHash('sha256').update(value).digest('hex'),
    revision: (existing?.revision ?? (await revisionFloor(work.db, writer.applicationId))) + 1,
    created_at: live ? live.created_at : now,
    updated_at: now,
    deleted_at: null,
  };
  await work.db
    .insertInto('kv_entries')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['application_id', 'key']).doUpdateSet({
        value: row.value,
        content_type: row.content_type,
        bytes: row.bytes,
        sha256: row.sha256,
        revision: row.revision,
        created_at: row.created_at,
        updated_at: now,
        deleted_at: null,
      }),
    )
    .execute();
  await appendKvEvent(services, work, writer, live ? 'kv.updated' : 'kv.created', row, now);
  return entryView(row);
}

/** Deletes the entry at exactly revision `ifMatch` (the tombstone keeps the next revision). */
export async function deleteEntry(
  services: Services,
  work: Work,
  writer: KvWriter,
  key: string,
  ifMatch: number,
  now: number,
): Promise<void> {
  await work.lock(`kv:${writer.applicationId}`);
  const existing = await findRow(work.db, writer.tenantId, writer.applicationId, key);
  if (!existing || existing.deleted_at !== null) throw problem('not_found', 'no such key');
  if (ifMatch !== existing.revision) {
    throw problem('revision_conflict', `If-Match "${ifMatch}" is stale; the key is at revision ${existing.revision}`, {
      current_revision: existing.revision,
    });
  }
  const tombstone = {
    value: null,
    bytes: 0,
    sha256: '',
    revision: existing.revision + 1,
    updated_at: now,
    deleted_at: now,
  };
  await work.db
    .updateTable('kv_entries')
    .set(tombstone)
    .where('application_id', '=', writer.applicationId)
    .where('key', '=', key)
    .execute();
  await releaseUsedBytes(work.db, writer.tenantId, existing.bytes + keyBytes(key));
  await appendKvEvent(services, work, writer, 'kv.deleted', { ...existing, ...tombstone }, now);
}

/** The highest revision a pruned tombstone of the application reached (0 when none was pruned). */
async function revisionFloor(db: Db | Tx, applicationId: string): Promise<number> {
  const row = await db
    .selectFrom('kv_revision_floors')
    .select('revision')
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
  return row?.revision ?? 0;
}

async function appendKvEvent(
  services: Services,
  work: Work,
  writer: KvWriter,
  type: 'kv.created' | 'kv.updated' | 'kv.deleted',
  row: KvEntryTable,
  now: number,
): Promise<void> {
  const verb = type === 'kv.deleted' ? 'deleted' : type === 'kv.created' ? 'created' : 'updated';
  await services.events.append(
    work,
    {
      tenantId: writer.tenantId,
      type,
      message: `key ${JSON.stringify(row.key.slice(0, 64))} ${verb}${writer.screenId ? ' by a screen' : ''}`,
      resource: { type: 'application', id: writer.applicationId },
      ...(writer.screenId ? { screenId: writer.screenId } : {}),
      details: { key: row.key, revision: row.revision, bytes: row.bytes, via: writer.screenId ? 'runtime' : 'owner' },
      requestId: writer.requestId,
    },
    now,
  );
}

/**
 * Housekeeping: tombstones past their retention go, and so do the entries of deleted applications
 * (their bytes return to the quota).
 */
export async function pruneKv(services: Services, now: number): Promise<void> {
  const { store } = services;
  const cutoff = now - KV_TOMBSTONE_RETENTION_MS;
  await store.transaction(async ({ db }) => {
    // Raise each application's floor to the tombstones that go, in the same transaction.
    const pruned = await db
      .selectFrom('kv_entries')
      .select(['application_id', 'tenant_id', (eb) => eb.fn.max<number>('revision').as('revision')])
      .where('deleted_at', '<', cutoff)
      .groupBy(['application_id', 'tenant_id'])
      .execute();
    for (const { application_id, tenant_id, revision } of pruned) {
      await db
        .insertInto('kv_revision_floors')
        .values({ application_id, tenant_id, revision })
        .onConflict((oc) =>
          oc.column('application_id').doUpdateSet({
            revision: (eb) => greatest(eb.ref('kv_revision_floors.revision'), eb.ref('excluded.revision')),
          }),
        )
        .execute();
    }
    await db.deleteFrom('kv_entries').where('deleted_at', '<', cutoff).execute();
  });
  const orphans = await store.db
    .selectFrom('kv_entries')
    .innerJoin('applications', 'applications.id', 'kv_entries.application_id')
    .select(['kv_entries.application_id', 'kv_entries.tenant_id'])
    .where('applications.deleted_at', 'is not', null)
    .groupBy(['kv_entries.application_id', 'kv_entries.tenant_id'])
    .execute();
  // Floors of deleted applications whose entries were all pruned already.
  await store.db
    .deleteFrom('kv_revision_floors')
    .where('application_id', 'in', (eb) =>
      eb.selectFrom('applications').select('id').where('deleted_at', 'is not', null),
    )
    .execute();
  for (const orphan of orphans) {
    await store.transaction(async ({ db }) => {
      const rows = await db
        .selectFrom('kv_entries')
        .select(['key', 'bytes', 'deleted_at'])
        .where('application_id', '=', orphan.application_id)
        .execute();
      const bytes = rows.filter((r) => r.deleted_at === null).reduce((sum, r) => sum + r.bytes + keyBytes(r.key), 0);
      await db.deleteFrom('kv_entries').where('application_id', '=', orphan.application_id).execute();
      await releaseUsedBytes(db, orphan.tenant_id, bytes);
    });
  }
}
