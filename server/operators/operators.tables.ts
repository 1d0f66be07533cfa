export interface OperatorTable {
  /** `opr_…` */
  id: string;
  name: string;
  /** SHA-256 of the operator bearer; the bearer is shown once, when made. */
  token_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface OperatorTables {
  operators: OperatorTable;
}
