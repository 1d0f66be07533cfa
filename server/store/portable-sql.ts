// SQL expressions that mean the same on every engine, where SQLite and PostgreSQL spell a function
// differently (SQLite's scalar max(a, b) is PostgreSQL's GREATEST(a, b)).
import { sql, type Expression, type RawBuilder } from 'kysely';

/** The larger of two non-null values; written as CASE, which every engine reads alike. */
export function greatest<T extends number>(a: Expression<T>, b: Expression<T>): RawBuilder<T> {
  return sql<T>`CASE WHEN ${a} >= ${b} THEN ${a} ELSE ${b} END`;
}
