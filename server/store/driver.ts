// The seam between Store and a database engine. Features see only Kysely and store.transaction;
// everything that differs per engine (connections, pragmas, statement caching, the catalog that
// schema status reads, error codes) lives behind this interface, one file per engine.
import type { Dialect, Transaction } from 'kysely';

export type Engine = 'sqlite' | 'postgres';

/** An open database: what Store needs beyond the Kysely dialect. */
export interface StoreDriver {
  readonly engine: Engine;
  /**
   * Kysely's dialect over this driver's connections. Destroying the Kysely instance leaves them
   * open; close() closes them.
   */
  readonly dialect: Dialect;
  /** Names of the migrations recorded as applied; empty for a new database. */
  appliedMigrations(): Promise<string[]>;
  /** The live schema's own indexes (not those backing primary keys or unique constraints), name → definition. */
  indexDefinitions(): Promise<Map<string, string>>;
  /** The live schema's tables, the migrator's bookkeeping tables excluded. */
  tableNames(): Promise<string[]>;
  /** True when the database answers a trivial query soon. */
  ping(): Promise<boolean>;
  /**
   * Holds the named locks until the transaction ends (commit or rollback), taking them in a
   * stable order. A no-op where transactions already run one at a time (SQLite).
   */
  lockInTransaction(tx: Transaction<unknown>, names: readonly string[]): Promise<void>;
  /**
   * True when a failed transaction may simply be run again: the engine aborted it for a deadlock,
   * a serialization failure, or a unique key another transaction committed meanwhile (a rerun
   * reads that row and answers as if it had come second).
   */
  isRetryable(error: unknown): boolean;
  close(): Promise<void>;
}

/** Engine-specific settings, given to whichever driver the URL names. */
export interface StoreOptions {
  /** SQLite `synchronous` under WAL: NORMAL survives process crashes, FULL also power loss. */
  sqliteSync?: 'NORMAL' | 'FULL';
}

/** Kysely's migration bookkeeping tables: not part of Marquee's schema. */
export const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'];
