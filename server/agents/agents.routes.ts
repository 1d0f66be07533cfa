// Agent installations (spec Endpoints / Agent installations) on the control plane, and the
// approval routes a signed-in member uses on the dashboard.
import { AgentConnectionApprove, AgentConnectionRequest, AgentDisconnectRequest } from '../../sdk/contract/agents';
import { projectBearer } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { eventStream, mutation, query, reply } from '../http/route';
import { dashboardSession, projectMemberSession } from '../sign-in/dashboard.auth';
import {
  approveConnection,
  cancelConnection,
  collectCredential,
  connectionForApproval,
  denyConnection,
  startConnection,
  type ConnectionRequest,
} from './agent-connections';
import { serveConnectionStatus } from './agent-status-stream';
import {
  agentConnectCredential,
  agentConnectionStarter,
  pendingAgentBearer,
  revocableAgentBearer,
} from './agents.auth';
import { activateAgent, agentSelfStatus, disconnectAgent } from './agents';

/** Connection requests per client address per hour: each holds a row for a day. */
const CONNECTIONS_PER_IP_PER_HOUR = 20;
/** Codes an approver may type per connection per day before it must be asked for again. */
const APPROVAL_TRIES_PER_CONNECTION = 5;
const NO_STORE = { 'Cache-Control': 'no-store' };

export const startAgentConnection = mutation(
  {
    auth: agentConnectionStarter,
    body: AgentConnectionRequest,
    rateLimits: (ctx) => [
      { name: 'agent-connection-ip', limit: CONNECTIONS_PER_IP_PER_HOUR, windowSeconds: 3600, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) =>
    reply.created(await startConnection(ctx.services, work, ctx.body as ConnectionRequest, ctx.now), {
      headers: { ...NO_STORE, 'Referrer-Policy': 'no-referrer' },
    }),
);

export const agentConnectionEvents = eventStream({ auth: agentConnectCredential }, async (ctx) => {
  serveConnectionStatus(ctx.services, ctx.res, ctx.principal.connection.id);
});

export const collectAgentCredential = query({ auth: agentConnectCredential }, async (ctx) =>
  reply.ok(collectCredential(ctx.principal.connection, ctx.now), { headers: NO_STORE }),
);

export const cancelAgentConnection = mutation({ auth: agentConnectCredential }, async (ctx, work) => {
  await cancelConnection(ctx.services, work, ctx.principal.connection.id, ctx.now);
  return reply.noContent({ headers: NO_STORE });
});

export const activateSelf = mutation({ auth: pendingAgentBearer }, async (ctx, work) =>
  reply.ok(
    await activateAgent(
      ctx.services,
      work,
      { credentialId: ctx.principal.credentialId, requestId: ctx.requestId },
      ctx.now,
    ),
    {
      headers: NO_STORE,
    },
  ),
);

export const getSelf = mutation({ auth: projectBearer, meter: false }, async (ctx, work) =>
  reply.ok(
    await agentSelfStatus(
      work,
      { credentialId: ctx.principal.credentialId, tenantId: ctx.principal.tenantId },
      ctx.now,
    ),
  ),
);

export const disconnectSelf = mutation(
  { auth: revocableAgentBearer, body: AgentDisconnectRequest.optional() },
  async (ctx, work) => {
    await disconnectAgent(
      ctx.services,
      work,
      {
        credentialId: ctx.principal.credentialId,
        allowLastAgent: ctx.body?.allow_last_agent ?? false,
        requestId: ctx.requestId,
      },
      ctx.now,
    );
    return reply.noContent({ headers: { 'Cache-Control': 'private, no-store' } });
  },
);

export const showConnectionForApproval = query({ auth: dashboardSession }, async (ctx) =>
  reply.ok(await connectionForApproval(ctx.services.store.db, ctx.params.id!, ctx.now), {
    headers: { 'Cache-Control': 'private, no-store' },
  }),
);

export const approveAgentConnection = mutation(
  {
    auth: projectMemberSession,
    body: AgentConnectionApprove,
    rateLimits: (ctx) => [
      {
        name: 'agent-approval-connection',
        limit: APPROVAL_TRIES_PER_CONNECTION,
        windowSeconds: 86_400,
        key: ctx.params.id!,
      },
    ],
  },
  async (ctx, work) => {
    const { person, project } = ctx.principal;
    return reply.ok(
      await approveConnection(
        ctx.services,
        work,
        { id: ctx.params.id!, userCode: ctx.body.user_code, tenantId: project!.id, person, requestId: ctx.requestId },
        ctx.now,
      ),
      { headers: NO_STORE },
    );
  },
);

export const denyAgentConnection = mutation({ auth: projectMemberSession }, async (ctx, work) =>
  reply.ok(await denyConnection(ctx.services, work, { id: ctx.params.id!, person: ctx.principal.person }, ctx.now), {
    headers: NO_STORE,
  }),
);
