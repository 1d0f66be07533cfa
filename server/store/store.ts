// The relational store: Kysely over the StoreDriver the database URL names (SQLite by default),
// numbered migrations, transactions with after-commit hooks. Features see only Kysely and
// store.transaction, so which engine runs underneath is decided once, in openStore.
import { compiledOnce } from './compiled-once';
import { WriteWatch, type WatchedWriteRelay } from './write-watch';
import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import type { Database } from './schema';
import type { StoreDriver, StoreOptions } from './driver';
import { migrationsFor } from './migrations/index';
import { isPostgresUniqueViolation, openPostgres } from './postgres-driver';
import { isSqliteUniqueViolation, openSqlite } from './sqlite-driver';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

/**
 * A unit of work: the transaction to write through, and hooks that run only once it committed
 * (waking event streams, kicking workers). Nothing slow or external may run inside the transaction.
 */
export interface Work {
  db: Tx;
  afterCommit(fn: () => void): void;
  /**
   * Holds the named locks until this transaction ends. Only where concurrent transactions would
   * otherwise interleave wrongly on an engine that runs them side by side (event positions).
   */
  lock(...names: string[]): Promise<void>;
}

/**
 * Thrown inside a transaction when a compare-and-set found the row changed since it was read in
 * the same transaction (a concurrent writer on an engine that runs transactions side by side):
 * Store.transaction runs the unit of work again, which reads the new row.
 */
export class StaleWrite extends Error {
  constructor(what: string) {
    super(`${what} changed while this transaction ran`);
  }
}

/**
 * For a compare-and-set update (`… WHERE revision = <the revision read>`): when it touched no row,
 * another transaction changed the row since this one read it, and the unit of work runs again.
 */
export function expectUpdated(result: { numUpdatedRows: bigint }, what: string): void {
  if (result.numUpdatedRows === 0n) throw new StaleWrite(what);
}

/** How many times one unit of work runs before a retryable failure is given up and thrown. */
const TRANSACTION_ATTEMPTS = 5;

/** Index definitions older than this may be missing before readiness reports schema_incompatible. */
const SCHEMA_DRIFT_GRACE_MS = 2 * 60_000; // spec: "missing or different for more than two minutes"

export interface SchemaStatus {
  state: 'ok' | 'drifting' | 'incompatible';
  detail?: string;
}

/**
 * The one place an engine is chosen: opens the database the URL names. Adding an engine is one
 * driver file and one line here.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) return new Store(openSqlite(url.slice('sqlite:'.length), options));
  if (/^postgres(ql)?:\/\//.test(url)) return new Store(await openPostgres(url));
  throw new Error('unsupported database URL: use sqlite:<file> or postgres://…');
}

export class Store {
  readonly db: Db;
  private desiredIndexes = new Map<string, string>();
  private driftSince: number | undefined;
  private unknownMigrations: string[] = [];
  private closed = false;
  private readonly beforeCloseHooks: (() => Promise<void>)[] = [];

  /** Watchers of updates and deletes, for in-process caches (write-watch.ts). */
  private readonly writeWatch = new WriteWatch();

  constructor(readonly driver: StoreDriver) {
    this.db = new Kysely<Database>({ dialect: driver.dialect, plugins: [this.writeWatch] });
  }

  /**
   * Calls `changed` as a statement updates (setting one of `columns`, when named) or deletes rows of
   * `table`: an in-process cache drops what it derived from them.
   */
  watchWrites(table: keyof Database & string, columns: readonly string[] | undefined, changed: () => void): void {
    this.writeWatch.watch(table, columns, changed);
  }

  /** Hands every write that reached a watcher to `relay`: replicas tell each other of them (D-386). */
  relayWatchedWrites(relay: WatchedWriteRelay): void {
    this.writeWatch.relayTo(relay);
  }

  /** A write another process made: the watchers it reaches run as if it ran here. */
  replayWatchedWrite(table: string, columns: readonly (string | undefined)[] | 'delete'): void {
    this.writeWatch.replay(table, columns === 'delete' ? undefined : columns);
  }

  /** Writes of other processes may have been missed (the notifier reconnected): every watcher runs. */
  replayAllWatchedWrites(): void {
    this.writeWatch.replayAll();
  }

  /** Runs pending migrations. A database written by a newer Marquee is left untouched and reported. */
  async migrate(): Promise<void> {
    const migrations = migrationsFor(this.driver.engine);
    const applied = await this.driver.appliedMigrations();
    this.unknownMigrations = applied.filter((name) => !(name in migrations));
    if (this.unknownMigrations.length > 0) return;
    // Unordered: features developed side by side may land their numbered migrations out of order.
    const migrator = new Migrator({
      db: this.db,
      provider: { getMigrations: async () => migrations },
      allowUnorderedMigrations: true,
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw migrationFailure(error);
    this.desiredIndexes = await this.driver.indexDefinitions();
  }

  /** Compares the live schema with what the migrations created (readiness input). */
  async schemaStatus(now: number): Promise<SchemaStatus> {
    if (this.unknownMigrations.length > 0) {
      return {
        state: 'incompatible',
        detail: `database has migrations this build does not know: ${this.unknownMigrations.join(', ')}`,
      };
    }
    const current = await this.driver.indexDefinitions();
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

  /**
   * Runs fn in one transaction; after-commit hooks run once it committed, never on rollback. A
   * transaction the engine aborted for a concurrent writer (or a StaleWrite) runs again from the
   * start, so fn must keep its effects in the transaction (or in after-commit hooks).
   */
  async transaction<T>(fn: (work: Work) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const hooks: (() => void)[] = [];
      let result: T;
      try {
        result = await this.db.transaction().execute((tx) =>
          fn({
            db: tx,
            afterCommit: (h) => hooks.push(h),
            lock: (...names) => this.driver.lockInTransaction(tx as Transaction<unknown>, names),
          }),
        );
      } catch (error) {
        const retryable = error instanceof StaleWrite || this.driver.isRetryable(error);
        if (retryable && attempt < TRANSACTION_ATTEMPTS) continue;
        throw error;
      }
      for (const hook of hooks) hook();
      return result;
    }
  }

  /** A cheap liveness probe of the database for readiness. */
  ping(): Promise<boolean> {
    return this.driver.ping();
  }

  /** Runs `flush` when the store closes, before the database does (writes batched in memory). */
  beforeClose(flush: () => Promise<void>): void {
    this.beforeCloseHooks.push(flush);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const flush of this.beforeCloseHooks) await flush();
    await this.db.destroy();
    await this.driver.close();
  }
}

/**
 * Runs fn inside `work` as a unit of its own: a savepoint that is rolled back, with the hooks fn
 * registered, when fn throws (and the error rethrown), so the rest of the transaction stays and
 * commits. Lets many small units share one commit (a fleet action's screens) without one's failure
 * undoing the others. Not reentrant with itself on the same transaction.
 */
export async function inSavepoint<T>(work: Work, fn: (work: Work) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  await savepoint.open.run(work.db);
  try {
    const result = await fn({ db: work.db, afterCommit: (h) => hooks.push(h), lock: work.lock });
    await savepoint.release.run(work.db);
    for (const hook of hooks) work.afterCommit(hook);
    return result;
  } catch (error) {
    await savepoint.rollback.run(work.db);
    await savepoint.release.run(work.db);
    throw error;
  }
}

/** The savepoint statements (a fleet fan-out runs one savepoint a screen), compiled once. */
const savepoint = {
  open: compiledOnce<[], unknown>((db) => ({ compile: () => sql`SAVEPOINT unit`.compile(db) })),
  release: compiledOnce<[], unknown>((db) => ({ compile: () => sql`RELEASE SAVEPOINT unit`.compile(db) })),
  rollback: compiledOnce<[], unknown>((db) => ({ compile: () => sql`ROLLBACK TO SAVEPOINT unit`.compile(db) })),
};

/** PostgreSQL's insufficient_privilege: on 15 and later, a database its user does not own has a public schema it may not create in. */
const INSUFFICIENT_PRIVILEGE = '42501';

/** A failed migration as the start reports it: a refused privilege says what the operator must change. */
function migrationFailure(error: unknown): Error {
  const failure = error instanceof Error ? error : new Error(String(error));
  if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) return failure;
  // The code stays: the start prints this as a refusal of the environment, without a stack.
  return Object.assign(
    new Error(
      `${failure.message}: the database user may not create Marquee's tables. Make it the database's owner ` +
        '(CREATE DATABASE … OWNER <user>, or ALTER DATABASE … OWNER TO <user>; docs/operations.md, "PostgreSQL and several replicas")',
      { cause: error },
    ),
    { code: INSUFFICIENT_PRIVILEGE },
  );
}

/** True when the error is a unique-constraint violation, whichever engine raised it. */
export function isUniqueViolation(error: unknown): boolean {
  return isSqliteUniqueViolation(error) || isPostgresUniqueViolation(error);
}

/** JSON columns are text on every engine; these keep the encoding in one place. */
export const json = {
  write: (value: unknown): string => JSON.stringify(value),
  read: <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T)),
};
