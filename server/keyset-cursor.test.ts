// The list cursor: what it encodes comes back, and anything this server did not issue is refused
// as a field error on `cursor`.
import { describe, expect, it } from 'vitest';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { ProblemError } from './problem';

describe('keyset cursors', () => {
  it('give back the row position they were made from', () => {
    const cursor = encodeKeysetCursor({ created_at: 1_795_000_000_123, id: 'inv_abc' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeKeysetCursor(cursor)).toEqual({ createdAt: 1_795_000_000_123, id: 'inv_abc' });
  });

  it.each([
    ['not base64 JSON', 'not a cursor'],
    ['a fraction', Buffer.from('[1.5,"x"]').toString('base64url')],
    ['a number id', Buffer.from('[1,2]').toString('base64url')],
    ['three members', Buffer.from('[1,"x","y"]').toString('base64url')],
    ['an over-long id', Buffer.from(JSON.stringify([1, 'x'.repeat(101)])).toString('base64url')],
  ])('refuse %s with invalid_request on the cursor field', (_, cursor) => {
    let thrown: unknown;
    try {
      decodeKeysetCursor(cursor);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProblemError);
    expect((thrown as ProblemError).code).toBe('invalid_request');
    expect((thrown as ProblemError).options.errors?.[0]?.field).toBe('cursor');
  });
});
