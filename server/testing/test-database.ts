// A fresh, isolated database for each test server (or Store under test), on the engine
// MARQUEE_TEST_DATABASE_URL names: SQLite in the test's data dir when unset, or a new database on
// the PostgreSQL server that `postgres://…/<any database>` reaches (see server/testing/postgres-cluster.sh).
import crypto from 'node:crypto';
import path from 'node:path';
import pg from 'pg';

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
 * data dir finds its data again, and each new temporary dir gets an empty database.
 */
export async function testDatabase(dataDir: string): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL || TEST_DATABASE_URL.startsWith('sqlite:')) {
    return { url: `sqlite:${path.join(dataDir, 'marquee.db')}`, drop: async () => {} };
  }
  const name = `marquee_test_${crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 24)}`;
  await admin(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
    }
  });
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
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
