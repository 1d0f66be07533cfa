// The agent installation this bearer belongs to: read it, or disconnect it (its bearer stops
// working). Connecting a new installation is `agent-connection.ts`.
import type { AgentSelfStatus } from '../contract/agents';
import type { CallOptions, ClientTransport } from './transport';

export function agentRoutes(t: ClientTransport) {
  return {
    /** This installation, and whether a member of the project can sign in (`connection_ready`). */
    self: () => t.request<AgentSelfStatus>({ method: 'GET', path: '/api/v1/agents/self' }),
    /**
     * Disconnects this installation: its bearer is revoked. The project's last active one is refused
     * with 409 agent_lockout_risk unless `allowLastAgent`.
     */
    disconnect: (allowLastAgent = false, options: CallOptions = {}) =>
      t.request<void>({
        method: 'POST',
        path: '/api/v1/agents/self/disconnect',
        json: { allow_last_agent: allowLastAgent },
        idempotent: true,
        ...options,
      }),
  };
}
