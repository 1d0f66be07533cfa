import type { Kysely } from 'kysely';
import { column } from '../columns';

// Issue 17/18, the feedback inbox: a project's bug reports and feature requests, listed newest
// first per project (and kind) and across all projects by the operators.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('feedback')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('feedback_tenant_kind')
    .on('feedback')
    .columns(['tenant_id', 'kind', 'created_at'])
    .execute();
  await db.schema.createIndex('feedback_created').on('feedback').columns(['created_at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
