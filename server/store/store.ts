// The relational store: Kysely over better-sqlite3 in WAL mode, numbered migrations, transactions
// with after-commit hooks. Features see only Kysely, so PostgreSQL can take over later.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type SqliteDatabase, type Transaction } from 'kysely';
import type { Database } from './schema';
import { migrations } from './migrations/index';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

/**
 * A unit of work: the transaction to write through, and hooks that run only once it committed
 * (waking event streams, kicking workers). Nothing slow or external may run inside the transaction.
 */
export interface Work {
  db: Tx;
  afterCommit(fn: () => void): void;
}

/** Index definitions older than this may be missing before readiness reports schema_incompatible. */
const SCHEMA_DRIFT_GRACE_MS = 2 * 60_000; // spec: "missing or different for more than two minutes"

export interface SchemaStatus {
  state: 'ok' | 'drifting' | 'incompatible';
  detail?: string;
}

export class Store {
  readonly db: Db;
  private readonly sqlite: SQLite.Database;
  private desiredIndexes = new Map<string, string>();
  private driftSince: number | undefined;
  private unknownMigrations: string[] = [];
  private closed = false;

  constructor(file: string, options: { synchronous?: 'NORMAL' | 'FULL' } = {}) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    this.sqlite = new SQLite(file);
    this.sqlite.pragma('journal_mode = WAL');
    this.sqlite.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
    this.sqlite.pragma('foreign_keys = ON');
    this.sqlite.pragma('busy_timeout = 5000');
    this.db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(this.sqlite) }) });
  }

  /** Runs pending migrations. A database written by a newer Marquee is left untouched and reported. */
  async migrate(): Promise<void> {
    const known = new Set(Object.keys(migrations));
    const applied = await this.appliedMigrations();
    this.unknownMigrations = applied.filter((name) => !known.has(name));
    if (this.unknownMigrations.length > 0) return;
    // Unordered: features developed side by side may land their numbered migrations out of order.
    const migrator = new Migrator({
      db: this.db,
      provider: { getMigrations: async () => migrations },
      allowUnorderedMigrations: true,
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    this.desiredIndexes = this.currentIndexes();
  }

  private async appliedMigrations(): Promise<string[]> {
    const table = this.sqlite
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'`)
      .get();
    if (!table) return [];
    return (this.sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map(
      (r) => r.name,
    );
  }

  private currentIndexes(): Map<string, string> {
    const rows = this.sqlite
      .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
      .all() as { name: string; sql: string }[];
    return new Map(rows.map((r) => [r.name, r.sql]));
  }

  /** Compares the live schema with what the migrations created (readiness input). */
  schemaStatus(now: number): SchemaStatus {
    if (this.unknownMigrations.length > 0) {
      return {
        state: 'incompatible',
        detail: `database has migrations this build does not know: ${this.unknownMigrations.join(', ')}`,
      };
    }
    const current = this.currentIndexes();
    const drifted = [...this.desiredIndexes].filter(([name, def]) => current.get(name) !== def).map(([name]) => name);
    if (drifted.length === 0) {
      this.driftSince = undefined;
      return { state: 'ok' };
    }
    this.driftSince ??= now;
    const detail = `indexes missing or different: ${drifted.join(', ')}`;
    return now - this.driftSince > SCHEMA_DRIFT_GRACE_MS
      ? { state: 'incompatible', detail }
      : { state: 'drifting', detail };
  }

  get compatible(): boolean {
    return this.unknownMigrations.length === 0;
  }

  /** Runs fn in one transaction; after-commit hooks run once it committed, never on rollback. */
  async transaction<T>(fn: (work: Work) => Promise<T>): Promise<T> {
    const hooks: (() => void)[] = [];
    const result = await this.db.transaction().execute((tx) => fn({ db: tx, afterCommit: (h) => hooks.push(h) }));
    for (const hook of hooks) hook();
    return result;
  }

  /** A cheap liveness probe of the database for readiness. */
  async ping(): Promise<boolean> {
    try {
      await sql`SELECT 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.destroy();
  }
}

/** Statements the cache keeps before it starts over; the queries of a build are a bounded set. */
const STATEMENT_CACHE_SIZE = 2000;

/**
 * Kysely prepares every query anew; preparing dominates small queries under load, so prepared
 * statements are reused by SQL text (better-sqlite3 statements are reusable).
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
    close: () => sqlite.close(),
  };
}

/** True when the error is a unique-constraint violation (SQLite now, PostgreSQL later). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** JSON columns are text in SQLite; these keep the encoding in one place. */
export const json = {
  write: (value: unknown): string => JSON.stringify(value),
  read: <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T)),
};
