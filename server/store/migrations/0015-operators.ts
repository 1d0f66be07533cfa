import type { Kysely } from 'kysely';
import { column } from '../columns';

// Issue 18, operators: the people who run the installation, each with a bearer of the operator
// realm made on the server host (`npm run operator -- create`). Only the token's hash is stored.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('operators')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('revoked_at', column.millis)
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
