// Placement capabilities: the parent-only handle an application placement's KV calls carry in
// Marquee-Placement-Capability. Signed with the `placement-capability` key, valid five minutes, and
// bound to everything the spec names, so a handle never works for another session, screen,
// release, placement, manifest revision, generation or operation.
import type { Keys } from '../keys';

export const PLACEMENT_CAPABILITY_TTL_MS = 5 * 60_000; // spec: placement capability five minutes

export type KvOperations = 'read' | 'read-write';

export interface PlacementCapability {
  runtimeSessionId: string;
  tenantId: string;
  screenId: string;
  applicationId: string;
  releaseId: string;
  pageId: string;
  placementId: string;
  /** The screen's integer manifest revision the placement belongs to. */
  manifestRevision: number;
  contentGeneration: number;
  operations: KvOperations;
  expiresAt: number;
}

/** The sealed claims, with short names: the handle travels on every KV call. */
interface Claims {
  v: 1;
  s: string;
  t: string;
  sc: string;
  a: string;
  r: string;
  pg: string;
  p: string;
  m: number;
  g: number;
  o: 'r' | 'rw';
  x: number;
}

export function sealPlacementCapability(keys: Keys, capability: PlacementCapability): string {
  const claims: Claims = {
    v: 1,
    s: capability.runtimeSessionId,
    t: capability.tenantId,
    sc: capability.screenId,
    a: capability.applicationId,
    r: capability.releaseId,
    pg: capability.pageId,
    p: capability.placementId,
    m: capability.manifestRevision,
    g: capability.contentGeneration,
    o: capability.operations === 'read-write' ? 'rw' : 'r',
    x: capability.expiresAt,
  };
  return keys.seal('placement-capability', claims);
}

/** The capability a handle carries when its signature holds, else undefined (expiry is the caller's check). */
export function unsealPlacementCapability(keys: Keys, handle: string | undefined): PlacementCapability | undefined {
  if (handle === undefined || handle.length > 4096) return undefined;
  const c = keys.unseal<Claims>('placement-capability', handle);
  if (c?.v !== 1 || typeof c.x !== 'number' || (c.o !== 'r' && c.o !== 'rw')) return undefined;
  return {
    runtimeSessionId: c.s,
    tenantId: c.t,
    screenId: c.sc,
    applicationId: c.a,
    releaseId: c.r,
    pageId: c.pg,
    placementId: c.p,
    manifestRevision: c.m,
    contentGeneration: c.g,
    operations: c.o === 'rw' ? 'read-write' : 'read',
    expiresAt: c.x,
  };
}
