// The opaque cursor of a newest-first list paged by (created_at, id): the last row's two keys,
// base64url JSON. A cursor this server did not issue is refused as a field error, never guessed at.
import { type SelectQueryBuilder, sql } from 'kysely';
import { problem } from './problem';

export function encodeKeysetCursor(row: { created_at: number; id: string }): string {
  return Buffer.from(JSON.stringify([Number(row.created_at), row.id])).toString('base64url');
}

export function decodeKeysetCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      value[1].length <= 100 && // ids are short: a long one is no cursor of ours
      !value[1].includes('\u0000') // nor is one with a NUL, which PostgreSQL cannot compare (D-471)
    )
      return { createdAt: value[0] as number, id: value[1] };
  } catch {
    // fall through to the problem
  }
  throw problem('invalid_request', 'cursor: not a cursor this server issued', {
    errors: [{ field: 'cursor', code: 'invalid', detail: 'pass next_cursor unchanged' }],
  });
}

/**
 * One page of a newest-first list: `q`'s rows after `cursor`, ordered by (created_at, id) descending,
 * at most `limit` of them, and the cursor of the next page (null on the last). `table` qualifies the
 * two keys when `q` joins or selects from more than one table.
 */
export async function newestFirstPage<DB, TB extends keyof DB, Row extends { created_at: number; id: string }>(
  q: SelectQueryBuilder<DB, TB, Row>,
  cursor: string | undefined,
  limit: number,
  table?: string,
): Promise<{ rows: Row[]; next_cursor: string | null }> {
  const createdAt = sql.ref(table === undefined ? 'created_at' : `${table}.created_at`);
  const id = sql.ref(table === undefined ? 'id' : `${table}.id`);
  if (cursor) {
    const after = decodeKeysetCursor(cursor);
    q = q.where(
      sql<boolean>`(${createdAt} < ${after.createdAt} or (${createdAt} = ${after.createdAt} and ${id} < ${after.id}))`,
    );
  }
  const rows = await q
    .orderBy(createdAt, 'desc')
    .orderBy(id, 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  return { rows: page, next_cursor: rows.length > limit ? encodeKeysetCursor(page.at(-1)!) : null };
}
