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
import { recordEnrolledAgent } from '../agents/agents';
import { accountBearer, projectBearer } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { problem } from '../problem';
import { mutation, query, reply, type AnyContext, type IdempotencyPolicy } from '../http/route';
import { safeEqual } from '../keys';
import { isUniqueViolation } from '../store/store';
import { effectiveAreas, planOf, PLANS } from './plans';
import { accountView, createTenant, getTenant, ISSUANCE_WINDOW_MS, issueCredential, projectView } from './tenants';

const NO_STORE = { 'Cache-Control': 'private, no-store' };
export const DEFAULT_PROJECT_NAME = 'Marquee project';
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
    const credential = issuanceId
      ? await ctx.services.store.db
          .selectFrom('credentials')
          .select(['issuance_expires_at', 'issuance_acked_at'])
          .where('issuance_id', '=', issuanceId)
          .executeTakeFirst()
      : undefined;
    if (!credential || credential.issuance_acked_at !== null || ctx.now >= credential.issuance_expires_at) {
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
    const existing = await work.db
      .selectFrom('tenants')
      .select('id')
      .where('generation', '=', 'A')
      .where('email', '=', email)
      .executeTakeFirst();
    if (existing) throw problem('account_exists', 'an account already exists for this email address');
    const plan = PLANS.signage!;
    let tenant;
    try {
      tenant = await createTenant(work.db, { generation: 'A', name: email, email, plan }, ctx.now);
    } catch (error) {
      if (isUniqueViolation(error)) throw problem('account_exists', 'an account already exists for this email address');
      throw error;
    }
    const credential = await issueCredential(work.db, tenant, ctx.now);
    await ctx.services.events.append(
      work,
      {
        tenantId: tenant.id,
        type: 'account.created',
        message: 'account created',
        resource: { type: 'account', id: tenant.id },
        requestId: ctx.requestId,
      },
      ctx.now,
    );
    const body: AccountCreated = {
      account: accountView(tenant),
      token: credential.token,
      issuance_id: credential.issuanceId,
    };
    return reply.created(body, { headers: NO_STORE, revision: tenant.revision });
  },
);

export const getAccount = query({ auth: accountBearer }, async (ctx) => {
  const tenant = await getTenant(ctx.services.store.db, ctx.principal.tenantId);
  return reply.ok(accountView(tenant), { revision: tenant.revision });
});

export const ackCredentialIssuance = mutation({ auth: accountBearer }, async (ctx, work) => {
  const updated = await work.db
    .updateTable('credentials')
    .set({ issuance_acked_at: ctx.now })
    .where('issuance_id', '=', ctx.params.id!)
    .where('tenant_id', '=', ctx.principal.tenantId)
    .where('issuance_acked_at', 'is', null)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    const known = await work.db
      .selectFrom('credentials')
      .select('id')
      .where('issuance_id', '=', ctx.params.id!)
      .where('tenant_id', '=', ctx.principal.tenantId)
      .executeTakeFirst();
    if (!known) throw problem('not_found', 'credential issuance not found');
  }
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
    const intent = ctx.body.intent ?? 'signage';
    const plan = PLANS[intent === 'advertising' ? 'advertising' : 'signage']!;
    const tenant = await createTenant(
      work.db,
      {
        generation: 'P',
        name: ctx.body.project_name ?? DEFAULT_PROJECT_NAME,
        email: ctx.body.email.toLowerCase(),
        plan,
        clientId: ctx.body.client_id,
        intent,
      },
      ctx.now,
    );
    const credential = await issueCredential(work.db, tenant, ctx.now);
    // People and access (issue 18): the enrolled bearer is the project's first agent installation.
    await recordEnrolledAgent(
      work.db,
      {
        tenantId: tenant.id,
        credentialId: credential.credentialId,
        name: ctx.body.name,
        agentType: ctx.body.agent_type,
        platform: ctx.body.platform,
        version: ctx.body.version,
      },
      ctx.now,
    );
    await ctx.services.events.append(
      work,
      {
        tenantId: tenant.id,
        type: 'account.enrolled',
        message: 'project enrolled',
        resource: { type: 'project', id: tenant.id },
        details: { agent_type: ctx.body.agent_type ?? 'cli', name: ctx.body.name ?? 'Marquee CLI' },
        requestId: ctx.requestId,
      },
      ctx.now,
    );
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
    // The name it already has changes nothing, so it bumps nothing.
    if (ctx.body.name === before.name) return reply.ok(projectView(before), { revision: before.revision });
    await work.db
      .updateTable('tenants')
      .set({ name: ctx.body.name, revision: before.revision + 1, updated_at: ctx.now })
      .where('id', '=', before.id)
      .execute();
    await ctx.services.events.append(
      work,
      {
        tenantId: before.id,
        type: 'project.updated',
        message: 'project renamed',
        resource: { type: 'project', id: before.id },
        requestId: ctx.requestId,
      },
      ctx.now,
    );
    const after = await getTenant(work.db, before.id);
    return reply.ok(projectView(after), { revision: after.revision });
  },
);

export const getProjectCapabilities = query({ auth: projectBearer, area: 'project' }, async (ctx) => {
  const tenant = await getTenant(ctx.services.store.db, ctx.principal.tenantId);
  if (!planOf(tenant.plan))
    throw problem('forbidden', `the project's plan "${tenant.plan}" is not in the plan catalog`);
  const credential = await ctx.services.store.db
    .selectFrom('credentials')
    .select('areas')
    .where('id', '=', ctx.principal.credentialId)
    .executeTakeFirstOrThrow();
  return reply.ok(
    {
      plan: tenant.plan,
      independent_advertiser: tenant.independent_advertiser === 1,
      screens: tenant.screens_enabled === 1,
      revision: tenant.capabilities_revision,
      effective: [...effectiveAreas(tenant.plan, JSON.parse(credential.areas) as string[])],
    },
    { headers: { 'Cache-Control': 'private, no-cache' }, revision: tenant.capabilities_revision },
  );
});
