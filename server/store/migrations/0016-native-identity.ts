import type { Kysely } from 'kysely';
import { column } from '../columns';

// Native players (kiosks): pairing sessions started from a public key, the identities bound to
// screens, their proof challenges, and the recovery offers made to a screen's owner. Numbered 0016:
// 0011–0015 are allotted to work that lands before it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('native_pairing_sessions')
    .addColumn('pairing_session_id', 'text', (c) =>
      c.primaryKey().references('pairing_sessions.id').onDelete('cascade'),
    )
    .addColumn('credential_hash', 'text', (c) => c.notNull().unique())
    .addColumn('kid', 'text', (c) => c.notNull())
    .addColumn('public_x', 'text', (c) => c.notNull())
    .addColumn('host', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('native_identities')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_x', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('device_id', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('retires_at', column.millis)
    .addColumn('duid', 'text')
    .addColumn('serial', 'text')
    .addColumn('host', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('last_seen_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('native_identities_screen').on('native_identities').column('screen_id').execute();
  await db.schema.createIndex('native_identities_duid').on('native_identities').column('duid').execute();
  await db.schema.createIndex('native_identities_serial').on('native_identities').column('serial').execute();

  await db.schema
    .createTable('native_identity_challenges')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('kid', 'text', (c) => c.notNull())
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('consumed_at', column.millis)
    .execute();
  await db.schema
    .createIndex('native_identity_challenges_expiry')
    .on('native_identity_challenges')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('screen_recovery_offers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('screen_id', 'text', (c) => c.notNull().references('screens.id'))
    .addColumn('pairing_session_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('confirmed_at', column.millis)
    .execute();
  await db.schema
    .createIndex('screen_recovery_offers_screen')
    .on('screen_recovery_offers')
    .columns(['screen_id', 'created_at'])
    .execute();

  // What the owner sees of a pending offer on the Screen (JSON; null when none).
  await db.schema.alterTable('screens').addColumn('recovery_pending', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
