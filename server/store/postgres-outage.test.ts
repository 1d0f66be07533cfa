// PostgreSQL going away under a running server: requests answer the spec's dependency_unavailable
// (Retry-After 5), as /.ready does, never an internal_error or pg's own words.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import { TEST_DATABASE_URL } from '../testing/test-database';

describe.skipIf(!TEST_DATABASE_URL || TEST_DATABASE_URL.startsWith('sqlite:'))('PostgreSQL out of reach', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.stop().catch(() => undefined));

  it('answers dependency_unavailable when its connection is lost under a query, and recovers', async () => {
    const own = await TestServer.start();
    try {
      const name = new URL(own.config.databaseUrl).pathname.slice(1);
      const db = own.services.store.db;
      // Its outcome is taken at once (a rejection nobody has awaited yet would be reported unhandled).
      const slow = sql`SELECT pg_sleep(30)`.execute(db).then(
        () => null,
        (error: unknown) => error,
      );
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        // The backend serving the slow query is ended, as a restart or failover of the server would.
        for (let ended = 0; ended === 0; ) {
          const { rowCount } = await admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'SELECT pg_sleep%'`,
            [name],
          );
          ended = rowCount ?? 0;
          if (ended === 0) await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await admin.end();
      }
      expect(await slow).toMatchObject({ code: 'dependency_unavailable' });
      // The lost connection left the pool: the next query gets a live one.
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await own.stop();
    }
  });

  it('survives a connection lost between the statements of a transaction (no error event left unheard)', async () => {
    const own = await TestServer.start();
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const store = own.services.store;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      const outcome = await store
        .transaction(async ({ db }) => {
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
          // Idle in the transaction, its backend is ended (a restart or failover of the server):
          // the client hears it with no query of its own running, and tells its listeners.
          await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          await new Promise((r) => setTimeout(r, 300));
          await sql`SELECT 1`.execute(db);
          return null;
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      await admin.end();
      expect(uncaught).toEqual([]);
      expect(outcome).toMatchObject({ code: 'dependency_unavailable' });
      // The lost connection left the pool: the next transaction gets a live one.
      expect(
        await store.transaction(async ({ db }) => (await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows),
      ).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await own.stop();
    }
  });

  it('answers dependency_unavailable when no connection to the database can be had', async () => {
    server = await TestServer.start();
    const { token } = await server.enroll();
    const name = new URL(server.config.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`); // its connections end; new ones are refused
    } finally {
      await admin.end();
    }
    const res = await server.request('GET', '/api/v1/media', { token });
    expect(res.status, res.text).toBe(500);
    expect(res.json()).toMatchObject({
      code: 'dependency_unavailable',
      detail: 'the database is unavailable; retry later',
    });
    expect(res.headers['retry-after']).toBe('5');
    expect(res.text).not.toContain(name);
  });
});
