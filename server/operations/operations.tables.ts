import type { OperationState } from '../../sdk/contract/operations';

export interface OperationTable {
  id: string;
  tenant_id: string;
  kind: string;
  state: OperationState;
  /** Bumped on every claim and on cancel; a worker may finalize only with the fence it claimed. */
  fence: number;
  attempts: number;
  /** While running: the claim lapses at this time unless its holder renews it. */
  lease_expires_at: number | null;
  /** Worker identity holding the claim (running) or receiving the body (receiving). */
  lease_owner: string | null;
  /** JSON: what the worker needs. */
  input: string;
  /** JSON: the public result once succeeded. */
  result: string | null;
  /** JSON: an RFC 9457 problem once failed. */
  error: string | null;
  request_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface OperationTables {
  operations: OperationTable;
}
