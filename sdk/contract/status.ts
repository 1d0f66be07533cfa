// Service status and the public capabilities document.
import type { LIMITS } from './limits';

export interface HealthResponse {
  status: 'alive';
}

export interface ReadyResponse {
  status: 'ready';
  degraded: string[];
}

export interface VersionResponse {
  version: string;
  commit: string;
  api_version: string;
  protocol_version: string;
}

/** GET /api/v1/capabilities: the versions, the active limits and the feature flags. */
export type Capabilities = { api_version: string; protocol_version: string; features: Record<string, boolean> } & {
  [K in keyof typeof LIMITS]: number;
};
