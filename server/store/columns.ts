// Column types of the migrations, named by the kind of value a column holds, so every engine
// stores it right. Migrations use these instead of spelling a type, so a new column picks a kind.
import type { CreateTableBuilder } from 'kysely';
import type { Engine } from './driver';

export const column = {
  /**
   * Epoch milliseconds and durations: 64-bit. PostgreSQL's `integer` is 32-bit, and `Date.now()`
   * is past 2^40. SQLite's `bigint` has INTEGER affinity, exactly like `integer`.
   */
  millis: 'bigint',
  /**
   * Byte counts, revisions, generations, positions and other counters: 64-bit, since a busy
   * installation may pass 2^31 of any of them (a 3 GiB quota, one KV key written every second for 70 years).
   */
  count: 'bigint',
  /** 0 or 1. Kept an integer on every engine, so queries compare it with 0 and 1 alike. */
  flag: 'integer',
  /** Small integers a spec limit bounds far below 2^31: HTTP statuses, pixel sizes, file ordinals. */
  bounded: 'integer',
} as const;

/** Opaque bytes: SQLite's `blob`, PostgreSQL's `bytea`. */
export function binaryColumn(engine: Engine): 'blob' | 'bytea' {
  return engine === 'postgres' ? 'bytea' : 'blob';
}

/**
 * An increasing 64-bit primary key the database assigns on insert. SQLite wants exactly `integer
 * primary key autoincrement` (a rowid alias that never reuses a value); PostgreSQL an identity column.
 * Use with `createTable(…).$call(identityColumn('position', engine))`.
 */
export function identityColumn(name: string, engine: Engine) {
  return <T extends CreateTableBuilder<any, any>>(table: T): T =>
    engine === 'postgres'
      ? (table.addColumn(name, 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity()) as T)
      : (table.addColumn(name, 'integer', (c) => c.primaryKey().autoIncrement()) as T);
}
