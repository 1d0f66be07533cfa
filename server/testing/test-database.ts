// A fresh, isolated database for each test server (or Store under test), on the engine
// MARQUEE_TEST_DATABASE_URL names: SQLite in the test's data dir when unset, or a new database on
// the PostgreSQL server that `postgres://…/<any database>` reaches (see server/testing/postgres-cluster.sh).
// A PostgreSQL test database is a copy of a template the migrations made once per cluster (CREATE
// DATABASE … TEMPLATE copies files; running the migrations for every test server cost more than
// the test itself), except where a test runs the migrations itself.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openStore } from '../store/store';

export interface TestDatabase {
  /** What MARQUEE_DATABASE_URL would say for it. */
  url: string;
  /** Removes the database (the data dir's removal does it for SQLite). */
  drop(): Promise<void>;
}

/** The engine the store-facing suites run on; unset means SQLite. */
export const TEST_DATABASE_URL = process.env.MARQUEE_TEST_DATABASE_URL || undefined;

/**
 * The database of one data dir. The name follows from the dir, so a server restarted on the same
 * data dir finds its data again, and each new temporary dir gets a fresh database: on PostgreSQL
 * already migrated (a copy of the template), or `empty` for a test of the migrations themselves.
 */
export async function testDatabase(dataDir: string, options: { empty?: boolean } = {}): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL || TEST_DATABASE_URL.startsWith('sqlite:')) {
    return { url: `sqlite:${path.join(dataDir, 'marquee.db')}`, drop: async () => {} };
  }
  const name = `marquee_test_${crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 24)}`;
  const template = options.empty ? undefined : await migratedTemplate();
  await admin(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(createDatabase(name, template));
  });
  return {
    url: databaseUrl(name),
    drop: async () => {
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** `CREATE DATABASE` with the bytewise collation Marquee needs (a template made here has it already). */
function createDatabase(name: string, template: string | undefined): string {
  return template
    ? `CREATE DATABASE ${name} TEMPLATE ${template}`
    : `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`;
}

function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

let template: Promise<string> | undefined;

/**
 * The name of a database every migration has run on, made on first use in this cluster. Its name
 * follows from the migrations' source, so a changed migration gets a new template. Processes
 * (test workers, the e2e runner) take turns through an advisory lock, and the template is built
 * under another name and renamed when done, so a copy never sees a half-migrated one.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = path.join(import.meta.dirname, '../store/migrations');
    const hash = crypto.createHash('sha256');
    for (const file of fs.readdirSync(dir).sort()) hash.update(file).update(fs.readFileSync(path.join(dir, file)));
    const name = `marquee_template_${hash.digest('hex').slice(0, 24)}`;
    await admin(async (client) => {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', ['marquee test template']);
      try {
        const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (rowCount) return;
        const building = `${name}_building`;
        await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await client.query(createDatabase(building, undefined));
        const store = await openStore(databaseUrl(building));
        try {
          await store.migrate();
        } finally {
          await store.close();
        }
        await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['marquee test template']);
      }
    });
    return name;
  })();
  return template;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
