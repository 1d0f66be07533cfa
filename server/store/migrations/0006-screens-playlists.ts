import { sql, type Kysely } from 'kysely';
import { column } from '../columns';

// Playlists and what they depend on, screens with their tags and playlist references, and the
// pairing, device, runtime-session and browser-provisioning records of the runtime plane.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('playlists')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('revision', column.count, (c) => c.notNull())
    .addColumn('ad_bearing', column.flag, (c) => c.notNull())
    .addColumn('has_visibility', column.flag, (c) => c.notNull())
    .addColumn('write_document', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('unavailable', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .addColumn('deleted_at', column.millis)
    .execute();
  await db.schema.createIndex('playlists_tenant').on('playlists').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('playlist_dependencies')
    .addColumn('playlist_id', 'text', (c) => c.notNull().references('playlists.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('playlist_dependencies_pk', ['playlist_id', 'kind', 'ref'])
    .execute();
  await db.schema
    .createIndex('playlist_dependencies_ref')
    .on('playlist_dependencies')
    .columns(['tenant_id', 'kind', 'ref'])
    .execute();

  await db.schema
    .createTable('screens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('revision', column.count, (c) => c.notNull())
    .addColumn('manifest_revision', column.count, (c) => c.notNull())
    .addColumn('content_access_generation', column.count, (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('playlist_id', 'text')
    .addColumn('timezone', 'text')
    .addColumn('native_identity', column.flag, (c) => c.notNull().defaultTo(0))
    .addColumn('paired_at', column.millis)
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .addColumn('archived_at', column.millis)
    .addColumn('deleted_at', column.millis)
    .execute();
  await db.schema.createIndex('screens_tenant').on('screens').columns(['tenant_id', 'state', 'created_at']).execute();

  await db.schema
    .createTable('screen_tags')
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('screen_tags_pk', ['screen_id', 'tag'])
    .execute();
  await db.schema.createIndex('screen_tags_tag').on('screen_tags').columns(['tenant_id', 'tag']).execute();

  await db.schema
    .createTable('screen_playlist_references')
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('playlist_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('entry_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('screen_playlist_references_pk', ['screen_id', 'role', 'entry_id'])
    .execute();
  await db.schema
    .createIndex('screen_playlist_references_playlist')
    .on('screen_playlist_references')
    .columns(['playlist_id'])
    .execute();

  await db.schema
    .createTable('pairing_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('code_expires_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('tenant_id', 'text')
    .addColumn('screen_id', 'text')
    .addColumn('completion_nonce', 'text')
    .addColumn('device_id', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('claimed_at', column.millis)
    .addColumn('completed_at', column.millis)
    .execute();
  // A code names one pending session fleet-wide; claimed and completed sessions free it.
  await db.schema
    .createIndex('pairing_sessions_pending_code')
    .unique()
    .on('pairing_sessions')
    .column('code')
    .where(sql.ref('state'), '=', 'pending')
    .execute();
  await db.schema.createIndex('pairing_sessions_expiry').on('pairing_sessions').column('expires_at').execute();

  await db.schema
    .createTable('screen_devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('revoked_at', column.millis)
    .execute();
  await db.schema.createIndex('screen_devices_screen').on('screen_devices').column('screen_id').execute();

  await db.schema
    .createTable('runtime_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('paired', column.flag, (c) => c.notNull())
    .addColumn('device_id', 'text')
    .addColumn('content_access_generation', column.count, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('revoked_at', column.millis)
    .execute();
  await db.schema.createIndex('runtime_sessions_screen').on('runtime_sessions').column('screen_id').execute();
  await db.schema.createIndex('runtime_sessions_expiry').on('runtime_sessions').column('expires_at').execute();

  await db.schema
    .createTable('screen_provisionings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('exchange_id', 'text')
    .addColumn('device_id', 'text')
    .addColumn('exchanged_at', column.millis)
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('screen_provisionings_screen').on('screen_provisionings').column('screen_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
