// Queries of a hot path, built and compiled once per SQL dialect and run with new values: building a
// Kysely query (immutable nodes, frozen at every step) and compiling it cost more than SQLite takes
// to run a one-row statement, and a fleet action runs the same few statements for 500 screens.
// The query is built with placeholder values (`slot(i)`), and each run puts its arguments where
// the placeholders landed in the compiled parameters. The store's plugins still see every run
// (the write watch, write-watch.ts), so caches hear of these writes as of any other.
import {
  createQueryId,
  type Compilable,
  type CompiledQuery,
  type Kysely,
  type QueryId,
  type QueryResult,
} from 'kysely';
import type { Database } from './schema';

/** A store's Kysely or one of its transactions (store.ts's Db and Tx). */
type Db = Kysely<Database>;

/** Where a run's argument goes: a placeholder value in the query as built. */
class Slot {
  constructor(readonly index: number) {}
}

/** The placeholder of argument `index`, typed as the value it stands for. */
export type SlotOf = <T = never>(index: number) => T;

const slot: SlotOf = <T = never>(index: number) => new Slot(index) as T;

export interface CompiledOnce<A extends readonly unknown[], R> {
  /** Runs the query on `db` (a store or one of its transactions) with these values. */
  run(db: Db, ...args: A): Promise<QueryResult<R>>;
}

/**
 * A query compiled once per SQL dialect. `build` must put every argument in through `slot(i)` and use
 * no argument in its shape (no lists: `in` takes a fixed number of values); the rest is constant.
 */
export function compiledOnce<A extends readonly unknown[], R>(
  build: (db: Db, slot: SlotOf) => Compilable<R>,
): CompiledOnce<A, R> {
  // By dialect: the SQL text is the dialect's, whichever store or transaction runs it. Process-wide
  // like the query itself, and pure (a query dropped compiles again the same).
  const compiled = new Map<unknown, CompiledQuery<R>>();
  return {
    async run(db, ...args) {
      const executor = db.getExecutor();
      const dialect = executor.adapter.constructor;
      let query = compiled.get(dialect);
      let queryId: QueryId;
      if (query) {
        // The plugins see this run as they saw the one that compiled it (compile() showed them that).
        queryId = createQueryId();
        executor.transformQuery(query.query, queryId);
      } else {
        compiled.set(dialect, (query = build(db, slot).compile()));
        queryId = query.queryId;
      }
      const parameters = query.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
      return db.executeQuery<R>({ ...query, queryId, parameters });
    },
  };
}
