// Tenants (a Model A account or a Model P project over one table), their bearer credentials,
// and the quota counters every content feature reserves against.
import { sql } from 'kysely';
import type { Account, Project, ProjectAccount } from '../../sdk/contract/tenants';
import { isoTime } from '../clock';
import { problem, type Generation } from '../problem';
import { CAPABILITY_AREAS, type CapabilityArea } from '../http/route';
import { newId, randomToken, sha256Hex } from '../keys';
import type { Db, Tx } from '../store/store';
import { MILLIS_PER_CREDIT, recordLedger, utcMonth } from './credits';
import type { Plan } from './plans';
import type { TenantTable } from './tenants.tables';

/** spec Limits: a one-time credential is redelivered to an exact retry for ten minutes. */
export const ISSUANCE_WINDOW_MS = 10 * 60_000;

const TOKEN_PREFIX: Record<Generation, string> = { A: 'mq_acct_', P: 'mq_proj_' };

export interface NewTenant {
  generation: Generation;
  name: string;
  email: string | null;
  plan: Plan;
  clientId?: string;
  intent?: string;
}

export interface IssuedCredential {
  token: string;
  credentialId: string;
  issuanceId: string;
  issuanceExpiresAt: number;
}

export async function createTenant(tx: Tx, input: NewTenant, now: number): Promise<TenantTable> {
  const row: TenantTable = {
    id: newId(input.generation === 'A' ? 'acc' : 'prj'),
    generation: input.generation,
    email: input.email,
    name: input.name,
    status: 'active',
    plan: input.plan.name,
    independent_advertiser: 0,
    screens_enabled: 1,
    capabilities_revision: 1,
    revision: 1,
    used_bytes: 0,
    reserved_bytes: 0,
    content_limit_bytes: input.plan.contentLimitBytes,
    screen_count: 0,
    screen_limit: input.plan.screenLimit,
    // Model A has no meter; Model P starts with the month's included grant.
    credit_millis: input.generation === 'P' ? input.plan.includedCredits * MILLIS_PER_CREDIT : 0,
    credit_grant_month: utcMonth(now),
    client_id: input.clientId ?? null,
    intent: input.intent ?? null,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto('tenants').values(row).execute();
  // The first month's grant is in the ledger like every later one, so the statement sums to the balance.
  if (row.credit_millis > 0) await recordLedger(tx, row.id, now, 'included_grant', row.credit_millis);
  return row;
}

/** Mints a bearer for the tenant; only its hash is stored. */
export async function issueCredential(
  tx: Tx,
  tenant: Pick<TenantTable, 'id' | 'generation'>,
  now: number,
  areas: readonly CapabilityArea[] = CAPABILITY_AREAS,
): Promise<IssuedCredential> {
  const token = TOKEN_PREFIX[tenant.generation] + randomToken(32);
  const credentialId = newId('cred');
  const issuanceId = newId('iss');
  const issuanceExpiresAt = now + ISSUANCE_WINDOW_MS;
  await tx
    .insertInto('credentials')
    .values({
      id: credentialId,
      tenant_id: tenant.id,
      kind: tenant.generation === 'A' ? 'account' : 'project',
      token_hash: sha256Hex(token),
      areas: JSON.stringify(areas),
      status: 'active',
      issuance_id: issuanceId,
      issuance_expires_at: issuanceExpiresAt,
      issuance_acked_at: null,
      created_at: now,
      revoked_at: null,
    })
    .execute();
  return { token, credentialId, issuanceId, issuanceExpiresAt };
}

export async function getTenant(db: Db | Tx, id: string): Promise<TenantTable> {
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw problem('not_found', 'tenant not found');
  return row;
}

export function accountView(t: TenantTable): Account {
  return {
    id: t.id,
    email: t.email ?? '',
    revision: t.revision,
    status: t.status,
    used_bytes: t.used_bytes,
    reserved_bytes: t.reserved_bytes,
    screen_count: t.screen_count,
    content_limit_bytes: t.content_limit_bytes,
    screen_limit: t.screen_limit,
  };
}

export function projectAccountView(t: TenantTable): ProjectAccount {
  const project = projectView(t);
  return {
    id: project.id,
    ...(project.contact_email ? { email: project.contact_email } : {}),
    name: project.name,
    plan: project.plan,
    revision: project.revision,
    status: project.status,
    used_bytes: project.used_bytes,
    reserved_bytes: project.reserved_bytes,
    screen_count: project.screen_count,
    content_limit_bytes: project.content_limit_bytes,
    screen_limit: project.screen_limit,
    credit_remaining: project.credit_remaining,
    created_at: project.created_at,
    updated_at: project.updated_at,
  };
}

/** Revokes exactly this credential (a Model A account bearer's own revocation); a repeat changes nothing. */
export async function revokeCredential(db: Db | Tx, credentialId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('credentials')
    .set({ status: 'revoked', revoked_at: now })
    .where('id', '=', credentialId)
    .where('status', '!=', 'revoked')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function projectView(t: TenantTable): Project {
  return {
    id: t.id,
    name: t.name,
    revision: t.revision,
    status: t.status,
    plan: t.plan,
    intent: t.intent === 'advertising' ? 'advertising' : 'signage',
    contact_email: t.email,
    used_bytes: t.used_bytes,
    reserved_bytes: t.reserved_bytes,
    content_limit_bytes: t.content_limit_bytes,
    screen_count: t.screen_count,
    screen_limit: t.screen_limit,
    credit_remaining: Math.max(0, Math.floor(t.credit_millis / MILLIS_PER_CREDIT)),
    created_at: isoTime(t.created_at),
    updated_at: isoTime(t.updated_at),
  };
}

/** `column - amount`, never below zero (dialect-neutral; SQLite's MAX() is not PostgreSQL's GREATEST()). */
function decrement(column: 'reserved_bytes' | 'used_bytes' | 'screen_count', amount: number) {
  return sql<number>`CASE WHEN ${sql.ref(column)} > ${amount} THEN ${sql.ref(column)} - ${amount} ELSE 0 END`;
}

// ---- Quota counters. Each is one conditional UPDATE, so concurrent requests can never overshoot.

function quotaExceeded(kind: string, limit: number) {
  return problem('quota_exceeded', `${kind} quota exceeded (limit ${limit})`);
}

/** Reserves bytes for an upload in flight; used + reserved may not pass the content limit (0 = no cap). */
export async function reserveBytes(tx: Tx, tenantId: string, bytes: number): Promise<void> {
  const result = await tx
    .updateTable('tenants')
    .set({ reserved_bytes: sql`reserved_bytes + ${bytes}` })
    .where('id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('content_limit_bytes', '=', 0),
        eb(sql`used_bytes + reserved_bytes + ${bytes}`, '<=', eb.ref('content_limit_bytes')),
      ]),
    )
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) {
    const t = await getTenant(tx, tenantId);
    throw quotaExceeded('content bytes', t.content_limit_bytes);
  }
}

export async function releaseReservation(tx: Tx, tenantId: string, bytes: number): Promise<void> {
  await tx
    .updateTable('tenants')
    .set({ reserved_bytes: decrement('reserved_bytes', bytes) })
    .where('id', '=', tenantId)
    .execute();
}

/** Turns a reservation into durable usage (`actual` may be smaller than what was reserved). */
export async function commitReservation(tx: Tx, tenantId: string, reserved: number, actual: number): Promise<void> {
  await tx
    .updateTable('tenants')
    .set({ reserved_bytes: decrement('reserved_bytes', reserved), used_bytes: sql`used_bytes + ${actual}` })
    .where('id', '=', tenantId)
    .execute();
}

export async function releaseUsedBytes(tx: Tx, tenantId: string, bytes: number): Promise<void> {
  await tx
    .updateTable('tenants')
    .set({ used_bytes: decrement('used_bytes', bytes) })
    .where('id', '=', tenantId)
    .execute();
}

/** Admits one more quota-counted screen or throws quota_exceeded (spec: 50 per tenant; 0 = no cap). */
export async function admitScreen(tx: Tx, tenantId: string): Promise<void> {
  const result = await tx
    .updateTable('tenants')
    .set({ screen_count: sql`screen_count + 1` })
    .where('id', '=', tenantId)
    .where((eb) => eb.or([eb('screen_limit', '=', 0), eb('screen_count', '<', eb.ref('screen_limit'))]))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) {
    const t = await getTenant(tx, tenantId);
    throw quotaExceeded('screen', t.screen_limit);
  }
}

export async function releaseScreen(tx: Tx, tenantId: string): Promise<void> {
  await tx
    .updateTable('tenants')
    .set({ screen_count: decrement('screen_count', 1) })
    .where('id', '=', tenantId)
    .execute();
}
