/** A fleet action pinned under its Idempotency-Key: the resolved screens and the prepared action. */
export interface FleetActionTable {
  tenant_id: string;
  idempotency_key: string;
  fingerprint: string;
  /** JSON: the screen ids in selector order. */
  screen_ids: string;
  /** JSON: the action as prepared once (entry ids, the takeover's end). */
  action: string;
  created_at: number;
}

/** One screen's finished answer within a pinned fleet action (JSON of ScreenActionItem). */
export interface FleetActionResultTable {
  tenant_id: string;
  idempotency_key: string;
  screen_id: string;
  result: string;
}

export interface FleetTables {
  fleet_actions: FleetActionTable;
  fleet_action_results: FleetActionResultTable;
}
