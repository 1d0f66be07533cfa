/**
 * One key of an application's key/value store (owner and runtime see the same entries). A deleted
 * key keeps its row as a tombstone for a day, so a re-created key continues its revisions and a
 * stale If-Match from before the delete cannot match by accident.
 */
export interface KvEntryTable {
  application_id: string;
  key: string;
  tenant_id: string;
  /** The value bytes; null on a tombstone. */
  value: Buffer | null;
  content_type: string;
  bytes: number;
  sha256: string;
  revision: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface KvTables {
  kv_entries: KvEntryTable;
}
