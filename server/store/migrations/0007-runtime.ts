import type { Kysely } from 'kysely';
import { binaryColumn, column } from '../columns';
import type { Engine } from '../driver';

// The runtime plane: minted manifests and what they refer to, each screen's active manifest,
// normalized release packages, playback aggregates, application key/value entries, and the time a
// screen's paired player was last seen online.
export async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('runtime_manifests')
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('manifest_revision', column.count, (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('has_capabilities', column.flag, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('superseded_at', column.millis)
    .addPrimaryKeyConstraint('runtime_manifests_pk', ['screen_id', 'manifest_revision'])
    .execute();
  await db.schema.createIndex('runtime_manifests_superseded').on('runtime_manifests').column('superseded_at').execute();

  await db.schema
    .createTable('runtime_manifest_content')
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('manifest_revision', column.count, (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('runtime_manifest_content_pk', ['screen_id', 'manifest_revision', 'kind', 'ref'])
    .execute();
  await db.schema
    .createIndex('runtime_manifest_content_ref')
    .on('runtime_manifest_content')
    .columns(['tenant_id', 'kind', 'ref'])
    .execute();

  await db.schema
    .createTable('screen_runtime_state')
    .addColumn('screen_id', 'text', (c) => c.primaryKey().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('active_manifest_revision', column.count, (c) => c.notNull())
    .addColumn('activated_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('release_packages')
    .addColumn('release_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('bytes', column.count, (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('playback_daily')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('media_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('play_count', column.count, (c) => c.notNull())
    .addColumn('last_page_id', 'text', (c) => c.notNull())
    .addColumn('last_manifest_revision', 'text', (c) => c.notNull())
    .addColumn('first_started_at', column.millis, (c) => c.notNull())
    .addColumn('last_started_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('playback_daily_pk', ['screen_id', 'media_id', 'day'])
    .execute();
  await db.schema.createIndex('playback_daily_tenant').on('playback_daily').columns(['tenant_id', 'day']).execute();

  await db.schema
    .createTable('kv_entries')
    .addColumn('application_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('value', binaryColumn(engine))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('bytes', column.count, (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('revision', column.count, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .addColumn('deleted_at', column.millis)
    .addPrimaryKeyConstraint('kv_entries_pk', ['application_id', 'key'])
    .execute();
  await db.schema.createIndex('kv_entries_deleted').on('kv_entries').column('deleted_at').execute();

  await db.schema.alterTable('screens').addColumn('last_online_at', column.millis).execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
