// Accounts (Model A), enrollment and the project (Model P).
import type {
  Account,
  AccountCreate,
  AccountCreated,
  CLIEnrollment,
  CLIEnrollmentRequest,
  Project,
  ProjectCapabilities,
  ProjectAccount,
  ProjectPatch,
} from '../contract/tenants';
import type { DashboardLink } from '../contract/people';
import type { CallOptions, ClientTransport, GuardedCallOptions } from './transport';

export function accountRoutes(t: ClientTransport) {
  return {
    /** Creates an account; the token in the answer is shown once (an exact retry redelivers it until acknowledged). */
    create: (body: AccountCreate, options: CallOptions = {}) =>
      t.request<AccountCreated>({
        method: 'POST',
        path: '/api/v1/accounts',
        json: body,
        idempotent: true,
        authenticated: false,
        ...options,
      }),
    /** The account; with a project bearer, the project seen through the account shape. */
    get: <A extends Account | ProjectAccount = Account>() => t.request<A>({ method: 'GET', path: '/api/v1/account' }),
    /** Revokes exactly this credential (no replacement); repeating it with the revoked token is safe. */
    revokeCredential: (options: CallOptions = {}) =>
      t.request<void>({ method: 'POST', path: '/api/v1/account/credential/revoke', ...options }),
    /** A single-use, ten-minute dashboard sign-in link for the person beside the agent (a credential). */
    dashboardLink: (options: CallOptions = {}) =>
      t.request<DashboardLink>({
        method: 'POST',
        path: '/api/v1/account/dashboard-links',
        idempotent: true,
        ...options,
      }),
    /** Confirms the one-time credential is stored: it will not be redelivered again. */
    acknowledgeIssuance: (issuanceId: string, options: CallOptions = {}) =>
      t.request<void>({
        method: 'POST',
        path: `/api/v1/account/credential-issuances/${encodeURIComponent(issuanceId)}/ack`,
        idempotent: true,
        ...options,
      }),
  };
}

export function projectRoutes(t: ClientTransport) {
  return {
    get: () => t.request<Project>({ method: 'GET', path: '/api/v1/project' }),
    /** Renames the project; pass ifMatch to guard against a concurrent change (412 revision_conflict). */
    update: (patch: ProjectPatch, options: GuardedCallOptions = {}) =>
      t.request<Project>({ method: 'PATCH', path: '/api/v1/project', json: patch, idempotent: true, ...options }),
    capabilities: () => t.request<ProjectCapabilities>({ method: 'GET', path: '/api/v1/project/capabilities' }),
  };
}

/** Enrolls a project (Model P); the token is shown once and redelivered to an exact retry for ten minutes. */
export function enrollRoute(t: ClientTransport) {
  return (body: CLIEnrollmentRequest, options: CallOptions = {}) =>
    t.request<CLIEnrollment>({
      method: 'POST',
      path: '/api/v1/enrollments',
      json: body,
      idempotent: true,
      authenticated: false,
      ...options,
    });
}
