// The opaque cursor of a newest-first list paged by (created_at, id): the last row's two keys,
// base64url JSON. A cursor this server did not issue is refused as a field error, never guessed at.
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
      value[1].length <= 100 // ids are short: a long one is no cursor of ours
    )
      return { createdAt: value[0] as number, id: value[1] };
  } catch {
    // fall through to the problem
  }
  throw problem('invalid_request', 'cursor: not a cursor this server issued', {
    errors: [{ field: 'cursor', code: 'invalid', detail: 'pass next_cursor unchanged' }],
  });
}
