// The agent's own SQLite database in the kiosk data dir: its enrollment, the manifests it holds,
// what the mirror stores, the queues of reports and key/value writes waiting for upstream, and the
// key/value entries it last saw. better-sqlite3 directly: one process, small synchronous queries,
// and FULL synchronous commits (a signage box loses power without warning).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  // role: active (on glass), next (being mirrored), old (evictable history)
  `CREATE TABLE IF NOT EXISTS manifests (
     revision TEXT PRIMARY KEY, role TEXT NOT NULL, document TEXT NOT NULL, received_at INTEGER NOT NULL,
     activated_at INTEGER)`,
  // One stored thing of the mirror: a blob by its sha256, or an extracted release tree.
  `CREATE TABLE IF NOT EXISTS entries (
     key TEXT PRIMARY KEY, kind TEXT NOT NULL, bytes INTEGER NOT NULL, last_used INTEGER NOT NULL,
     verified_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS report_queue (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL, queued_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE IF NOT EXISTS kv_entries (
     application_id TEXT NOT NULL, key TEXT NOT NULL, entry TEXT, revision INTEGER NOT NULL, updated_at INTEGER NOT NULL,
     PRIMARY KEY (application_id, key))`,
  `CREATE TABLE IF NOT EXISTS kv_queue (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, application_id TEXT NOT NULL, placement TEXT NOT NULL, method TEXT NOT NULL,
     key TEXT NOT NULL, body TEXT, if_match INTEGER, idempotency_key TEXT NOT NULL, queued_at INTEGER NOT NULL)`,
];

export class AgentDb {
  readonly sqlite: SQLite.Database;
  private readonly statements = new Map<string, SQLite.Statement>();

  constructor(dataDir: string) {
    // Owner-only, whoever made the directory: it holds the mirror, and this database the agent's
    // local signing key, a pending pairing credential and the sync group's LAN key.
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dataDir, 0o700);
    const file = path.join(dataDir, 'agent.db');
    // SQLite gives its -wal and -shm files the database file's mode; older versions left all three 0644.
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    for (const name of [file, `${file}-wal`, `${file}-shm`]) {
      try {
        if (fs.statSync(name).mode & 0o077) fs.chmodSync(name, 0o600);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    this.sqlite = new SQLite(file);
    this.sqlite.pragma('journal_mode = WAL');
    this.sqlite.pragma('synchronous = FULL');
    this.sqlite.pragma('busy_timeout = 5000');
    for (const statement of SCHEMA) this.sqlite.exec(statement);
  }

  /** A prepared statement, made once per SQL text (the agent runs a small fixed set of them). */
  prepare(sql: string): SQLite.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.sqlite.prepare(sql)));
    return statement;
  }

  get<T>(name: string): T | undefined {
    const row = this.prepare('SELECT value FROM state WHERE name = ?').get(name) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  set(name: string, value: unknown): void {
    this.prepare(
      'INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
    ).run(name, JSON.stringify(value));
  }

  delete(name: string): void {
    this.prepare('DELETE FROM state WHERE name = ?').run(name);
  }

  transaction<T>(fn: () => T): T {
    return this.sqlite.transaction(fn)();
  }

  /**
   * Runs `fn` with commits that wait for no flush (synchronous = NORMAL): for rows whose loss in a
   * power cut costs only work done again, written where a flush would hold up the event loop (a
   * landed download's row: 26 flushes held the mirror's reads back by about 130 ms). The next FULL
   * commit (the manifest that uses the download, for one) flushes them with it.
   */
  relaxed<T>(fn: () => T): T {
    this.sqlite.pragma('synchronous = NORMAL');
    try {
      return fn();
    } finally {
      this.sqlite.pragma('synchronous = FULL');
    }
  }

  close(): void {
    if (this.sqlite.open) this.sqlite.close();
  }
}
