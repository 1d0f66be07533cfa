// The release-grant cookie: `__Host-marquee-release`, set only on the exact release host by a
// consumed launch ticket, signed with the `release-grant` key and re-checked on every request.
import { cookieValue } from '../http/cookies';
import type { Keys } from '../keys';
import type { GrantBinding } from './launch-tickets';

export const RELEASE_GRANT_COOKIE = '__Host-marquee-release';
/** A page with an application may stay up a whole day (advance max_ms is at most 86400000). */
export const RELEASE_GRANT_TTL_MS = 24 * 3600_000;

interface Sealed {
  v: 1;
  t: string;
  r: string;
  h: string;
  s: string;
  g: number;
  m: string;
  gr: string;
  exp: number;
}

/**
 * The Set-Cookie value. SameSite=None with Partitioned: the release is framed by the player, which
 * browsers treat as another site (localhost and `*.release.localhost` are different sites), and
 * partitioning keys the cookie to the player's top-level site, so a page elsewhere that frames the
 * release host never carries it. The host serves only GET and HEAD of immutable files.
 */
export function releaseGrantSetCookie(keys: Keys, binding: GrantBinding, now: number): string {
  const claims: Sealed = {
    v: 1,
    t: binding.tenantId,
    r: binding.releaseId,
    h: binding.hostLabel,
    s: binding.screenId,
    g: binding.contentGeneration,
    m: binding.manifestRevision,
    gr: binding.grantId,
    exp: now + RELEASE_GRANT_TTL_MS,
  };
  const value = keys.seal('release-grant', claims);
  return `${RELEASE_GRANT_COOKIE}=${value}; Path=/; Max-Age=${RELEASE_GRANT_TTL_MS / 1000}; Secure; HttpOnly; SameSite=None; Partitioned`;
}

/** The binding of a valid, unexpired cookie in the Cookie header (sent once), else undefined. */
export function readReleaseGrant(keys: Keys, cookieHeader: string | undefined, now: number): GrantBinding | undefined {
  const sealed = keys.unseal<Sealed>('release-grant', cookieValue(cookieHeader, RELEASE_GRANT_COOKIE));
  if (sealed?.v !== 1 || typeof sealed.exp !== 'number' || sealed.exp <= now) return undefined;
  return {
    tenantId: sealed.t,
    releaseId: sealed.r,
    hostLabel: sealed.h,
    screenId: sealed.s,
    contentGeneration: sealed.g,
    manifestRevision: sealed.m,
    grantId: sealed.gr,
  };
}
