/** A single-use launch ticket; only the SHA-256 of the ticket is stored. */
export interface LaunchTicketTable {
  ticket_hash: string;
  tenant_id: string;
  release_id: string;
  host_label: string;
  screen_id: string;
  content_generation: number;
  manifest_revision: string;
  grant_id: string;
  expires_at: number;
  /** Set once, atomically, by the request that consumed the ticket. */
  consumed_at: number | null;
  created_at: number;
}

/**
 * A manifest grant as release hosts know it: release-grant cookies name one and stop working the
 * moment it is revoked (revokeReleaseGrants).
 */
export interface ReleaseGrantTable {
  id: string;
  tenant_id: string;
  screen_id: string;
  content_generation: number;
  manifest_revision: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ReleaseHostTables {
  launch_tickets: LaunchTicketTable;
  release_grants: ReleaseGrantTable;
}
