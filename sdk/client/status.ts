// Service status and capabilities (no bearer needed).
import type { Capabilities, HealthResponse, ReadyResponse, VersionResponse } from '../contract/status';
import type { ClientTransport } from './transport';

export function statusRoutes(t: ClientTransport) {
  return {
    health: () => t.request<HealthResponse>({ method: 'GET', path: '/.health', authenticated: false }),
    /** Ready, or a MarqueeProblem (not_ready, server_draining, dependency_unavailable, schema_incompatible). */
    ready: () => t.request<ReadyResponse>({ method: 'GET', path: '/.ready', authenticated: false }),
    version: () => t.request<VersionResponse>({ method: 'GET', path: '/.version', authenticated: false }),
    /** Versions, limits (feed them to the packer) and feature flags. */
    capabilities: () => t.request<Capabilities>({ method: 'GET', path: '/api/v1/capabilities', authenticated: false }),
  };
}
