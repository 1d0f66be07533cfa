/** The native side of a pairing session: who may follow and complete it, and the key it binds. */
export interface NativePairingSessionTable {
  /** The pairing_sessions row (code, claim, completion nonce) this extends. */
  pairing_session_id: string;
  /** SHA-256 of the `mqp_…` credential; the credential itself is only in the (encrypted) idempotency record. */
  credential_hash: string;
  /** RFC 7638 thumbprint of the key that started it; only that key completes it. */
  kid: string;
  public_x: string;
  /** HostFacts JSON as the device sent them (null when it sent none). */
  host: string | null;
  created_at: number;
}

/**
 * A device key bound to a screen. `active` is the screen's identity; after a recovery the old key
 * is `retiring` until `retires_at` (its sessions keep working for the grace), then refused.
 */
export interface NativeIdentityTable {
  kid: string;
  public_x: string;
  tenant_id: string;
  screen_id: string;
  /** The screen_devices row (origin `native`) its runtime sessions hang from. */
  device_id: string;
  state: 'active' | 'retiring';
  retires_at: number | null;
  /** Identifiers a recovery matches on; never shown or logged. */
  duid: string | null;
  serial: string | null;
  /** HostFacts JSON without identifiers. */
  host: string | null;
  created_at: number;
  /** Last accepted proof by this key, or request with a session minted from it (throttled). */
  last_seen_at: number;
}

/** A nonce a key signs to prove possession; single use, bound to the key and the operation. */
export interface NativeIdentityChallengeTable {
  nonce: string;
  kid: string;
  op: string;
  expires_at: number;
  consumed_at: number | null;
}

/** An offer to move a screen to a new device key, recorded at that device's native pairing start. */
export interface ScreenRecoveryOfferTable {
  /** `rco_…` */
  id: string;
  tenant_id: string;
  screen_id: string;
  /** The offering device's (native) pairing session: confirming claims it for this screen. */
  pairing_session_id: string;
  state: 'pending' | 'confirmed' | 'superseded';
  /** HostDescription JSON (no identifiers). */
  host: string;
  /** The offering session's unclaimed deadline. */
  expires_at: number;
  created_at: number;
  confirmed_at: number | null;
}

export interface NativeIdentityTables {
  native_pairing_sessions: NativePairingSessionTable;
  native_identities: NativeIdentityTable;
  native_identity_challenges: NativeIdentityChallengeTable;
  screen_recovery_offers: ScreenRecoveryOfferTable;
}
