// The plan catalog. A project's effective capability areas are its credential's areas that its plan
// allows; a plan missing from the catalog allows nothing (spec: an unknown plan fails closed).
import { CAPABILITY_AREAS, type CapabilityArea } from '../http/route';

export interface Plan {
  name: string;
  areas: readonly CapabilityArea[];
  /** Whole credits granted each UTC month. */
  includedCredits: number;
  screenLimit: number;
  contentLimitBytes: number;
}

export const SCREENS_PER_TENANT = 50; // spec Capabilities: screens_per_account
export const CONTENT_BYTES_PER_TENANT = 1_073_741_824; // spec Capabilities: account_content_bytes
export const INCLUDED_CREDITS = 10_000; // reference contract: the Standard included remainder

export const PLANS: Record<string, Plan> = {
  signage: {
    name: 'signage',
    areas: ['screens', 'content', 'playlists', 'reports', 'project'],
    includedCredits: INCLUDED_CREDITS,
    screenLimit: SCREENS_PER_TENANT,
    contentLimitBytes: CONTENT_BYTES_PER_TENANT,
  },
  advertising: {
    name: 'advertising',
    areas: CAPABILITY_AREAS,
    includedCredits: INCLUDED_CREDITS,
    screenLimit: SCREENS_PER_TENANT,
    contentLimitBytes: CONTENT_BYTES_PER_TENANT,
  },
};

export function planOf(name: string): Plan | undefined {
  return Object.hasOwn(PLANS, name) ? PLANS[name] : undefined;
}

export function effectiveAreas(planName: string, credentialAreas: readonly string[]): Set<CapabilityArea> {
  const plan = planOf(planName);
  if (!plan) return new Set();
  return new Set(plan.areas.filter((a) => credentialAreas.includes(a)));
}
