export interface IdempotencyRecordTable {
  /** Tenant id, or `anon` for unauthenticated routes. */
  scope: string;
  /** Method and concrete path, e.g. `PATCH /api/v1/screens/scr_…`. */
  route: string;
  key: string;
  /** SHA-256 over the parts of the request that must be identical on a retry. */
  fingerprint: string;
  status: number;
  /** JSON object of the recorded response headers. */
  headers: string;
  /** The recorded body, encrypted at rest (it may carry a one-time credential). */
  body: string | null;
  /** When the body is erased (the route's eraseBodyAfterMs); null keeps it as long as the record. */
  body_erase_at: number | null;
  created_at: number;
  expires_at: number;
}

export interface IdempotencyTables {
  idempotency_records: IdempotencyRecordTable;
}
