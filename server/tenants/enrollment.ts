// Accounts (Model A) and projects (Model P) as their routes change them: creation with a one-time
// credential, the credential's delivery window and acknowledgment, renaming, and the capability view.
import type { CLIEnrollmentRequest, ProjectCapabilities } from '../../sdk/contract/tenants';
import { recordEnrolledAgent } from '../agents/agents';
import type { EventLog } from '../events/event-log';
import { problem } from '../problem';
import { expectUpdated, isUniqueViolation, type Db, type Tx, type Work } from '../store/store';
import { effectiveAreas, planOf, PLANS } from './plans';
import { createTenant, getTenant, issueCredential, type IssuedCredential } from './tenants';
import type { TenantTable } from './tenants.tables';

export const DEFAULT_PROJECT_NAME = 'Marquee project';

const accountExists = () => problem('account_exists', 'an account already exists for this email address');

/**
 * Whether the one-time credential of this issuance may still be shown to an exact retry: until
 * issuance_expires_at and, for Model A, until acknowledged.
 */
export async function issuanceOpen(db: Db | Tx, issuanceId: string, now: number): Promise<boolean> {
  const credential = await db
    .selectFrom('credentials')
    .select(['issuance_expires_at', 'issuance_acked_at'])
    .where('issuance_id', '=', issuanceId)
    .executeTakeFirst();
  return credential !== undefined && credential.issuance_acked_at === null && now < credential.issuance_expires_at;
}

/** A Model A account for this (lower-cased) email address and its account bearer; one account per address. */
export async function openAccount(
  events: EventLog,
  work: Work,
  email: string,
  now: number,
  requestId: string,
): Promise<{ tenant: TenantTable; credential: IssuedCredential }> {
  const existing = await work.db
    .selectFrom('tenants')
    .select('id')
    .where('generation', '=', 'A')
    .where('email', '=', email)
    .executeTakeFirst();
  if (existing) throw accountExists();
  let tenant: TenantTable;
  try {
    tenant = await createTenant(work.db, { generation: 'A', name: email, email, plan: PLANS.signage! }, now);
  } catch (error) {
    if (isUniqueViolation(error)) throw accountExists();
    throw error;
  }
  const credential = await issueCredential(work.db, tenant, now);
  await events.append(
    work,
    {
      tenantId: tenant.id,
      type: 'account.created',
      message: 'account created',
      resource: { type: 'account', id: tenant.id },
      requestId,
    },
    now,
  );
  return { tenant, credential };
}

/** The account stored its credential: exact retries stop redelivering it. Unknown issuances are not_found. */
export async function acknowledgeIssuance(db: Tx, tenantId: string, issuanceId: string, now: number): Promise<void> {
  const updated = await db
    .updateTable('credentials')
    .set({ issuance_acked_at: now })
    .where('issuance_id', '=', issuanceId)
    .where('tenant_id', '=', tenantId)
    .where('issuance_acked_at', 'is', null)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  const known = await db
    .selectFrom('credentials')
    .select('id')
    .where('issuance_id', '=', issuanceId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!known) throw problem('not_found', 'credential issuance not found');
}

/** A Model P project with its plan and a project bearer, which is the project's first agent installation. */
export async function enrollProject(
  events: EventLog,
  work: Work,
  request: CLIEnrollmentRequest,
  now: number,
  requestId: string,
): Promise<{ tenant: TenantTable; credential: IssuedCredential }> {
  const intent = request.intent ?? 'signage';
  const tenant = await createTenant(
    work.db,
    {
      generation: 'P',
      name: request.project_name ?? DEFAULT_PROJECT_NAME,
      email: request.email.toLowerCase(),
      plan: PLANS[intent === 'advertising' ? 'advertising' : 'signage']!,
      clientId: request.client_id,
      intent,
    },
    now,
  );
  const credential = await issueCredential(work.db, tenant, now);
  await recordEnrolledAgent(
    work.db,
    {
      tenantId: tenant.id,
      credentialId: credential.credentialId,
      name: request.name,
      agentType: request.agent_type,
      platform: request.platform,
      version: request.version,
    },
    now,
  );
  await events.append(
    work,
    {
      tenantId: tenant.id,
      type: 'account.enrolled',
      message: 'project enrolled',
      resource: { type: 'project', id: tenant.id },
      details: { agent_type: request.agent_type ?? 'cli', name: request.name ?? 'Marquee CLI' },
      requestId,
    },
    now,
  );
  return { tenant, credential };
}

/** Renames the project (revision + 1); the name it already has changes nothing, so it bumps nothing. */
export async function renameProject(
  events: EventLog,
  work: Work,
  before: TenantTable,
  name: string,
  now: number,
  requestId: string,
): Promise<TenantTable> {
  if (name === before.name) return before;
  expectUpdated(
    await work.db
      .updateTable('tenants')
      .set({ name, revision: before.revision + 1, updated_at: now })
      .where('id', '=', before.id)
      .where('revision', '=', before.revision)
      .executeTakeFirst(),
    'project',
  );
  await events.append(
    work,
    {
      tenantId: before.id,
      type: 'project.updated',
      message: 'project renamed',
      resource: { type: 'project', id: before.id },
      requestId,
    },
    now,
  );
  return getTenant(work.db, before.id);
}

/** The project's plan flags and the areas this credential may use (an unknown plan fails closed). */
export async function projectCapabilities(
  db: Db,
  tenantId: string,
  credentialId: string,
): Promise<ProjectCapabilities> {
  const tenant = await getTenant(db, tenantId);
  if (!planOf(tenant.plan))
    throw problem('forbidden', `the project's plan "${tenant.plan}" is not in the plan catalog`);
  const credential = await db
    .selectFrom('credentials')
    .select('areas')
    .where('id', '=', credentialId)
    .executeTakeFirstOrThrow();
  return {
    plan: tenant.plan,
    independent_advertiser: tenant.independent_advertiser === 1,
    screens: tenant.screens_enabled === 1,
    revision: tenant.capabilities_revision,
    effective: [...effectiveAreas(tenant.plan, JSON.parse(credential.areas) as string[])],
  };
}
