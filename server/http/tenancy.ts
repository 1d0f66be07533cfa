// What the HTTP layer asks of the tenants feature, so that it imports none: who a control-plane
// bearer is (with the capability areas its plan allows), and the credit meter. tenants/ implements
// both; the composition root puts them in Services.
import type { CapabilityArea } from '../../sdk/contract/tenants';
import type { Generation } from '../problem';

/** A stored control-plane credential and its tenant, as authentication needs them. */
export interface BearerRecord {
  /** The stored SHA-256 of the token, compared again in constant time. */
  tokenHash: string;
  credentialId: string;
  /** The credential and its tenant are both active. */
  active: boolean;
  /** The credential is active but an operator suspended its tenant (refused as forbidden, not unknown). */
  suspended?: boolean;
  /** The credential itself was revoked (only its own revocation's repeat still accepts it). */
  revoked?: boolean;
  tenantId: string;
  generation: Generation;
  plan: string;
  /** Effective areas: the credential's, as far as the plan allows (none for a plan not in the catalog). */
  areas: ReadonlySet<CapabilityArea>;
  /**
   * Balance and grant month as read with the credential (which may be cached for a few seconds):
   * the grant month tells the meter whether a monthly grant may be due; balances shown are read fresh.
   */
  credits: MeteredCredits;
}

export interface TenantBearers {
  /** The credential whose token hashes to `tokenHash`, revoked or not; undefined when there is none. */
  find(tokenHash: string): Promise<BearerRecord | undefined>;
}

export interface MeteredCredits {
  millis: number;
  /** UTC month (YYYY-MM) of the last monthly grant. */
  grantMonth: string;
}

/** One Model P control-plane request as the meter sees it. */
export interface MeteredRequest {
  tenantId: string;
  plan: string;
  /** The balance read while authenticating. */
  credits: MeteredCredits;
  /** False for routes exempt from the meter: only the balance is read (after a due monthly grant). */
  debits: boolean;
  now: number;
}

export interface MeterAnswer {
  /** Credit headers for the answer, whatever it is (a refusal's too). */
  headers: Record<string, string>;
  /** Why the request may not go on (payment_required, or a failure to meter it), when it may not. */
  error?: unknown;
}

export interface Meter {
  charge(request: MeteredRequest): Promise<MeterAnswer>;
}
