// The store through its driver: every migration from empty on the engine MARQUEE_TEST_DATABASE_URL
// names, values past 32 bits, the portable expressions, and SQLite databases made before the seam.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemError } from '../problem';
import type { TenantTable } from '../tenants/tenants.tables';
import { TEST_DATABASE_URL, testDatabase, type TestDatabase } from '../testing/test-database';
import { migrationNames } from './migrations/index';
import { greatest } from './portable-sql';
import { expectUpdated, isUniqueViolation, openStore, StaleWrite, type Store } from './store';
import { tempDirs } from '../testing/temp-dirs';

const TABLES = [
  'agent_connections',
  'agents',
  'applications',
  'browser_links',
  'credentials',
  'credit_ledger',
  'dashboard_sessions',
  'egress_ledger',
  'event_watermarks',
  'events',
  'feedback',
  'fleet_action_results',
  'fleet_actions',
  'idempotency_records',
  'invitations',
  'kv_entries',
  'kv_revision_floors',
  'launch_tickets',
  'media',
  'media_generations',
  'media_uploads',
  'memberships',
  'native_identities',
  'native_identity_challenges',
  'native_pairing_sessions',
  'operations',
  'operators',
  'pairing_sessions',
  'passkeys',
  'people',
  'playback_days',
  'playback_reports',
  'playlist_dependencies',
  'playlists',
  'rate_windows',
  'release_files',
  'release_grants',
  'release_packages',
  'releases',
  'runtime_manifest_content',
  'runtime_manifests',
  'runtime_sessions',
  'screen_boundaries',
  'screen_devices',
  'screen_displays',
  'screen_health',
  'screen_playlist_references',
  'screen_presence',
  'screen_provisionings',
  'screen_recovery_offers',
  'screen_runtime_state',
  'screen_schedules',
  'screen_screenshots',
  'screen_tags',
  'screen_takeovers',
  'screens',
  'sign_in_resets',
  'signups',
  'tenants',
  'webauthn_ceremonies',
];

const INDEXES = [
  'agent_connections_expiry',
  'agents_tenant',
  'applications_tenant',
  'browser_links_ip',
  'credentials_tenant',
  'dashboard_sessions_expiry',
  'dashboard_sessions_person',
  'events_at',
  'events_screen_position',
  'events_tenant_position',
  'feedback_created',
  'feedback_tenant_kind',
  'fleet_actions_created',
  'idempotency_records_body_erasure',
  'idempotency_records_expiry',
  'invitations_address',
  'invitations_tenant',
  'kv_entries_deleted',
  'launch_tickets_expiry',
  'media_generations_tenant_state',
  'media_tenant',
  'media_tenant_state',
  'media_tenant_tag',
  'media_uploads_expiry',
  'memberships_person',
  'native_identities_duid',
  'native_identities_screen',
  'native_identities_serial',
  'native_identity_challenges_expiry',
  'operations_claimable',
  'operations_leases',
  'operations_tenant',
  'pairing_sessions_expiry',
  'pairing_sessions_pending_code',
  'passkeys_person',
  'playback_days_content',
  'playback_days_tenant',
  'playback_reports_started',
  'playlist_dependencies_ref',
  'playlists_tenant',
  'rate_windows_ends_at',
  'release_grants_screen',
  'releases_application',
  'releases_operation',
  'releases_tenant',
  'runtime_manifest_content_ref',
  'runtime_manifests_superseded',
  'runtime_sessions_expiry',
  'runtime_sessions_screen',
  'screen_boundaries_due',
  'screen_devices_screen',
  'screen_playlist_references_playlist',
  'screen_presence_expires_at',
  'screen_provisionings_screen',
  'screen_recovery_offers_screen',
  'screen_screenshots_pending',
  'screen_tags_tag',
  'screens_tenant',
  'sign_in_resets_expiry',
  'sign_in_resets_person',
  'signups_expiry',
  'tenants_account_email',
  'tenants_client',
  'webauthn_ceremonies_expiry',
];

/** Past 2^31 (PostgreSQL's integer) and past 2^32: a time in 2026 and a 5 GiB byte count. */
const NOW = Date.parse('2026-11-25T12:00:00Z');
const FIVE_GIB = 5 * 2 ** 30;

const tempDir = tempDirs('store');

async function insertTenant(store: Store, id: string, overrides: Partial<TenantTable> = {}): Promise<void> {
  await store.db
    .insertInto('tenants')
    .values({
      id,
      generation: 'P',
      name: 'store test',
      email: `${id}@example.com`,
      status: 'active',
      plan: 'signage',
      independent_advertiser: 0,
      screens_enabled: 1,
      capabilities_revision: 1,
      revision: 1,
      used_bytes: 0,
      reserved_bytes: 0,
      content_limit_bytes: FIVE_GIB,
      screen_count: 0,
      screen_limit: 10,
      credit_millis: 0,
      credit_grant_month: '2026-11',
      client_id: null,
      intent: null,
      created_at: NOW,
      updated_at: NOW,
      ...overrides,
    })
    .execute();
}

function event(tenantId: string, message: string) {
  return {
    tenant_id: tenantId,
    screen_id: null,
    type: 'test.appended',
    severity: 'info' as const,
    message,
    resource_type: null,
    resource_id: null,
    details: null,
    runtime: 0,
    request_id: null,
    operation_id: null,
    at: NOW,
  };
}

describe('the store on the configured engine', () => {
  let database: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    database = await testDatabase(tempDir(), { empty: true });
    store = await openStore(database.url);
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('runs every migration from empty and creates exactly the expected tables and indexes', async () => {
    expect(store.driver.engine).toBe(TEST_DATABASE_URL?.startsWith('postgres') ? 'postgres' : 'sqlite');
    expect(await store.driver.appliedMigrations()).toEqual([...migrationNames].sort());
    expect((await store.driver.tableNames()).sort()).toEqual(TABLES);
    expect([...(await store.driver.indexDefinitions()).keys()].sort()).toEqual(INDEXES);
    expect(await store.schemaStatus(NOW)).toEqual({ state: 'ok' });
    expect(await store.ping()).toBe(true);
  });

  it('migrates an up-to-date database again without change', async () => {
    const before = await store.driver.indexDefinitions();
    await store.migrate();
    expect(await store.driver.indexDefinitions()).toEqual(before);
    expect(await store.schemaStatus(NOW)).toEqual({ state: 'ok' });
  });

  it('stores millisecond times and byte counts past 32 bits and reads them back as numbers', async () => {
    await insertTenant(store, 'prj_big', { used_bytes: FIVE_GIB - 1 });
    const row = await store.db
      .selectFrom('tenants')
      .select(['created_at', 'used_bytes', 'content_limit_bytes'])
      .where('id', '=', 'prj_big')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ created_at: NOW, used_bytes: FIVE_GIB - 1, content_limit_bytes: FIVE_GIB });
    const sum = await store.db
      .selectFrom('tenants')
      .select((eb) => eb('used_bytes', '+', eb.ref('content_limit_bytes')).as('total'))
      .where('id', '=', 'prj_big')
      .executeTakeFirstOrThrow();
    expect(sum.total).toBe(2 * FIVE_GIB - 1);
  });

  it('numbers events in insertion order from an identity column', async () => {
    const append = () =>
      store.db.insertInto('events').values(event('prj_big', 'm')).returning('position').executeTakeFirstOrThrow();
    const first = await append();
    const second = await append();
    expect(typeof first.position).toBe('number');
    expect(second.position).toBeGreaterThan(first.position);
  });

  it('keeps binary values byte for byte', async () => {
    const value = Buffer.from([0, 1, 2, 254, 255]);
    await store.db
      .insertInto('kv_entries')
      .values({
        application_id: 'app_1',
        key: 'k',
        tenant_id: 'prj_big',
        value,
        content_type: 'application/octet-stream',
        bytes: value.length,
        sha256: 'x',
        revision: 1,
        created_at: NOW,
        updated_at: NOW,
        deleted_at: null,
      })
      .execute();
    const row = await store.db
      .selectFrom('kv_entries')
      .select('value')
      .where('key', '=', 'k')
      .executeTakeFirstOrThrow();
    expect(Buffer.from(row.value!)).toEqual(value);
  });

  it('orders text bytewise, as KV listings require', async () => {
    const { rows } = await sql<{ k: string }>`
      SELECT k FROM (SELECT 'b' AS k UNION ALL SELECT 'B' UNION ALL SELECT '_' UNION ALL SELECT 'é' UNION ALL SELECT 'a') t
      ORDER BY k`.execute(store.db);
    expect(rows.map((r) => r.k)).toEqual(['B', '_', 'a', 'b', 'é']);
  });

  it('takes the greater of two values with greatest(), in an upsert as kv and retention use it', async () => {
    const floor = (revision: number) =>
      store.db
        .insertInto('kv_revision_floors')
        .values({ application_id: 'app_g', tenant_id: 'prj_big', revision })
        .onConflict((oc) =>
          oc.column('application_id').doUpdateSet({
            revision: (eb) => greatest(eb.ref('kv_revision_floors.revision'), eb.ref('excluded.revision')),
          }),
        )
        .execute();
    const read = async () =>
      (
        await store.db
          .selectFrom('kv_revision_floors')
          .select('revision')
          .where('application_id', '=', 'app_g')
          .executeTakeFirstOrThrow()
      ).revision;
    await floor(2 ** 40);
    await floor(7);
    expect(await read()).toBe(2 ** 40);
    await floor(2 ** 40 + 1);
    expect(await read()).toBe(2 ** 40 + 1);
  });

  it('recognizes its engine’s unique violations', async () => {
    const error = await insertTenant(store, 'prj_big').catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(new Error('something else'))).toBe(false);
  });

  it('answers a text value holding U+0000 as the request’s fault: invalid_request on PostgreSQL, no row on SQLite', async () => {
    // PostgreSQL's text cannot hold U+0000 (SQLSTATE 22021); a value from a request that reaches a
    // query with one is a bad request, never an internal error (D-471).
    const lookup = store.db.selectFrom('tenants').select('id').where('id', '=', 'prj_\u0000').executeTakeFirst();
    if (store.driver.engine === 'postgres') {
      const error = await lookup.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).code).toBe('invalid_request');
    } else {
      expect(await lookup).toBeUndefined();
    }
  });

  it('runs a unit of work again after a StaleWrite: the failed attempt leaves no row and runs no hook', async () => {
    await insertTenant(store, 'prj_retry');
    const hooks: string[] = [];
    let attempts = 0;
    const result = await store.transaction(async (work) => {
      attempts++;
      await work.db
        .insertInto('events')
        .values(event('prj_retry', `attempt ${attempts}`))
        .execute();
      work.afterCommit(() => hooks.push(`attempt ${attempts}`));
      if (attempts === 1) throw new StaleWrite('the test row');
      return 'done';
    });
    expect(result).toBe('done');
    expect(hooks).toEqual(['attempt 2']);
    const written = await store.db
      .selectFrom('events')
      .select('message')
      .where('tenant_id', '=', 'prj_retry')
      .execute();
    expect(written).toEqual([{ message: 'attempt 2' }]);
  });

  it('gives a unit of work that stays stale up after five attempts, with the StaleWrite', async () => {
    let attempts = 0;
    const failing = store.transaction(async () => {
      attempts++;
      throw new StaleWrite('the test row');
    });
    await expect(failing).rejects.toThrow(/the test row changed while this transaction ran/);
    expect(attempts).toBe(5);
  });

  it('loses no update when concurrent units of work read, then write, one row by compare-and-set', async () => {
    await insertTenant(store, 'prj_cas');
    const bump = () =>
      store.transaction(async (work) => {
        const row = await work.db
          .selectFrom('tenants')
          .select('revision')
          .where('id', '=', 'prj_cas')
          .executeTakeFirstOrThrow();
        await new Promise((resolve) => setTimeout(resolve, 5)); // widen the window between read and write
        expectUpdated(
          await work.db
            .updateTable('tenants')
            .set({ revision: row.revision + 1 })
            .where('id', '=', 'prj_cas')
            .where('revision', '=', row.revision)
            .executeTakeFirst(),
          'the project',
        );
        return row.revision + 1;
      });
    // Four at a time: each loser reruns, so more than five at once could exhaust its attempts.
    const revisions: number[] = [];
    for (let round = 0; round < 3; round++) revisions.push(...(await Promise.all([bump(), bump(), bump(), bump()])));
    expect(revisions.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
  });

  it('holds a named lock to the end of the transaction, so read-then-write under it loses no update', async () => {
    await insertTenant(store, 'prj_locked', { used_bytes: 0 });
    const add = () =>
      store.transaction(async (work) => {
        await work.lock('test:prj_locked');
        const row = await work.db
          .selectFrom('tenants')
          .select('used_bytes')
          .where('id', '=', 'prj_locked')
          .executeTakeFirstOrThrow();
        await new Promise((resolve) => setTimeout(resolve, 5));
        await work.db
          .updateTable('tenants')
          .set({ used_bytes: row.used_bytes + 1 })
          .where('id', '=', 'prj_locked')
          .execute();
      });
    await Promise.all(Array.from({ length: 10 }, add));
    const row = await store.db
      .selectFrom('tenants')
      .select('used_bytes')
      .where('id', '=', 'prj_locked')
      .executeTakeFirstOrThrow();
    expect(row.used_bytes).toBe(10);
  });

  it('reports a dropped index as drift', async () => {
    await sql`DROP INDEX events_at`.execute(store.db);
    expect(await store.schemaStatus(NOW)).toEqual({
      state: 'drifting',
      detail: 'indexes missing or different: events_at',
    });
    await store.db.schema.createIndex('events_at').on('events').column('at').execute();
    expect(await store.schemaStatus(NOW)).toEqual({ state: 'ok' });
  });
});

describe('SQLite databases made before the store seam (issue 13)', () => {
  // The DDL main's migrations 0001-0010 wrote before their columns became bigint and the events
  // position an identityColumn(), recorded from sqlite_master with the migration records.
  const fixture = fs.readFileSync(new URL('./fixtures/schema-0010-sqlite.sql', import.meta.url), 'utf8');

  function oldDatabase(): string {
    const file = path.join(tempDir(), 'marquee.db');
    const db = new SQLite(file);
    db.exec(fixture);
    db.prepare(
      `INSERT INTO events (tenant_id, type, severity, message, at) VALUES ('prj_old', 't', 'info', 'old', ?)`,
    ).run(NOW);
    db.close();
    return file;
  }

  /** Project prj_old, as the 0010 schema holds a project. */
  function insertOldProject(db: SQLite.Database): void {
    db.prepare(
      `INSERT INTO tenants (id, generation, email, name, status, plan, revision, content_limit_bytes, screen_limit, credit_millis, credit_grant_month, created_at, updated_at)
       VALUES ('prj_old', 'P', 'o@example.com', 'Old', 'active', 'signage', 1, 0, 0, 0, '2026-11', ?, ?)`,
    ).run(NOW, NOW);
  }

  /** The old database brought up to date by the migrations that came after 0010. */
  async function migratedOldDatabase(): Promise<string> {
    const file = oldDatabase();
    const store = await openStore(`sqlite:${file}`);
    await store.migrate();
    await store.close();
    return file;
  }

  async function freshDatabase(): Promise<Store> {
    const store = await openStore(`sqlite:${path.join(tempDir(), 'marquee.db')}`);
    await store.migrate();
    return store;
  }

  it('opens and migrates one (only the migrations after 0010 to apply), its schema ok and its data intact', async () => {
    const store = await openStore(`sqlite:${oldDatabase()}`);
    try {
      await store.migrate();
      expect(await store.driver.appliedMigrations()).toEqual([...migrationNames].sort());
      expect(await store.schemaStatus(NOW)).toEqual({ state: 'ok' });
      const old = await store.db.selectFrom('events').select(['position', 'at']).executeTakeFirstOrThrow();
      expect(old).toEqual({ position: 1, at: NOW });
      await insertTenant(store, 'prj_old', { used_bytes: FIVE_GIB });
      const { position } = await store.db
        .insertInto('events')
        .values(event('prj_old', 'new'))
        .returning('position')
        .executeTakeFirstOrThrow();
      expect(position).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('makes every project bearer it held an agent installation (issue 18), active or revoked as the bearer was', async () => {
    const file = oldDatabase();
    const db = new SQLite(file);
    insertOldProject(db);
    const credential = db.prepare(
      `INSERT INTO credentials (id, tenant_id, kind, token_hash, areas, status, issuance_id, issuance_expires_at, created_at, revoked_at)
       VALUES (?, 'prj_old', ?, ?, '[]', ?, ?, ?, ?, ?)`,
    );
    credential.run('cred_active', 'project', 'h1', 'active', 'iss_1', NOW, NOW, null);
    credential.run('cred_revoked', 'project', 'h2', 'revoked', 'iss_2', NOW, NOW, NOW + 1);
    credential.run('cred_account', 'account', 'h3', 'active', 'iss_3', NOW, NOW, null);
    db.close();
    const store = await openStore(`sqlite:${file}`);
    try {
      await store.migrate();
      const agents = await store.db
        .selectFrom('agents')
        .select(['id', 'credential_id', 'name', 'agent_type', 'state'])
        .orderBy('id')
        .execute();
      expect(agents).toEqual([
        { id: 'agt_active', credential_id: 'cred_active', name: 'Marquee CLI', agent_type: 'cli', state: 'active' },
        { id: 'agt_revoked', credential_id: 'cred_revoked', name: 'Marquee CLI', agent_type: 'cli', state: 'revoked' },
      ]);
    } finally {
      await store.close();
    }
  });

  it('names the playlist each screen last activated from that manifest’s document (0027)', async () => {
    const file = oldDatabase();
    const db = new SQLite(file);
    insertOldProject(db);
    const screen = db.prepare(
      `INSERT INTO screens (id, tenant_id, public_id, label, revision, manifest_revision, content_access_generation, state, created_at, updated_at)
       VALUES (?, 'prj_old', ?, 'Lobby', 1, 2, 1, 'active', ?, ?)`,
    );
    for (const id of ['scr_playing', 'scr_empty']) screen.run(id, `pub_${id}`, NOW, NOW);
    const manifest = db.prepare(
      `INSERT INTO runtime_manifests (screen_id, manifest_revision, tenant_id, document, has_capabilities, created_at, superseded_at)
       VALUES (?, ?, 'prj_old', ?, 0, ?, NULL)`,
    );
    manifest.run('scr_playing', 1, JSON.stringify({ playlistId: 'pl_first', pages: [] }), NOW);
    manifest.run('scr_playing', 2, JSON.stringify({ playlistId: 'pl_second', pages: [] }), NOW);
    manifest.run('scr_empty', 1, JSON.stringify({ pages: [] }), NOW);
    const state = db.prepare(
      `INSERT INTO screen_runtime_state (screen_id, tenant_id, active_manifest_revision, activated_at) VALUES (?, 'prj_old', ?, ?)`,
    );
    state.run('scr_playing', 1, NOW);
    state.run('scr_empty', 1, NOW);
    db.close();
    const store = await openStore(`sqlite:${file}`);
    try {
      await store.migrate();
      const rows = await store.db
        .selectFrom('screen_runtime_state')
        .select(['screen_id', 'playlist_id'])
        .orderBy('screen_id')
        .execute();
      expect(rows).toEqual([
        { screen_id: 'scr_empty', playlist_id: null },
        { screen_id: 'scr_playing', playlist_id: 'pl_first' },
      ]);
    } finally {
      await store.close();
    }
  });

  it('has the same index definitions as a database the current migrations create (no drift)', async () => {
    const old = await openStore(`sqlite:${await migratedOldDatabase()}`);
    const fresh = await freshDatabase();
    try {
      expect(await fresh.driver.indexDefinitions()).toEqual(await old.driver.indexDefinitions());
    } finally {
      await old.close();
      await fresh.close();
    }
  });

  it('gives every column the same type affinity as a database the current migrations create', async () => {
    const fresh = path.join(tempDir(), 'marquee.db');
    const store = await openStore(`sqlite:${fresh}`);
    await store.migrate();
    await store.close();
    expect(affinities(fresh)).toEqual(affinities(await migratedOldDatabase()));
  });
});

/** Each table's columns as `name AFFINITY [pk]`. */
function affinities(file: string): Record<string, string[]> {
  const db = new SQLite(file, { readonly: true });
  try {
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name`)
      .all() as { name: string }[];
    return Object.fromEntries(
      tables.map(({ name }) => {
        const columns = db.prepare('SELECT name, type, pk FROM pragma_table_info(?)').all(name) as {
          name: string;
          type: string;
          pk: number;
        }[];
        return [name, columns.map((c) => `${c.name} ${affinity(c.type)}${c.pk ? ' pk' : ''}`)];
      }),
    );
  } finally {
    db.close();
  }
}

/** SQLite's rules for a declared type's affinity (https://sqlite.org/datatype3.html, 3.1). */
function affinity(declared: string): string {
  const type = declared.toUpperCase();
  if (type.includes('INT')) return 'INTEGER';
  if (/CHAR|CLOB|TEXT/.test(type)) return 'TEXT';
  if (type.includes('BLOB') || type === '') return 'BLOB';
  if (/REAL|FLOA|DOUB/.test(type)) return 'REAL';
  return 'NUMERIC';
}

describe.skipIf(!TEST_DATABASE_URL?.startsWith('postgres'))('a PostgreSQL database its user does not own', () => {
  const suffix = `${process.pid}_${Date.now()}`;
  const role = `marquee_not_owner_${suffix}`;
  const name = `marquee_not_owned_${suffix}`;
  const asAdmin = async (...statements: string[]) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };
  afterAll(() => asAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `DROP ROLE IF EXISTS ${role}`));

  it('stops the migrations with what the operator must change, not only PostgreSQL’s refusal', async () => {
    // Created by an administrator without OWNER: from PostgreSQL 15 on, only the owner creates in public.
    await asAdmin(
      `CREATE ROLE ${role} LOGIN`,
      `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
    );
    const url = new URL(TEST_DATABASE_URL!);
    url.username = role;
    url.pathname = `/${name}`;
    const store = await openStore(url.toString());
    try {
      const failure = await store.migrate().then(
        () => undefined,
        (error: unknown) => error as Error & { code?: string },
      );
      expect(failure?.message).toMatch(/^permission denied for schema public: the database user may not create/);
      expect(failure?.message).toContain('OWNER TO <user>');
      expect(failure?.code).toBe('42501');
    } finally {
      await store.close();
    }
  });
});
