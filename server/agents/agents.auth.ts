// Agent realms: the unauthenticated connection start (which refuses every credential a browser or
// another realm could carry), the temporary Marquee-Agent-Connect credential, the pending agent
// bearer (activation only) and the revocable agent bearer (disconnection only).
import { AGENT_CONNECT_SCHEME } from '../../sdk/contract/agents';
import type { AnyContext, Authenticator, Principal } from '../http/route';
import { safeEqual, sha256Hex } from '../keys';
import { problem } from '../problem';
import type { AgentConnectionTable } from './agents.tables';

export interface AgentConnectPrincipal extends Principal {
  realm: 'agent-connect';
  connection: AgentConnectionTable;
}

export interface AgentBearerPrincipal extends Principal {
  realm: 'agent';
  tenantId: string;
  credentialId: string;
  status: 'pending' | 'active' | 'revoked';
}

/**
 * POST /api/v1/agent-connections takes nothing but its body: no bearer, no cookie, no Origin (a
 * browser page must not start one on a visitor's behalf), no query and no Idempotency-Key.
 */
export const agentConnectionStarter: Authenticator = {
  realm: 'none',
  async authenticate(ctx) {
    const { headers } = ctx.req;
    if (headers.origin !== undefined)
      throw problem('forbidden', 'agent connections are not started from a browser page (Origin)');
    if (headers.cookie !== undefined) throw problem('forbidden', 'agent connections take no cookie');
    if (headers.authorization !== undefined)
      throw problem(
        'invalid_request',
        'agent connections take no Authorization header: the request is its own credential',
      );
    if (headers['idempotency-key'] !== undefined)
      throw problem('invalid_request', 'agent connections take no Idempotency-Key: a retry starts a new connection');
    if (ctx.req.originalUrl.includes('?')) throw problem('invalid_request', 'agent connections take no query');
    return { realm: 'none', scope: 'anon' };
  },
};

/** `Authorization: Marquee-Agent-Connect <token>` of the connection the path names. */
export const agentConnectCredential: Authenticator<AgentConnectPrincipal> = {
  realm: 'agent-connect',
  async authenticate(ctx) {
    const header = ctx.req.headers.authorization ?? '';
    const match = new RegExp(`^${AGENT_CONNECT_SCHEME} (mq_conn_[A-Za-z0-9_-]{43})$`).exec(header);
    const refused = problem('unauthorized', `this route needs Authorization: ${AGENT_CONNECT_SCHEME} <connect_token>`, {
      headers: { 'WWW-Authenticate': `${AGENT_CONNECT_SCHEME} realm="marquee"` },
    });
    if (!match) throw refused;
    const hash = sha256Hex(match[1]!);
    const row = await ctx.services.store.db
      .selectFrom('agent_connections')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    // Another connection's credential is no credential for this one.
    if (!row || row.id !== ctx.params.id || !safeEqual(row.token_hash, hash)) throw refused;
    return { realm: 'agent-connect', scope: `connection:${row.id}`, connection: row };
  },
};

async function agentBearer(ctx: AnyContext): Promise<AgentBearerPrincipal | undefined> {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(ctx.req.headers.authorization ?? '');
  if (!match) return undefined;
  const hash = sha256Hex(match[1]!);
  const row = await ctx.services.store.db
    .selectFrom('credentials')
    .select(['id', 'tenant_id', 'status', 'kind', 'token_hash'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
  if (row?.kind !== 'project' || !safeEqual(row.token_hash, hash)) return undefined;
  return { realm: 'agent', scope: row.tenant_id, tenantId: row.tenant_id, credentialId: row.id, status: row.status };
}

function bearerRefused(detail: string) {
  return problem('unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="marquee"' } });
}

/** The bearer a connection delivered, pending or (for a replayed activation) already active. */
export const pendingAgentBearer: Authenticator<AgentBearerPrincipal> = {
  realm: 'agent',
  async authenticate(ctx) {
    const principal = await agentBearer(ctx);
    if (!principal) throw bearerRefused('this route needs the agent bearer from the collected envelope');
    if (principal.status === 'revoked') throw problem('resource_conflict', 'this agent installation was disconnected');
    return principal;
  },
};

/** The calling agent's own bearer, active or already revoked (a repeat is a no-op). */
export const revocableAgentBearer: Authenticator<AgentBearerPrincipal> = {
  realm: 'agent',
  async authenticate(ctx) {
    const principal = await agentBearer(ctx);
    if (!principal || principal.status === 'pending')
      throw bearerRefused("this route needs the calling agent's own active (or revoked) bearer");
    return principal;
  },
};
