// Accounts (Model A), enrollment and projects (Model P).
import {
  AccountCreate,
  CLIEnrollmentRequest,
  Email,
  ProjectPatch,
  type AccountCreated,
  type CLIEnrollment,
} from '../../sdk/contract/tenants';
import { isoTime } from '../clock';
import { accountBearer, anyBearer, projectBearer, revocableBearer } from '../http/auth';
import { disconnectAgent } from '../agents/agents';
import { credentialStreamsEndChannel } from '../events/event-log';
import { clientIp } from '../http/client-ip';
import { problem } from '../problem';
import { mutation, query, reply, type AnyContext, type IdempotencyPolicy } from '../http/route';
import { safeEqual } from '../keys';
import {
  acknowledgeIssuance,
  openAccount,
  enrollProject,
  issuanceOpen,
  projectCapabilities,
  renameProject,
} from './enrollment';
import {
  accountView,
  getTenant,
  ISSUANCE_WINDOW_MS,
  projectAccountView,
  projectView,
  revokeCredential,
} from './tenants';

const NO_STORE = { 'Cache-Control': 'private, no-store' };
/** Enrollment budgets; exact replays are answered before these are consulted (spec Errors rule 3). */
const ENROLLMENT_PER_CLIENT_PER_HOUR = 5;
/**
 * Account creations (and account_exists misses) per email address: an exact retry never spends it,
 * so it bounds only guesses at another person's Idempotency-Key. The per-IP budget is the
 * enrollment one (MARQUEE_ENROLLMENTS_PER_IP_PER_HOUR): both create a tenant without a credential.
 */
const ACCOUNT_ATTEMPTS_PER_EMAIL_PER_HOUR = 5;

/**
 * A one-time credential is redelivered to an exact retry only while its issuance is open: until
 * issuance_expires_at and, for Model A, until acknowledged. Afterwards: credential_issuance_expired.
 */
const credentialDelivery: Omit<IdempotencyPolicy, 'mode'> = {
  // The recorded answer holds the encrypted credential: erased once no replay may show it.
  eraseBodyAfterMs: ISSUANCE_WINDOW_MS,
  async onReplay(ctx: AnyContext, recorded) {
    const issuanceId = (recorded.body as { issuance_id?: string } | undefined)?.issuance_id;
    if (!issuanceId || !(await issuanceOpen(ctx.services.store.db, issuanceId, ctx.now))) {
      throw problem(
        'credential_issuance_expired',
        'the credential delivery window for this request has closed; the credential was issued and cannot be shown again',
      );
    }
  },
};

/**
 * A per-value budget key, only once the value passed its own field's grammar (bounded, so a 60 KB
 * string is never held as a key). Budgets run before the body is validated; a request with an
 * invalid value creates nothing and is refused with 400, so only the per-IP budget applies to it.
 */
function validBudgetKey(
  field: { safeParse(value: unknown): { success: boolean } },
  value: unknown,
): string | undefined {
  return typeof value === 'string' && field.safeParse(value).success ? value : undefined;
}

export const createAccount = mutation(
  {
    body: AccountCreate,
    // The request names nothing secret (an email and a client-chosen key), so the redelivered
    // credential is bound to the client IP as well: a retry must come from the same address.
    idempotency: { mode: 'required', ...credentialDelivery, anonymousScope: (ctx) => `anon:${clientIp(ctx)}` },
    rateLimits: (ctx) => {
      const email = validBudgetKey(Email, (ctx.body as { email?: unknown } | undefined)?.email)?.toLowerCase();
      return [
        ...(email === undefined
          ? []
          : [
              {
                name: 'account-create-email',
                limit: ACCOUNT_ATTEMPTS_PER_EMAIL_PER_HOUR,
                windowSeconds: 3600,
                key: email,
              },
            ]),
        {
          name: 'account-create-ip',
          limit: ctx.services.config.enrollmentsPerIpPerHour,
          windowSeconds: 3600,
          key: clientIp(ctx),
        },
      ];
    },
  },
  async (ctx, work) => {
    const email = ctx.body.email.toLowerCase();
    const { tenant, credential } = await openAccount(ctx.services.events, work, email, ctx.now, ctx.requestId);
    const body: AccountCreated = {
      account: accountView(tenant),
      token: credential.token,
      issuance_id: credential.issuanceId,
    };
    return reply.created(body, { headers: NO_STORE, revision: tenant.revision });
  },
);

/** Model A's account; with a project bearer, the project through the account shape. Never metered. */
export const getAccount = query({ auth: anyBearer, meter: false }, async (ctx) => {
  const tenant = await getTenant(ctx.services.store.db, ctx.principal.tenantId);
  const view = ctx.principal.generation === 'A' ? accountView(tenant) : projectAccountView(tenant);
  return reply.ok(view, { revision: tenant.revision });
});

/**
 * Revokes exactly the calling bearer and issues no replacement; the tenant and its content stay.
 * A repeat with the same (now revoked) bearer answers 204 again, so an unsure client may retry.
 * A project bearer goes as its agent installation's disconnection (the `agent.disconnected` event,
 * its streams ended), the last one too: naming this route is the caller's explicit choice, where
 * `/api/v1/agents/self/disconnect` guards the last agent (docs/decisions.md).
 */
export const revokeCallingCredential = mutation({ auth: revocableBearer, meter: false }, async (ctx, work) => {
  if (!ctx.principal.revoked) {
    if (ctx.principal.generation === 'P') {
      await disconnectAgent(
        ctx.services,
        work,
        { credentialId: ctx.principal.credentialId, allowLastAgent: true, requestId: ctx.requestId },
        ctx.now,
      );
    } else if (await revokeCredential(work.db, ctx.principal.credentialId, ctx.now)) {
      const channel = credentialStreamsEndChannel(ctx.principal.credentialId);
      work.afterCommit(() => ctx.services.notifier.publish(channel));
    }
  }
  return reply.noContent({ headers: NO_STORE });
});

export const ackCredentialIssuance = mutation({ auth: accountBearer }, async (ctx, work) => {
  await acknowledgeIssuance(work.db, ctx.principal.tenantId, ctx.params.id!, ctx.now);
  return reply.noContent();
});

export const enroll = mutation(
  {
    body: CLIEnrollmentRequest,
    idempotency: { mode: 'required', ...credentialDelivery },
    rateLimits: (ctx) => {
      const clientId = validBudgetKey(
        CLIEnrollmentRequest.shape.client_id,
        (ctx.body as { client_id?: unknown } | undefined)?.client_id,
      );
      return [
        ...(clientId === undefined
          ? []
          : [{ name: 'enrollment-client', limit: ENROLLMENT_PER_CLIENT_PER_HOUR, windowSeconds: 3600, key: clientId }]),
        {
          name: 'enrollment-ip',
          limit: ctx.services.config.enrollmentsPerIpPerHour,
          windowSeconds: 3600,
          key: clientIp(ctx),
        },
      ];
    },
  },
  async (ctx, work) => {
    const gate = ctx.services.config.betaKey;
    if (gate !== undefined) {
      if (ctx.body.beta_key === undefined) {
        throw problem('invalid_request', 'beta_key: this server gates enrollment; send the beta key you were given', {
          errors: [{ field: 'beta_key', code: 'required', detail: 'is required on this server' }],
        });
      }
      if (!safeEqual(ctx.body.beta_key, gate)) throw problem('forbidden', 'the beta key is not valid');
    }
    const { tenant, credential } = await enrollProject(ctx.services.events, work, ctx.body, ctx.now, ctx.requestId);
    const body: CLIEnrollment = {
      project: projectView(tenant),
      token: credential.token,
      issuance_id: credential.issuanceId,
      issuance_expires_at: isoTime(credential.issuanceExpiresAt),
    };
    return reply.created(body, { headers: NO_STORE });
  },
);

export const getProject = query({ auth: projectBearer, meter: false }, async (ctx) => {
  const tenant = await getTenant(ctx.services.store.db, ctx.principal.tenantId);
  return reply.ok(projectView(tenant), { revision: tenant.revision });
});

export const patchProject = mutation(
  { auth: projectBearer, area: 'project', body: ProjectPatch, ifMatch: 'required-in-A', idempotency: 'optional' },
  async (ctx, work) => {
    const before = await getTenant(work.db, ctx.principal.tenantId);
    ctx.checkRevision(before.revision);
    const after = await renameProject(ctx.services.events, work, before, ctx.body.name, ctx.now, ctx.requestId);
    return reply.ok(projectView(after), { revision: after.revision });
  },
);

export const getProjectCapabilities = query({ auth: projectBearer, area: 'project' }, async (ctx) => {
  const body = await projectCapabilities(ctx.services.store.db, ctx.principal.tenantId, ctx.principal.credentialId);
  return reply.ok(body, { headers: { 'Cache-Control': 'private, no-cache' }, revision: body.revision });
});
