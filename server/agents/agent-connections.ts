// Agent connections (spec: Agent installations). An agent asks with its recipient key and gets a
// temporary Marquee-Agent-Connect credential and a code to show its person; a signed-in member types
// that code on the approval page within 24 hours; approval makes a pending agent with a pending
// bearer and seals that bearer to the recipient key; the agent collects the envelope and activates
// within a fresh 24-hour delivery window. Denial, cancellation and expiry end it.
import crypto from 'node:crypto';
import {
  normalizeUserCode,
  USER_CODE_ALPHABET,
  type AgentConnection,
  type AgentConnectionStart,
  type AgentConnectionState,
  type AgentCredential,
  type AgentCredentialCollection,
  type X25519PublicJwk,
} from '../../sdk/contract/agents';
import { CAPABILITY_AREAS, type CapabilityArea } from '../../sdk/contract/tenants';
import { isoTime } from '../clock';
import { newId, randomToken, safeEqual, sha256Hex } from '../keys';
import type { PersonTable } from '../members/members.tables';
import { problem } from '../problem';
import type { Services } from '../services';
import { expectUpdated, type Db, type Store, type Tx, type Work } from '../store/store';
import { getTenant, issueCredential } from '../tenants/tenants';
import { checkRecipientKey, sealCredential } from './agent-envelope';
import type { AgentConnectionTable } from './agents.tables';

/** spec Limits: agent connection approval 24 hours. */
export const AGENT_APPROVAL_WINDOW_MS = 24 * 3600_000;
/** spec Limits: credential delivery window 24 hours, fresh from approval. */
export const AGENT_DELIVERY_WINDOW_MS = 24 * 3600_000;
/** Ended connections are kept this long (their status stream still answers), then deleted. */
export const ENDED_CONNECTION_RETENTION_MS = 7 * 24 * 3600_000;
const CONNECT_TOKEN_PREFIX = 'mq_conn_';
const USER_CODE_LENGTH = 8;
export const DEFAULT_AGENT_NAME = 'Marquee agent';

/** Notifier channel of one connection: its status stream wakes on every change. */
export const connectionChannel = (id: string) => `agent-connection:${id}`;

export function connectionState(row: AgentConnectionTable, now: number): AgentConnectionState {
  if (row.state === 'pending' && now >= row.expires_at) return 'expired';
  if (row.state === 'approved' && row.delivery_expires_at !== null && now >= row.delivery_expires_at) return 'expired';
  return row.state;
}

export function connectionView(row: AgentConnectionTable, now: number): AgentConnection {
  return {
    id: row.id,
    state: connectionState(row, now),
    name: row.name,
    agent_type: row.agent_type,
    platform: row.platform,
    version: row.version,
    capabilities: JSON.parse(row.capabilities) as CapabilityArea[],
    created_at: isoTime(row.created_at),
    expires_at: isoTime(row.expires_at),
    delivery_expires_at: row.delivery_expires_at === null ? null : isoTime(row.delivery_expires_at),
  };
}

function userCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[crypto.randomInt(USER_CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export interface ConnectionRequest {
  name?: string;
  agent_type?: string;
  platform?: string;
  version?: string;
  capabilities?: CapabilityArea[];
  recipient_public_key: X25519PublicJwk;
}

export async function startConnection(
  services: Services,
  work: Work,
  request: ConnectionRequest,
  now: number,
): Promise<AgentConnectionStart> {
  checkRecipientKey(request.recipient_public_key.x);
  const token = CONNECT_TOKEN_PREFIX + randomToken(32);
  const code = userCode();
  const row: AgentConnectionTable = {
    id: newId('agc'),
    token_hash: sha256Hex(token),
    user_code: normalizeUserCode(code),
    name: request.name ?? DEFAULT_AGENT_NAME,
    agent_type: request.agent_type ?? 'cli',
    platform: request.platform ?? null,
    version: request.version ?? null,
    capabilities: JSON.stringify(request.capabilities ?? CAPABILITY_AREAS),
    recipient_key: request.recipient_public_key.x,
    state: 'pending',
    created_at: now,
    expires_at: now + AGENT_APPROVAL_WINDOW_MS,
    decided_at: null,
    decided_by: null,
    tenant_id: null,
    agent_id: null,
    delivery_expires_at: null,
    envelope: null,
    updated_at: now,
  };
  await work.db.insertInto('agent_connections').values(row).execute();
  const { controlOrigin, dashboardOrigin } = services.config;
  return {
    connection: connectionView(row, now),
    connect_token: token,
    user_code: code,
    approval_url: `${dashboardOrigin}/connect/${row.id}`,
    events_url: `${controlOrigin}/api/v1/agent-connections/${row.id}/events`,
    credential_url: `${controlOrigin}/api/v1/agent-connections/${row.id}/credential`,
  };
}

export async function connectionById(db: Db | Tx, id: string): Promise<AgentConnectionTable> {
  const row = await db.selectFrom('agent_connections').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw problem('not_found', 'agent connection not found');
  return row;
}

/** The connection as the approving member sees it (no code: they type the one their agent shows). */
export async function connectionForApproval(db: Db, id: string, now: number): Promise<AgentConnection> {
  return connectionView(await connectionById(db, id), now);
}

function notifyAfterCommit(services: Services, work: Work, id: string): void {
  work.afterCommit(() => services.notifier.publish(connectionChannel(id)));
}

/** Throws unless the connection still waits for a decision. */
function checkPending(row: AgentConnectionTable, now: number): void {
  const state = connectionState(row, now);
  if (state === 'expired')
    throw problem('link_expired', 'this connection request has expired; the agent must ask again');
  if (state !== 'pending') throw problem('resource_conflict', `this connection request is ${state} already`);
}

export async function approveConnection(
  services: Services,
  work: Work,
  input: { id: string; userCode: string; tenantId: string; person: PersonTable; requestId: string },
  now: number,
): Promise<AgentConnection> {
  const row = await connectionById(work.db, input.id);
  checkPending(row, now);
  if (!safeEqual(normalizeUserCode(input.userCode), row.user_code))
    throw problem('forbidden', 'this is not the code the agent shows; check it on the agent and type it again');
  const tenant = await getTenant(work.db, input.tenantId);
  const areas = JSON.parse(row.capabilities) as CapabilityArea[];
  const credential = await issueCredential(work.db, tenant, now, areas);
  // The bearer authorizes nothing but its own activation until the agent activates it.
  await work.db
    .updateTable('credentials')
    .set({ status: 'pending' })
    .where('id', '=', credential.credentialId)
    .execute();
  const agentId = newId('agt');
  const deliveryExpiresAt = now + AGENT_DELIVERY_WINDOW_MS;
  await work.db
    .insertInto('agents')
    .values({
      id: agentId,
      tenant_id: tenant.id,
      credential_id: credential.credentialId,
      connection_id: row.id,
      name: row.name,
      agent_type: row.agent_type,
      platform: row.platform,
      version: row.version,
      state: 'pending',
      created_at: now,
      activated_at: null,
      revoked_at: null,
      delivery_expires_at: deliveryExpiresAt,
    })
    .execute();
  const payload: AgentCredential = {
    token: credential.token,
    agent_id: agentId,
    project_id: tenant.id,
    capabilities: areas,
    control_origin: services.config.controlOrigin,
  };
  const envelope = sealCredential(row.recipient_key, row.id, JSON.stringify(payload));
  const decided = await work.db
    .updateTable('agent_connections')
    .set({
      state: 'approved',
      decided_at: now,
      decided_by: input.person.id,
      tenant_id: tenant.id,
      agent_id: agentId,
      delivery_expires_at: deliveryExpiresAt,
      envelope: JSON.stringify(envelope),
      updated_at: now,
    })
    .where('id', '=', row.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (Number(decided.numUpdatedRows) !== 1)
    throw problem('resource_conflict', 'this connection request was decided already');
  await services.events.append(
    work,
    {
      type: 'agent.connection_approved',
      tenantId: tenant.id,
      message: `${input.person.display_name} approved the agent "${row.name}"`,
      resource: { type: 'agent', id: agentId },
      details: {
        connection_id: row.id,
        agent_id: agentId,
        capabilities: areas,
        approved_by: { person_id: input.person.id, display_name: input.person.display_name },
      },
      requestId: input.requestId,
    },
    now,
  );
  notifyAfterCommit(services, work, row.id);
  return connectionView(await connectionById(work.db, row.id), now);
}

export async function denyConnection(
  services: Services,
  work: Work,
  input: { id: string; person: PersonTable },
  now: number,
): Promise<AgentConnection> {
  const row = await connectionById(work.db, input.id);
  checkPending(row, now);
  // An approval that committed since the read makes this run again, to be refused as decided.
  expectUpdated(
    await work.db
      .updateTable('agent_connections')
      .set({ state: 'denied', decided_at: now, decided_by: input.person.id, updated_at: now })
      .where('id', '=', row.id)
      .where('state', '=', 'pending')
      .executeTakeFirst(),
    'agent connection',
  );
  notifyAfterCommit(services, work, row.id);
  return connectionView({ ...row, state: 'denied' }, now);
}

/**
 * The agent gives up: a pending request is cancelled; an approved one too, and the pending agent
 * it made is revoked with its envelope (nothing was activated). Cancelling an ended one changes nothing.
 */
export async function cancelConnection(
  services: Services,
  work: Work,
  connectionId: string,
  now: number,
): Promise<void> {
  const row = await connectionById(work.db, connectionId);
  const state = connectionState(row, now);
  if (state !== 'pending' && state !== 'approved') return;
  // Only from the state read: an approval that committed since made an agent this must revoke,
  // so the cancel runs again and reads it.
  expectUpdated(
    await work.db
      .updateTable('agent_connections')
      .set({ state: 'cancelled', envelope: null, updated_at: now })
      .where('id', '=', row.id)
      .where('state', '=', row.state)
      .executeTakeFirst(),
    'agent connection',
  );
  if (row.agent_id !== null) await revokePendingAgent(work.db, row.agent_id, now);
  notifyAfterCommit(services, work, row.id);
}

async function revokePendingAgent(tx: Tx, agentId: string, now: number): Promise<void> {
  const agent = await tx
    .selectFrom('agents')
    .select(['credential_id', 'state'])
    .where('id', '=', agentId)
    .executeTakeFirst();
  if (agent?.state !== 'pending') return;
  await tx.updateTable('agents').set({ state: 'revoked', revoked_at: now }).where('id', '=', agentId).execute();
  await tx
    .updateTable('credentials')
    .set({ status: 'revoked', revoked_at: now })
    .where('id', '=', agent.credential_id)
    .where('status', '=', 'pending')
    .execute();
}

/** The sealed credential, for the connection's own agent; never a plaintext bearer. */
export function collectCredential(row: AgentConnectionTable, now: number): AgentCredentialCollection {
  const state = connectionState(row, now);
  if (state === 'expired')
    throw problem('credential_issuance_expired', 'the credential delivery window has closed; ask for a new connection');
  if (state === 'pending')
    throw problem('resource_conflict', 'this connection is not approved yet; wait on its status stream');
  if (state !== 'approved' || row.envelope === null)
    throw problem('resource_conflict', `this connection is ${state}; there is no credential to collect`);
  return {
    connection_id: row.id,
    envelope: JSON.parse(row.envelope),
    delivery_expires_at: isoTime(row.delivery_expires_at!),
  };
}

/**
 * Housekeeping: envelopes and pending agents of connections whose delivery window closed go, and
 * connections that ended long ago are deleted. Stored states stay as they were; views derive expiry.
 */
export async function expireConnections(store: Store, now: number): Promise<void> {
  const { db } = store;
  const lapsed = await db
    .selectFrom('agent_connections')
    .select(['id', 'agent_id'])
    .where('state', '=', 'approved')
    .where('delivery_expires_at', '<=', now)
    .where('envelope', 'is not', null)
    .execute();
  for (const row of lapsed) {
    await store.transaction(async ({ db: tx }) => {
      await tx
        .updateTable('agent_connections')
        .set({ envelope: null, updated_at: now })
        .where('id', '=', row.id)
        .execute();
      if (row.agent_id !== null) await revokePendingAgent(tx, row.agent_id, now);
    });
  }
  await db
    .deleteFrom('agent_connections')
    .where('expires_at', '<=', now - ENDED_CONNECTION_RETENTION_MS)
    .where((eb) =>
      eb.or([
        eb('delivery_expires_at', 'is', null),
        eb('delivery_expires_at', '<=', now - ENDED_CONNECTION_RETENTION_MS),
      ]),
    )
    .execute();
}
