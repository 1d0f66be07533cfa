// The embedded default: better-sqlite3 in WAL mode, one connection, prepared statements reused.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { SqliteDialect, type SqliteDatabase } from 'kysely';
import { MIGRATION_TABLES, type StoreDriver, type StoreOptions } from './driver';

/** How long a statement waits for another process's write lock before it fails (SQLITE_BUSY). */
const BUSY_TIMEOUT_MS = 5000;

/** Opens (creating when missing) the database file; `:memory:` for a private in-memory database. */
export function openSqlite(file: string, options: StoreOptions = {}): StoreDriver {
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // A new database is its owner's alone, whatever the umask: it holds people's addresses and the
    // hashes of every credential. SQLite gives its -wal and -shm files the database file's mode.
    // (The data directory itself stays readable: nginx reads blobs from it under offload, D-334.)
    fs.closeSync(fs.openSync(file, 'a', 0o600));
  }
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.sqliteSync ?? 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return {
    engine: 'sqlite',
    dialect: new SqliteDialect({ database: cachingStatements(sqlite) }),
    // One connection: transactions already run one after another.
    async lockInTransaction() {},
    isRetryable: () => false,
    async appliedMigrations() {
      const table = sqlite
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'`)
        .get();
      if (!table) return [];
      return (sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map(
        (r) => r.name,
      );
    },
    async indexDefinitions() {
      // Indexes SQLite makes for primary keys and unique constraints have no SQL of their own.
      const rows = sqlite
        .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
        .all() as { name: string; sql: string }[];
      return new Map(rows.map((r) => [r.name, r.sql]));
    },
    async tableNames() {
      const rows = sqlite
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`)
        .all() as { name: string }[];
      return rows.map((r) => r.name).filter((name) => !MIGRATION_TABLES.includes(name));
    },
    async ping() {
      try {
        sqlite.prepare('SELECT 1').get();
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (sqlite.open) sqlite.close();
    },
  };
}

/** True when the error is SQLite's unique or primary-key violation. */
export function isSqliteUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Statements the cache keeps before it starts over; the queries of a build are a bounded set. */
const STATEMENT_CACHE_SIZE = 2000;

/**
 * Kysely prepares every query anew; preparing dominates small queries under load, so prepared
 * statements are reused by SQL text (better-sqlite3 statements are reusable). Kysely's destroy()
 * leaves the connection to the driver's close().
 */
function cachingStatements(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string) {
      let statement = cache.get(text);
      if (!statement) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        statement = sqlite.prepare(text);
        cache.set(text, statement);
      }
      return statement;
    },
    close: () => {},
  };
}
