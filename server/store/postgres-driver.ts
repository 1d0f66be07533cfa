// PostgreSQL: a pg connection pool under Kysely's PostgresDialect, for installations that outgrow
// one machine. int8 comes back as a JS number (times and counters stay below 2^53), and the
// catalog answers schema status.
import { PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { problem } from '../problem';
import { MIGRATION_TABLES, type StoreDriver } from './driver';

/** Connections per process; each replica holds its own pool. */
const POOL_SIZE = 10;
/** A query waits at most this long for a free connection, so readiness fails instead of hanging. */
const CONNECT_TIMEOUT_MS = 5000;
/** Collations that order text by code point, as SQLite does: KV listings and cursors rely on it. */
const BYTEWISE_COLLATIONS = ['C', 'POSIX', 'C.UTF-8', 'C.utf8'];
/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505';
/** SQLSTATEs after which the whole transaction can run again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01', UNIQUE_VIOLATION]);

/**
 * SQLSTATE character_not_in_repertoire: PostgreSQL's text cannot hold U+0000 (Node encodes every
 * other string as valid UTF-8). A value from a request that still carries one (a cursor, a query
 * parameter) is the request's fault, not the server's (D-471).
 */
const NUL_IN_TEXT = '22021';

/** SQLSTATEs of a connection the server ended (admin_shutdown, crash_shutdown, cannot_connect_now). */
const SERVER_ENDED = new Set(['57P01', '57P02', '57P03']);
/** Node's codes of a socket that went away. */
const SOCKET_LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT']);

/**
 * Whether a query failed because its connection went away (the server stopped or restarted, the
 * backend was terminated, the network dropped), not because of the query: the dependency is down.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = String((error as { code?: unknown }).code ?? '');
  if (code.startsWith('08') || SERVER_ENDED.has(code) || SOCKET_LOST.has(code)) return true;
  // pg's own words for a socket that closed under a query, or a client it already saw fail.
  return /^Connection terminated|not queryable/.test(error.message);
}

const unavailable = (cause: unknown) =>
  problem('dependency_unavailable', 'the database is unavailable; retry later', { cause });

/** Pooled clients whose query is guarded already (a client is checked out many times). */
const GUARDED = new WeakSet<pg.PoolClient>();
/** Pooled clients a query found with their connection lost: the pool must not hand them out again. */
const LOST = new WeakSet<pg.PoolClient>();

/**
 * The pooled client, with its query failures from a lost connection turned into unavailable, and,
 * once one was, released as broken: the server's message ending the connection comes before the
 * socket closes, so the client still looks queryable when the failed query releases it, and the
 * pool would hand it to the next query, which the close then fails too.
 */
function guarded(client: pg.PoolClient): pg.PoolClient {
  // pg-pool gives every checkout its own release.
  const release = client.release;
  client.release = (error?: Error | boolean) =>
    release(error ?? (LOST.has(client) ? new Error('the connection was lost') : undefined));
  if (GUARDED.has(client)) return client;
  GUARDED.add(client);
  // The pool hears a client's 'error' only while it is idle. Checked out (a transaction between its
  // statements, a ROLLBACK after a failed query), a connection the server ended emits 'error' with
  // no listener, which Node throws as an uncaught exception that ends the process. Heard here, it
  // leaves the client not queryable: its next query fails as unavailable, and the pool drops it.
  client.on('error', () => {});
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const guardedQuery = (...args: unknown[]) => {
    const result = query(...args);
    // A cursor (streamed results) is returned as itself; a query's promise is watched.
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code === NUL_IN_TEXT)
        throw problem('invalid_request', 'a value in the request holds a NUL character (U+0000)', { cause: error });
      if (!isConnectionLoss(error)) throw error;
      LOST.add(client);
      throw unavailable(error);
    });
  };
  return Object.assign(client, { query: guardedQuery as pg.PoolClient['query'] });
}

function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} does not fit a JavaScript number`);
  return value;
}

const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Connects to the database the URL names and checks it can hold Marquee's data. */
export async function openPostgres(url: string): Promise<StoreDriver> {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    types: int8AsNumber,
  });
  // An idle connection the server dropped is discarded by the pool; the next query opens another.
  pool.on('error', () => {});
  try {
    const { rows } = await pool.query<{ datcollate: string }>(
      'SELECT datcollate FROM pg_database WHERE datname = current_database()',
    );
    const collation = rows[0]?.datcollate ?? '';
    if (!BYTEWISE_COLLATIONS.includes(collation)) {
      throw new Error(
        `the PostgreSQL database uses collation ${collation}; Marquee needs text ordered bytewise: ` +
          `CREATE DATABASE … TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
      );
    }
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    engine: 'postgres',
    // Kysely's destroy() ends the pool it was given; close() owns that here. A connection that cannot
    // be had (the server down or gone, no free one within CONNECT_TIMEOUT_MS), or that is lost under
    // a query, is a dependency that is down: dependency_unavailable, pg's error kept as the cause for
    // the log. pg's pool drops a client that is no longer queryable when it is released.
    dialect: new PostgresDialect({
      pool: {
        connect: () =>
          pool.connect().then(guarded, (error: unknown) => {
            throw unavailable(error);
          }),
        end: async () => {},
      },
    }),
    async appliedMigrations() {
      const { rows } = await pool.query<{ present: boolean }>(
        `SELECT to_regclass('kysely_migration') IS NOT NULL AS present`,
      );
      if (!rows[0]?.present) return [];
      const applied = await pool.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
      return applied.rows.map((r) => r.name);
    },
    async indexDefinitions() {
      const { rows } = await pool.query<{ name: string; definition: string }>(
        `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
           FROM pg_index i
           JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema()
            AND NOT EXISTS (SELECT 1 FROM pg_constraint k
                             WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x'))`,
      );
      return new Map(rows.map((r) => [r.name, r.definition]));
    },
    async tableNames() {
      const { rows } = await pool.query<{ name: string }>(
        'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()',
      );
      return rows.map((r) => r.name).filter((name) => !MIGRATION_TABLES.includes(name));
    },
    async lockInTransaction(tx, names) {
      // Sorted and distinct: two transactions taking overlapping sets cannot wait on each other.
      for (const name of [...new Set(names)].sort()) {
        await sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(tx);
      }
    },
    isRetryable: (error) => RETRYABLE.has(String((error as { code?: unknown } | null)?.code)),
    async ping() {
      try {
        await pool.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (!pool.ended) await pool.end();
    },
  };
}

/** True when the error is PostgreSQL's unique_violation (primary keys included). */
export function isPostgresUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}
