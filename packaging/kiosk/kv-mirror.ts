// Application key/value storage as the kiosk keeps it: every entry an application read or wrote
// through the agent, so reads are answered offline, and the writes made while upstream was away,
// queued in order with their idempotency keys and replayed when it is back (upstream wins a
// conflict: the write is dropped and the entry read again).
import crypto from 'node:crypto';
import type { KVEntry, KVList, KVSummary, KVWrite } from '../../sdk/contract/kv';
import { MarqueeProblem } from '../../sdk/client/problem';
import type { AgentDb } from './agent-db';

export interface QueuedKvWrite {
  seq: number;
  applicationId: string;
  /** `<pageId>/<placementId>`: whose upstream capability replays it. */
  placement: string;
  method: 'PUT' | 'DELETE';
  key: string;
  body: KVWrite | null;
  ifMatch: number | null;
  idempotencyKey: string;
}

/** A local refusal that mirrors what upstream would answer. */
export class LocalKvProblem extends Error {
  constructor(
    readonly code: 'not_found' | 'revision_conflict',
    readonly status: number,
    detail: string,
    readonly currentRevision?: number,
  ) {
    super(detail);
  }
}

function summaryOf(entry: KVEntry): KVSummary {
  const { value_base64: _value, ...summary } = entry as KVEntry & { value_base64: string };
  return summary;
}

export class KvMirror {
  constructor(
    private readonly db: AgentDb,
    private readonly now: () => number = Date.now,
  ) {}

  /** The entry as last seen: an entry, null when it is known deleted, undefined when never seen. */
  get(applicationId: string, key: string): KVEntry | null | undefined {
    const row = this.db
      .prepare('SELECT entry FROM kv_entries WHERE application_id = ? AND key = ?')
      .get(applicationId, key) as { entry: string | null } | undefined;
    if (!row) return undefined;
    return row.entry === null ? null : (JSON.parse(row.entry) as KVEntry);
  }

  list(applicationId: string): KVList {
    const rows = this.db
      .prepare('SELECT entry FROM kv_entries WHERE application_id = ? AND entry IS NOT NULL ORDER BY key')
      .all(applicationId) as { entry: string }[];
    return { items: rows.map((r) => summaryOf(JSON.parse(r.entry) as KVEntry)), next_cursor: null };
  }

  remember(entry: KVEntry): void {
    this.db
      .prepare(
        `INSERT INTO kv_entries (application_id, key, entry, revision, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(application_id, key) DO UPDATE SET entry = excluded.entry, revision = excluded.revision,
         updated_at = excluded.updated_at`,
      )
      .run(entry.application_id, entry.key, JSON.stringify(entry), entry.revision, this.now());
  }

  rememberDeleted(applicationId: string, key: string, revision: number): void {
    this.db
      .prepare(
        `INSERT INTO kv_entries (application_id, key, entry, revision, updated_at) VALUES (?, ?, NULL, ?, ?)
         ON CONFLICT(application_id, key) DO UPDATE SET entry = NULL, revision = excluded.revision,
         updated_at = excluded.updated_at`,
      )
      .run(applicationId, key, revision, this.now());
  }

  /** Entries of a list answer (summaries refresh what is known of their entries' revisions only). */
  rememberList(applicationId: string, list: KVList): void {
    for (const item of list.items) {
      const known = this.get(applicationId, item.key);
      if (known && known.revision !== item.revision) {
        // A newer revision upstream than the value held: the value is no longer the entry's.
        this.db.prepare('DELETE FROM kv_entries WHERE application_id = ? AND key = ?').run(applicationId, item.key);
      }
    }
  }

  pending(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM kv_queue').get() as { n: number }).n;
  }

  /** Forgets every entry and queued write (the screen they belong to is gone). */
  clear(): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM kv_queue').run();
      this.db.prepare('DELETE FROM kv_entries').run();
    });
  }

  /**
   * Applies a write locally (the conditions upstream would check, against what is known here) and
   * queues it for upstream. Returns the entry the application sees now (null for a delete).
   */
  writeOffline(write: Omit<QueuedKvWrite, 'seq'>): KVEntry | null {
    return this.db.transaction(() => {
      const current = this.get(write.applicationId, write.key);
      const revision = current?.revision ?? 0;
      if (write.method === 'DELETE' && !current) throw new LocalKvProblem('not_found', 404, `no key ${write.key}`);
      if (write.ifMatch !== null && write.ifMatch !== revision)
        throw new LocalKvProblem('revision_conflict', 412, `If-Match "${write.ifMatch}" is stale`, revision);
      if (write.method === 'PUT' && write.ifMatch === null && current)
        throw new LocalKvProblem('revision_conflict', 412, 'the key exists; send If-Match to update it', revision);
      this.db
        .prepare(
          `INSERT INTO kv_queue (application_id, placement, method, key, body, if_match, idempotency_key, queued_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          write.applicationId,
          write.placement,
          write.method,
          write.key,
          write.body ? JSON.stringify(write.body) : null,
          write.ifMatch,
          write.idempotencyKey,
          this.now(),
        );
      if (write.method === 'DELETE') {
        this.rememberDeleted(write.applicationId, write.key, revision + 1);
        return null;
      }
      const bytes = Buffer.from(write.body!.value_base64, 'base64');
      const entry: KVEntry = {
        application_id: write.applicationId,
        key: write.key,
        value_base64: write.body!.value_base64,
        content_type: write.body!.content_type,
        bytes: bytes.length,
        sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
        revision: revision + 1,
      } as KVEntry;
      this.remember(entry);
      return entry;
    });
  }

  /**
   * Replays queued writes in order. `send` answers upstream's entry (PUT) or nothing (DELETE); a
   * conflict or other permanent refusal drops the write and asks `refresh` to read the key again.
   * Stops at the first write upstream cannot take yet.
   */
  async replay(
    send: (write: QueuedKvWrite) => Promise<KVEntry | undefined>,
    refresh: (write: QueuedKvWrite) => Promise<void>,
  ): Promise<{ sent: number; dropped: number }> {
    let sent = 0;
    let dropped = 0;
    for (;;) {
      const row = this.db.prepare('SELECT * FROM kv_queue ORDER BY seq LIMIT 1').get() as
        | {
            seq: number;
            application_id: string;
            placement: string;
            method: 'PUT' | 'DELETE';
            key: string;
            body: string | null;
            if_match: number | null;
            idempotency_key: string;
          }
        | undefined;
      if (!row) return { sent, dropped };
      const write: QueuedKvWrite = {
        seq: row.seq,
        applicationId: row.application_id,
        placement: row.placement,
        method: row.method,
        key: row.key,
        body: row.body === null ? null : (JSON.parse(row.body) as KVWrite),
        ifMatch: row.if_match,
        idempotencyKey: row.idempotency_key,
      };
      try {
        const entry = await send(write);
        // Later queued writes of the same key hold local revisions: only the last one's answer is the entry.
        const later = this.db
          .prepare('SELECT COUNT(*) AS n FROM kv_queue WHERE application_id = ? AND key = ? AND seq > ?')
          .get(write.applicationId, write.key, write.seq) as { n: number };
        if (later.n === 0) {
          if (entry) this.remember(entry);
        }
        sent++;
      } catch (error) {
        const permanent =
          error instanceof MarqueeProblem &&
          error.status >= 400 &&
          error.status < 500 &&
          ![401, 408, 429].includes(error.status);
        if (!permanent) throw error;
        dropped++;
        await refresh(write).catch(() => undefined);
      }
      this.db.prepare('DELETE FROM kv_queue WHERE seq = ?').run(write.seq);
    }
  }
}
