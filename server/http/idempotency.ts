// Idempotency records: an exact retry returns the recorded answer without repeating the effect;
// the same key on a different request is idempotency_mismatch. Records are written in the same
// transaction as the effect, so a crash can never leave one without the other.
import crypto from 'node:crypto';
import type { Keys } from '../keys';
import type { Locks } from '../locks';
import type { Db, Tx } from '../store/store';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_MIN } from '../../sdk/contract/limits';
import { problem } from '../problem';
import type { Reply } from './route';

export const IDEMPOTENCY_RETENTION_MS = 24 * 3600_000; // spec: 24 hours where named; we keep every route to it
/** A concurrent duplicate waits this long for the first request before being told to retry. */
const CONCURRENT_WAIT_MS = 30_000;

/** Headers of a recorded answer that a replay repeats; cookies and credit or rate headers are not. */
const RECORDED_HEADERS = new Set(['location', 'etag', 'cache-control', 'referrer-policy', 'content-location']);

export interface RecordId {
  scope: string;
  route: string;
  key: string;
}

export interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  fingerprint: string;
}

/** Thrown inside a transaction when a concurrent duplicate committed first: roll back and replay. */
export class ReplayInstead extends Error {
  constructor(readonly answer: RecordedAnswer) {
    super('idempotent replay');
  }
}

export class IdempotencyRecords {
  constructor(
    private readonly keys: Keys,
    private readonly locks: Locks,
  ) {}

  static validateKey(key: string): void {
    if (key.length < IDEMPOTENCY_KEY_MIN || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(key)) {
      throw problem(
        'invalid_request',
        `Idempotency-Key must be ${IDEMPOTENCY_KEY_MIN} to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters`,
        {
          errors: [{ field: 'Idempotency-Key', code: 'invalid', detail: 'length 8 to 200, visible ASCII' }],
        },
      );
    }
  }

  static fingerprint(parts: unknown[]): string {
    return crypto.createHash('sha256').update(canonicalJson(parts)).digest('hex');
  }

  async find(db: Db | Tx, id: RecordId, now: number): Promise<RecordedAnswer | undefined> {
    const row = await db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('scope', '=', id.scope)
      .where('route', '=', id.route)
      .where('key', '=', id.key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      status: row.status,
      headers: JSON.parse(row.headers) as Record<string, string>,
      body: row.body === null ? undefined : JSON.parse(this.keys.decrypt('idempotency-envelope', row.body)),
      fingerprint: row.fingerprint,
    };
  }

  /**
   * Records the answer; must run in the effect's transaction. Replaces an expired record of the same
   * key. With `eraseBodyAfterMs`, the body is erased that long after now (eraseExpiredBodies).
   */
  async record(
    tx: Tx,
    id: RecordId,
    fingerprint: string,
    answer: Reply,
    now: number,
    retentionMs: number,
    eraseBodyAfterMs?: number,
  ): Promise<void> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers ?? {}))
      if (RECORDED_HEADERS.has(name.toLowerCase())) headers[name] = value;
    if (answer.revision !== undefined) headers.ETag = `"${answer.revision}"`;
    await tx
      .deleteFrom('idempotency_records')
      .where('scope', '=', id.scope)
      .where('route', '=', id.route)
      .where('key', '=', id.key)
      .where('expires_at', '<=', now)
      .execute();
    await tx
      .insertInto('idempotency_records')
      .values({
        ...id,
        fingerprint,
        status: answer.status,
        headers: JSON.stringify(headers),
        body: answer.body === undefined ? null : this.keys.encrypt('idempotency-envelope', JSON.stringify(answer.body)),
        body_erase_at: eraseBodyAfterMs === undefined ? null : now + eraseBodyAfterMs,
        created_at: now,
        expires_at: now + retentionMs,
      })
      .execute();
  }

  /**
   * Lets one request per record id run at a time; a duplicate waits for the first to finish (then
   * finds its record) instead of executing alongside it. The record's unique key decides in the
   * end; the lock spares the duplicate a doomed run.
   */
  async exclusive<T>(id: RecordId, fn: () => Promise<T>): Promise<T> {
    const unlock = await this.locks.acquire(
      `idempotency\u0000${id.scope}\u0000${id.route}\u0000${id.key}`,
      CONCURRENT_WAIT_MS,
    );
    if (!unlock)
      throw problem('idempotency_in_progress', 'a request with this Idempotency-Key is still running; retry later');
    try {
      return await fn();
    } finally {
      await unlock();
    }
  }

  /** Erases the recorded bodies whose erasure time passed (housekeeping). */
  static async eraseExpiredBodies(db: Db, now: number): Promise<number> {
    const result = await db
      .updateTable('idempotency_records')
      .set({ body: null, body_erase_at: null })
      .where('body_erase_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  static async prune(db: Db, now: number): Promise<number> {
    const result = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/**
 * JSON with object keys sorted, so formatting and key order do not change a fingerprint. Iterative
 * (an explicit stack), so no nesting depth can overflow the call stack; its output is exactly what
 * the recursive form gave, so recorded fingerprints stay valid.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // A string is output as it stands; a `{ value }` is still to be rendered.
  const stack: (string | { value: unknown })[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const current = item.value;
    if (current === null || typeof current !== 'object') {
      out.push(JSON.stringify(current) ?? 'null');
    } else if (Array.isArray(current)) {
      stack.push(']');
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i] });
        if (i > 0) stack.push(',');
      }
      stack.push('[');
    } else {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      stack.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        stack.push({ value: v });
        stack.push(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      }
      stack.push('{');
    }
  }
  return out.join('');
}
