import type { Kysely } from 'kysely';
import { column } from '../columns';

// Issue 17, browser links: a TV's browser asks for a setup code (no JavaScript needed), an agent
// claims the code, and the browser continues to the screen's provisioning link. The delivery (the
// provisioning URL, a credential) is kept encrypted only until the browser collected it or its
// ten-minute window closed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('browser_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('tenant_id', 'text')
    .addColumn('screen_id', 'text')
    .addColumn('claimed_at', column.millis)
    .addColumn('delivery_expires_at', column.millis)
    .addColumn('delivery', 'text')
    .execute();
  await db.schema.createIndex('browser_links_ip').on('browser_links').columns(['ip', 'created_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
