export interface PersonTable {
  /** `usr_…` */
  id: string;
  /** Lower-cased; one person per address (the mailbox a sign-in reset reaches). */
  email: string;
  display_name: string;
  /** scrypt hash (members/passwords.ts), or null when the person signs in with passkeys only. */
  password_hash: string | null;
  /** WebAuthn user handle: 32 random bytes, base64url. */
  user_handle: string;
  created_at: number;
  updated_at: number;
}

export interface PasskeyTable {
  /** `pk_…` */
  id: string;
  person_id: string;
  /** The authenticator's credential id, base64url. */
  credential_id: string;
  /** COSE public key, base64url. */
  public_key: string;
  /** Signature counter; an assertion whose counter moves backwards is refused. */
  counter: number;
  /** JSON array of transports, as the browser reported them. */
  transports: string | null;
  backed_up: number;
  created_at: number;
  last_used_at: number | null;
}

export type MembershipKind = 'project_member' | 'ad_buyer';

export interface MembershipTable {
  tenant_id: string;
  person_id: string;
  kind: MembershipKind;
  /** JSON of the seller-owned scope of an ad buyer (screens, slots). */
  advertising: string | null;
  invitation_id: string | null;
  created_at: number;
}

export interface MemberTables {
  people: PersonTable;
  passkeys: PasskeyTable;
  memberships: MembershipTable;
}
