export interface DashboardSessionTable {
  /** `dss_…` */
  id: string;
  /** SHA-256 of the cookie's token. */
  token_hash: string;
  person_id: string;
  /** The selected project; null when the person belongs to none. */
  tenant_id: string | null;
  /** The synchronizer token every mutation sends in `Marquee-CSRF-Token`. */
  csrf_token: string;
  /** How the session began: password, passkey, signup, reset. */
  method: string;
  created_at: number;
  last_seen_at: number;
  /** Absolute expiry. */
  expires_at: number;
  revoked_at: number | null;
}

export type SignupPurpose = 'invitation' | 'reset';

/** The signup cookie's row: accepting an invitation, or finishing a sign-in reset. */
export interface SignupTable {
  /** `sup_…` */
  id: string;
  token_hash: string;
  purpose: SignupPurpose;
  csrf_token: string;
  invitation_id: string | null;
  reset_id: string | null;
  /** The person a reset is for. */
  person_id: string | null;
  /** The address the new person signs up with: the invitation's, or one verified by code. */
  email: string | null;
  email_verified: number;
  code_hash: string | null;
  code_expires_at: number | null;
  code_attempts: number;
  codes_sent: number;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
}

export interface SignInResetTable {
  /** `rst_…` */
  id: string;
  person_id: string;
  token_hash: string;
  /** outstanding → claimed → completed; superseded when a newer one is issued. */
  state: 'outstanding' | 'claimed' | 'completed' | 'superseded';
  created_at: number;
  expires_at: number;
  claimed_at: number | null;
  completed_at: number | null;
}

export interface WebauthnCeremonyTable {
  /** `cer_…` */
  id: string;
  kind: 'registration' | 'assertion';
  /** base64url challenge the options carried. */
  challenge: string;
  binding: string | null;
  person_id: string | null;
  display_name: string | null;
  user_handle: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface SignInTables {
  dashboard_sessions: DashboardSessionTable;
  signups: SignupTable;
  sign_in_resets: SignInResetTable;
  webauthn_ceremonies: WebauthnCeremonyTable;
}
