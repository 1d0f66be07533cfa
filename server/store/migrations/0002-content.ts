import type { Kysely } from 'kysely';
import { column } from '../columns';

// Applications, their immutable releases, and media: the content that placements reference.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('applications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('revision', column.count, (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('latest_ready_release_id', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .addColumn('deleted_at', column.millis)
    .execute();
  await db.schema.createIndex('applications_tenant').on('applications').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('releases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('host_label', 'text', (c) => c.notNull().unique())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('sdk_version', 'text')
    .addColumn('archive_sha256', 'text', (c) => c.notNull())
    .addColumn('expanded_bytes', column.count, (c) => c.notNull())
    .addColumn('file_count', column.bounded, (c) => c.notNull())
    .addColumn('entry', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('published_at', column.millis)
    .addColumn('deleted_at', column.millis)
    .execute();
  await db.schema
    .createIndex('releases_application')
    .on('releases')
    .columns(['application_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('media')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('source_filename', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('bytes', column.count, (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('tag', 'text')
    .addColumn('width', column.bounded)
    .addColumn('height', column.bounded)
    .addColumn('duration_ms', column.millis)
    .addColumn('codecs', 'text')
    .addColumn('revision', column.count, (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .addColumn('deleted_at', column.millis)
    .execute();
  await db.schema.createIndex('media_tenant').on('media').columns(['tenant_id', 'created_at']).execute();
  await db.schema.createIndex('media_tenant_tag').on('media').columns(['tenant_id', 'tag']).execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
