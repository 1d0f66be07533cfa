// Agent installations of a project: every project bearer is one (the one enrollment issued, and
// each one connected since). Activation turns a connected agent's pending bearer on; an agent sees
// itself; disconnection revokes the caller's own bearer, never the project's last one by accident.
import type { Agent, AgentSelfStatus } from '../../sdk/contract/agents';
import type { CapabilityArea } from '../../sdk/contract/tenants';
import { isoTime } from '../clock';
import { credentialStreamsEndChannel } from '../events/event-log';
import { connectionReady } from '../members/people';
import { problem } from '../problem';
import type { Services } from '../services';
import type { Db, Tx, Work } from '../store/store';
import { newId } from '../keys';
import { connectionChannel } from './agent-connections';
import type { AgentTable } from './agents.tables';

/** Name and kind of the installation enrollment made, when the request did not say. */
export const ENROLLED_AGENT_DEFAULTS = { name: 'Marquee CLI', agent_type: 'cli' } as const;

/**
 * Records the agent installation an enrollment's bearer is (the enrollment request names it).
 * Bearers older than this record get one lazily, with the enrollment defaults.
 */
export async function recordEnrolledAgent(
  tx: Tx,
  input: {
    tenantId: string;
    credentialId: string;
    name?: string;
    agentType?: string;
    platform?: string;
    version?: string;
  },
  now: number,
): Promise<AgentTable> {
  const row: AgentTable = {
    id: newId('agt'),
    tenant_id: input.tenantId,
    credential_id: input.credentialId,
    connection_id: null,
    name: input.name ?? ENROLLED_AGENT_DEFAULTS.name,
    agent_type: input.agentType ?? ENROLLED_AGENT_DEFAULTS.agent_type,
    platform: input.platform ?? null,
    version: input.version ?? null,
    state: 'active',
    created_at: now,
    activated_at: now,
    revoked_at: null,
    delivery_expires_at: null,
  };
  await tx
    .insertInto('agents')
    .values(row)
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .execute();
  return await tx
    .selectFrom('agents')
    .selectAll()
    .where('credential_id', '=', input.credentialId)
    .executeTakeFirstOrThrow();
}

/** The agent a project bearer is: its row, made with the enrollment defaults when it has none yet. */
export async function agentOfCredential(tx: Tx, credentialId: string, now: number): Promise<AgentTable> {
  const row = await tx.selectFrom('agents').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  if (row) return row;
  const credential = await tx
    .selectFrom('credentials')
    .select(['tenant_id', 'status', 'created_at', 'kind'])
    .where('id', '=', credentialId)
    .executeTakeFirstOrThrow();
  if (credential.kind !== 'project') throw problem('forbidden', 'an account bearer is not an agent installation');
  const made = await recordEnrolledAgent(tx, { tenantId: credential.tenant_id, credentialId }, credential.created_at);
  if (credential.status === 'revoked') {
    await tx.updateTable('agents').set({ state: 'revoked', revoked_at: now }).where('id', '=', made.id).execute();
    return { ...made, state: 'revoked', revoked_at: now };
  }
  return made;
}

async function areasOf(db: Db | Tx, credentialId: string): Promise<CapabilityArea[]> {
  const row = await db
    .selectFrom('credentials')
    .select('areas')
    .where('id', '=', credentialId)
    .executeTakeFirstOrThrow();
  return JSON.parse(row.areas) as CapabilityArea[];
}

export async function agentView(db: Db | Tx, row: AgentTable): Promise<Agent> {
  return {
    id: row.id,
    name: row.name,
    agent_type: row.agent_type,
    platform: row.platform,
    version: row.version,
    state: row.state,
    capabilities: await areasOf(db, row.credential_id),
    created_at: isoTime(row.created_at),
    activated_at: row.activated_at === null ? null : isoTime(row.activated_at),
    revoked_at: row.revoked_at === null ? null : isoTime(row.revoked_at),
  };
}

/**
 * Activates the pending agent a bearer names: the agent and its bearer become active together, the
 * envelope is deleted and the connection is connected. An active agent's repeat is answered again.
 */
export async function activateAgent(
  services: Services,
  work: Work,
  input: { credentialId: string; requestId: string },
  now: number,
): Promise<Agent> {
  const agent = await agentOfCredential(work.db, input.credentialId, now);
  if (agent.state === 'active') return agentView(work.db, agent);
  if (agent.state === 'revoked') throw problem('resource_conflict', 'this agent installation was disconnected');
  if (agent.delivery_expires_at !== null && now >= agent.delivery_expires_at)
    throw problem('credential_issuance_expired', 'the credential delivery window has closed; connect again');
  const activated = await work.db
    .updateTable('credentials')
    .set({ status: 'active' })
    .where('id', '=', input.credentialId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(activated.numUpdatedRows) !== 1) {
    // An activation of the same bearer committed since the read: this one is its repeat.
    const current = await agentOfCredential(work.db, input.credentialId, now);
    if (current.state === 'active') return agentView(work.db, current);
    throw problem('resource_conflict', 'this agent installation was disconnected');
  }
  await work.db.updateTable('agents').set({ state: 'active', activated_at: now }).where('id', '=', agent.id).execute();
  if (agent.connection_id !== null) {
    await work.db
      .updateTable('agent_connections')
      .set({ state: 'connected', envelope: null, updated_at: now })
      .where('id', '=', agent.connection_id)
      .execute();
    const connectionId = agent.connection_id;
    work.afterCommit(() => services.notifier.publish(connectionChannel(connectionId)));
  }
  const capabilities = await areasOf(work.db, input.credentialId);
  await services.events.append(
    work,
    {
      type: 'agent.activated',
      tenantId: agent.tenant_id,
      message: `agent "${agent.name}" connected`,
      resource: { type: 'agent', id: agent.id },
      details: { name: agent.name, agent_type: agent.agent_type, capabilities },
      requestId: input.requestId,
    },
    now,
  );
  return agentView(work.db, { ...agent, state: 'active', activated_at: now });
}

export async function agentSelfStatus(
  work: Work,
  input: { credentialId: string; tenantId: string },
  now: number,
): Promise<AgentSelfStatus> {
  const agent = await agentOfCredential(work.db, input.credentialId, now);
  return { agent: await agentView(work.db, agent), connection_ready: await connectionReady(work.db, input.tenantId) };
}

/**
 * Revokes the caller's own bearer; the project and its content stay. The project's last active
 * agent goes only with allow_last_agent (else agent_lockout_risk): after it, only a member's
 * approval of a new connection brings an agent back. A revoked bearer's repeat changes nothing.
 */
export async function disconnectAgent(
  services: Services,
  work: Work,
  input: { credentialId: string; allowLastAgent: boolean; requestId: string },
  now: number,
): Promise<void> {
  const agent = await agentOfCredential(work.db, input.credentialId, now);
  if (agent.state === 'revoked') return;
  // The other active agents are counted, then this one is revoked: one disconnect per project at a
  // time where transactions run side by side, or two last-but-one agents would both leave.
  await work.lock(`agents:${agent.tenant_id}`);
  const others = await work.db
    .selectFrom('credentials')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', agent.tenant_id)
    .where('kind', '=', 'project')
    .where('status', '=', 'active')
    .where('id', '!=', input.credentialId)
    .executeTakeFirstOrThrow();
  if (Number(others.n) === 0 && !input.allowLastAgent) {
    throw problem(
      'agent_lockout_risk',
      'this is the project\'s last active agent; send {"allow_last_agent": true} to disconnect it anyway (a member can approve a new connection later)',
    );
  }
  await work.db
    .updateTable('credentials')
    .set({ status: 'revoked', revoked_at: now })
    .where('id', '=', input.credentialId)
    .execute();
  await work.db.updateTable('agents').set({ state: 'revoked', revoked_at: now }).where('id', '=', agent.id).execute();
  await services.events.append(
    work,
    {
      type: 'agent.disconnected',
      tenantId: agent.tenant_id,
      message: `agent "${agent.name}" disconnected itself`,
      resource: { type: 'agent', id: agent.id },
      details: { name: agent.name, allow_last_agent: input.allowLastAgent },
      requestId: input.requestId,
    },
    now,
  );
  work.afterCommit(() => services.notifier.publish(credentialStreamsEndChannel(input.credentialId)));
}
