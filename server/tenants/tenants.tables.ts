import type { Generation } from '../problem';

export interface TenantTable {
  /** `acc_…` for Model A accounts, `prj_…` for Model P projects; one store serves both. */
  id: string;
  generation: Generation;
  /** Model A sign-in address (unique), Model P unverified contact address. */
  email: string | null;
  name: string;
  /** `suspended` by an operator: every credential and session of the project is refused until resumed. */
  status: 'active' | 'suspended' | 'cancelled' | 'deleted';
  plan: string;
  independent_advertiser: number;
  screens_enabled: number;
  capabilities_revision: number;
  revision: number;
  used_bytes: number;
  reserved_bytes: number;
  content_limit_bytes: number;
  screen_count: number;
  screen_limit: number;
  credit_millis: number;
  /** UTC month (`YYYY-MM`) of the last included credit grant. */
  credit_grant_month: string;
  client_id: string | null;
  intent: string | null;
  created_at: number;
  updated_at: number;
}

export interface CredentialTable {
  id: string;
  tenant_id: string;
  kind: 'account' | 'project';
  /** SHA-256 of the bearer; the bearer itself is never stored. */
  token_hash: string;
  /** JSON array of capability areas. */
  areas: string;
  /** `pending`: a connected agent's bearer before activation (it authorizes activation only). */
  status: 'pending' | 'active' | 'revoked';
  issuance_id: string;
  issuance_expires_at: number;
  issuance_acked_at: number | null;
  created_at: number;
  revoked_at: number | null;
}

export interface CreditLedgerTable {
  tenant_id: string;
  /** UTC day `YYYY-MM-DD`. */
  day: string;
  kind: string;
  /** Signed sum in millicredits (debits negative). */
  millis: number;
  count: number;
}

export interface TenantTables {
  tenants: TenantTable;
  credentials: CredentialTable;
  credit_ledger: CreditLedgerTable;
}
