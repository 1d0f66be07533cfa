import type { InvitationDelivery, InvitationKind } from '../../sdk/contract/people';

export interface InvitationTable {
  /** `inv_…` */
  id: string;
  tenant_id: string;
  kind: InvitationKind;
  delivery: InvitationDelivery;
  /** Lower-cased address of an email invitation; null for a link. */
  email: string | null;
  /** SHA-256 of the token its link carries; replaced when an email invitation is sent again. */
  token_hash: string;
  /** Stored states; `expired` is derived from expires_at. */
  state: 'outstanding' | 'accepted' | 'revoked';
  /** JSON of an ad buyer's seller-owned scope. */
  advertising: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  accepted_by: string | null;
  revoked_at: number | null;
}

export interface InvitationTables {
  invitations: InvitationTable;
}
