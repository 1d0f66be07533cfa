import type { AgentConnectionState } from '../../sdk/contract/agents';

export interface AgentTable {
  /** `agt_…` */
  id: string;
  tenant_id: string;
  /** The project bearer this installation holds (credentials.id). */
  credential_id: string;
  connection_id: string | null;
  name: string;
  agent_type: string;
  platform: string | null;
  version: string | null;
  state: 'pending' | 'active' | 'revoked';
  created_at: number;
  activated_at: number | null;
  revoked_at: number | null;
  /** A pending installation must activate before this. */
  delivery_expires_at: number | null;
}

export interface AgentConnectionTable {
  /** `agc_…` */
  id: string;
  /** SHA-256 of the temporary Marquee-Agent-Connect credential. */
  token_hash: string;
  /** What the agent shows and the approving member types: it binds the approval to this agent. */
  user_code: string;
  name: string;
  agent_type: string;
  platform: string | null;
  version: string | null;
  /** JSON array of capability areas. */
  capabilities: string;
  /** The recipient's X25519 public key, `x` of its JWK (base64url). */
  recipient_key: string;
  /** Stored states; `expired` is also derived from the windows. */
  state: AgentConnectionState;
  created_at: number;
  /** Approval deadline. */
  expires_at: number;
  decided_at: number | null;
  decided_by: string | null;
  tenant_id: string | null;
  agent_id: string | null;
  /** Collection and activation deadline once approved. */
  delivery_expires_at: number | null;
  /** JSON of the sealed credential (AgentCredentialEnvelope); deleted on activation or expiry. */
  envelope: string | null;
  updated_at: number;
}

export interface AgentTables {
  agents: AgentTable;
  agent_connections: AgentConnectionTable;
}
