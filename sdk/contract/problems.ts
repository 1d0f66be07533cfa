// RFC 9457 problem codes: the spec's stable codes with their statuses, titles and Retry-After
// defaults. Shared vocabulary: the server throws them, clients (player, kiosk, CLI, dashboard) branch on them.

export type Generation = 'A' | 'P';

export interface ProblemCodeInfo {
  title: string;
  /** Status in Model P and, where it differs, Model A. */
  status: number | { P: number; A: number };
  /** Retry-After default in seconds (spec Errors rule 1). */
  retryAfter?: number;
}

export const PROBLEM_CODES = {
  internal_error: { title: 'Internal server error', status: 500 },
  invalid_request: { title: 'Request invalid', status: 400 },
  unauthorized: { title: 'Authentication required', status: 401 },
  identity_invalid: { title: 'Player public key or key id invalid', status: 400 },
  proof_invalid: { title: 'Possession proof invalid', status: 401 },
  payment_required: { title: 'Credits cannot cover this request', status: 402 },
  forbidden: { title: 'Not allowed', status: 403 },
  not_found: { title: 'Resource not found', status: 404 },
  screenshot_unavailable: { title: 'No screenshot for that capture', status: 404 },
  method_not_allowed: { title: 'Method not allowed', status: 405 },
  idempotency_mismatch: { title: 'Idempotency key reused with a different request', status: 409 },
  idempotency_in_progress: {
    title: 'A request with this idempotency key is still running',
    status: 409,
    retryAfter: 1,
  },
  account_exists: { title: 'Account already exists', status: 409 },
  resource_conflict: { title: 'State conflicts with the request', status: 409 },
  application_in_use: { title: 'A live manifest references the application', status: 409 },
  screen_archive_required: { title: 'Archive this native identity-bound screen instead of deleting it', status: 409 },
  screen_archived: { title: 'Screen is archived', status: 409 },
  agent_lockout_risk: { title: 'Disconnecting the last active agent', status: 409 },
  invitation_consumed: { title: 'Invitation already accepted', status: 409 },
  link_invalid: { title: 'Link unknown, malformed or already used', status: 404 },
  link_expired: { title: 'Link expired', status: 410 },
  passkey_invalid: { title: 'Passkey ceremony or response invalid', status: 400 },
  version_required: { title: 'Use a newer API version for this document', status: 409 },
  enrollment_bound: { title: 'This player key is already bound to a screen', status: 409 },
  recovery_not_offered: { title: 'No recovery is pending', status: 409 },
  recovery_ambiguous: { title: 'Recovery identifier is attached in more than one place', status: 409 },
  recovery_expired: { title: 'Recovery pairing session lapsed', status: 410 },
  credential_issuance_expired: { title: 'Credential delivery window expired', status: 410 },
  revision_conflict: { title: 'If-Match is stale', status: 412 },
  request_timeout: { title: 'Request not received in time', status: 408 },
  quota_exceeded: { title: 'Quota exceeded', status: 413 },
  invalid_range: { title: 'Byte range unsatisfiable or malformed', status: 416 },
  request_header_too_large: { title: 'Request header fields too large', status: 431 },
  server_draining: { title: 'Host draining', status: 421, retryAfter: 1 },
  rate_limited: { title: 'Request rate too high', status: 429, retryAfter: 1 },
  dependency_unavailable: { title: 'Required dependency unavailable', status: { P: 500, A: 503 }, retryAfter: 5 },
  schema_incompatible: { title: 'Database schema incompatible', status: { P: 500, A: 503 } },
  not_ready: { title: 'Service not ready', status: { P: 500, A: 503 }, retryAfter: 5 },
  manifest_degraded: { title: 'Manifest degraded', status: 500, retryAfter: 60 },
} satisfies Record<string, ProblemCodeInfo>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** One field-level complaint, as in the problem's `errors` member. */
export interface FieldError {
  field: string;
  code: string;
  detail: string;
}

export function statusOf(code: ProblemCode, generation: Generation): number {
  const { status } = PROBLEM_CODES[code] as ProblemCodeInfo;
  return typeof status === 'number' ? status : status[generation];
}

export function retryAfterOf(code: ProblemCode): number | undefined {
  return (PROBLEM_CODES[code] as ProblemCodeInfo).retryAfter;
}

export function problemTypeUri(controlOrigin: string, code: string): string {
  return `${controlOrigin}/problems/${code.replace(/_/g, '-')}`;
}
