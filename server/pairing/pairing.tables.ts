export interface PairingSessionTable {
  /** `pair_…`, named by the pairing cookie. */
  id: string;
  /** Six characters of the pairing alphabet; unique among pending sessions. */
  code: string;
  state: 'pending' | 'claimed' | 'completed';
  /** The code can be claimed until then. */
  code_expires_at: number;
  /** The pairing cookie (and so completion) is valid until then. */
  expires_at: number;
  tenant_id: string | null;
  screen_id: string | null;
  /** Sent on the pairing stream once claimed; the cookie is the proof, the nonce is not secret. */
  completion_nonce: string | null;
  device_id: string | null;
  created_at: number;
  claimed_at: number | null;
  completed_at: number | null;
}

/** The paired-device credential a browser player holds as its device cookie. */
export interface ScreenDeviceTable {
  /** `dev_…` */
  id: string;
  screen_id: string;
  tenant_id: string;
  status: 'active' | 'revoked';
  /** How it was bound: a completed pairing session, a browser provisioning exchange, or a native identity. */
  origin: 'pairing' | 'provisioning' | 'native';
  created_at: number;
  revoked_at: number | null;
}

/** A runtime session named by the runtime cookie; revocable, and bound to a content-access generation. */
export interface RuntimeSessionTable {
  /** `rts_…` */
  id: string;
  screen_id: string;
  tenant_id: string;
  /** 1 when created from a device cookie (paired-device mutation profile). */
  paired: number;
  device_id: string | null;
  content_access_generation: number;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** A browser provisioning grant: a fragment token a browser exchanges once for a device cookie. */
export interface ScreenProvisioningTable {
  /** `prov_…` */
  id: string;
  screen_id: string;
  tenant_id: string;
  /** SHA-256 of the fragment token; the token itself is only in the (encrypted) idempotency record. */
  token_hash: string;
  expires_at: number;
  exchange_id: string | null;
  device_id: string | null;
  exchanged_at: number | null;
  created_at: number;
}

export interface PairingTables {
  pairing_sessions: PairingSessionTable;
  screen_devices: ScreenDeviceTable;
  runtime_sessions: RuntimeSessionTable;
  screen_provisionings: ScreenProvisioningTable;
}
