import { sql, type Kysely } from 'kysely';
import { column } from '../columns';

// Issue 18, agent installations: every project bearer is an agent installation (the one enrollment
// issued, and each one connected since), and agent connections wait for a member's approval. The
// project bearers that exist already become agents named after the enrollment's default.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique().references('credentials.id'))
    .addColumn('connection_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('agent_type', 'text', (c) => c.notNull())
    .addColumn('platform', 'text')
    .addColumn('version', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('activated_at', column.millis)
    .addColumn('revoked_at', column.millis)
    .addColumn('delivery_expires_at', column.millis)
    .execute();
  await db.schema.createIndex('agents_tenant').on('agents').columns(['tenant_id', 'state']).execute();
  await sql`
    INSERT INTO agents (id, tenant_id, credential_id, connection_id, name, agent_type, platform, version, state,
                        created_at, activated_at, revoked_at, delivery_expires_at)
    SELECT 'agt_' || substr(id, 6), tenant_id, id, NULL, 'Marquee CLI', 'cli', NULL, NULL,
           CASE WHEN status = 'active' THEN 'active' ELSE 'revoked' END,
           created_at, created_at, revoked_at, NULL
    FROM credentials WHERE kind = 'project'
  `.execute(db);

  await db.schema
    .createTable('agent_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_code', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('agent_type', 'text', (c) => c.notNull())
    .addColumn('platform', 'text')
    .addColumn('version', 'text')
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .addColumn('recipient_key', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('decided_at', column.millis)
    .addColumn('decided_by', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('agent_id', 'text')
    .addColumn('delivery_expires_at', column.millis)
    .addColumn('envelope', 'text')
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agent_connections_expiry').on('agent_connections').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
