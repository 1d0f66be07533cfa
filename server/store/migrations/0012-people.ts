import type { Kysely } from 'kysely';
import { column } from '../columns';

// Issue 18, people: persons with their sign-in credentials (a password hash, passkeys), their
// memberships of projects, dashboard sessions, the signup cookie's rows (invitation signup and
// sign-in reset), sign-in resets, and WebAuthn ceremonies.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    /** The WebAuthn user handle: random, never the id or the address. */
    .addColumn('user_handle', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', column.count, (c) => c.notNull())
    .addColumn('transports', 'text')
    .addColumn('backed_up', column.flag, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('last_used_at', column.millis)
    .execute();
  await db.schema.createIndex('passkeys_person').on('passkeys').column('person_id').execute();

  await db.schema
    .createTable('memberships')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('advertising', 'text')
    .addColumn('invitation_id', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['tenant_id', 'person_id'])
    .execute();
  await db.schema.createIndex('memberships_person').on('memberships').column('person_id').execute();

  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('tenant_id', 'text')
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('last_seen_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('revoked_at', column.millis)
    .execute();
  await db.schema.createIndex('dashboard_sessions_person').on('dashboard_sessions').column('person_id').execute();
  await db.schema.createIndex('dashboard_sessions_expiry').on('dashboard_sessions').column('expires_at').execute();

  await db.schema
    .createTable('signups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('invitation_id', 'text')
    .addColumn('reset_id', 'text')
    .addColumn('person_id', 'text')
    .addColumn('email', 'text')
    .addColumn('email_verified', column.flag, (c) => c.notNull())
    .addColumn('code_hash', 'text')
    .addColumn('code_expires_at', column.millis)
    .addColumn('code_attempts', column.bounded, (c) => c.notNull())
    .addColumn('codes_sent', column.bounded, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('completed_at', column.millis)
    .execute();
  await db.schema.createIndex('signups_expiry').on('signups').column('expires_at').execute();

  await db.schema
    .createTable('sign_in_resets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('claimed_at', column.millis)
    .addColumn('completed_at', column.millis)
    .execute();
  await db.schema.createIndex('sign_in_resets_person').on('sign_in_resets').column('person_id').execute();
  await db.schema.createIndex('sign_in_resets_expiry').on('sign_in_resets').column('expires_at').execute();

  await db.schema
    .createTable('webauthn_ceremonies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('challenge', 'text', (c) => c.notNull())
    /** The cookie row the ceremony is bound to (`session:<id>`, `signup:<id>`), or null for sign-in. */
    .addColumn('binding', 'text')
    .addColumn('person_id', 'text')
    .addColumn('display_name', 'text')
    .addColumn('user_handle', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('used_at', column.millis)
    .execute();
  await db.schema.createIndex('webauthn_ceremonies_expiry').on('webauthn_ceremonies').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
