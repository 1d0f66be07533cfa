/**
 * One key of an application's key/value store (owner and runtime see the same entries). A deleted
 * key keeps its row as a tombstone for a day, so a re-created key continues its revisions and a
 * stale If-Match from before the delete cannot match by accident; after that the application's
 * revision floor (below) keeps the promise.
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

/**
 * Per application, the highest revision any pruned tombstone reached. A key written with no row
 * starts above it, so a revision once given to a key is never given to that key again.
 */
export interface KvRevisionFloorTable {
  application_id: string;
  tenant_id: string;
  revision: number;
}

export interface KvTables {
  kv_entries: KvEntryTable;
  kv_revision_floors: KvRevisionFloorTable;
}
