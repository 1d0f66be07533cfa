// Control-plane bearer realms: the Model A account bearer and the Model P project bearer.
// Tokens are random, stored only as SHA-256 hashes, and compared in constant time.
import { safeEqual, sha256Hex } from '../keys';
import { problem, type Generation } from '../problem';
import type { AnyContext, Authenticator, CapabilityArea, Principal } from './route';
import type { MeteredCredits } from './tenancy';

export interface TenantPrincipal extends Principal {
  realm: 'account' | 'project';
  tenantId: string;
  credentialId: string;
  generation: Generation;
  plan: string;
  /** Effective areas: the credential's, as far as the plan allows. */
  areas: ReadonlySet<CapabilityArea>;
  /** Balance as read while authenticating, so routes exempt from the meter need no second read. */
  credits: MeteredCredits;
}

const REALM_OF: Record<Generation, 'account' | 'project'> = { A: 'account', P: 'project' };

export function bearerToken(ctx: AnyContext): string | undefined {
  const header = ctx.req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(header);
  if (!match) throw unauthorized('Authorization must be "Bearer <token>"');
  return match[1];
}

function unauthorized(detail: string) {
  return problem('unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="marquee"' } });
}

/**
 * Accepts the bearers of the listed generations: ['A'] account routes, ['P'] project routes,
 * ['A', 'P'] routes open to both. A valid bearer of the other generation is forbidden, not unknown.
 */
export function tenantBearer(generations: readonly Generation[]): Authenticator<TenantPrincipal> {
  return {
    realm: generations.length === 1 ? REALM_OF[generations[0]!] : 'project',
    async authenticate(ctx) {
      const token = bearerToken(ctx);
      if (!token) throw unauthorized('this route needs Authorization: Bearer <token>');
      const hash = sha256Hex(token);
      const bearer = await ctx.services.bearers.find(hash);
      if (bearer?.suspended && safeEqual(bearer.tokenHash, hash))
        throw problem('forbidden', 'this project is suspended by the operator of this installation');
      if (!bearer || !safeEqual(bearer.tokenHash, hash) || !bearer.active) {
        throw unauthorized('the bearer token is unknown or revoked');
      }
      if (!generations.includes(bearer.generation)) {
        throw problem('forbidden', `this route takes ${wantedBearers(generations)}`);
      }
      return {
        realm: REALM_OF[bearer.generation],
        scope: bearer.tenantId,
        tenantId: bearer.tenantId,
        credentialId: bearer.credentialId,
        generation: bearer.generation,
        plan: bearer.plan,
        areas: bearer.areas,
        credits: bearer.credits,
      };
    },
  };
}

/** "an account bearer (Model A)", "a project bearer (Model P)", or both joined by "or". */
export function wantedBearers(generations: readonly Generation[]): string {
  return generations
    .map((g) => `${REALM_OF[g] === 'account' ? 'an' : 'a'} ${REALM_OF[g]} bearer (Model ${g})`)
    .join(' or ');
}

export const accountBearer = tenantBearer(['A']);
export const projectBearer = tenantBearer(['P']);
/** Routes marked "A or P". */
export const anyBearer = tenantBearer(['A', 'P']);

/**
 * POST /api/v1/account/credential/revoke: the calling bearer of either generation, active or
 * already revoked, so a client unsure whether its revocation landed may repeat it safely. A
 * pending agent bearer (not yet activated) is not one: it authorizes only its activation.
 */
export const revocableBearer: Authenticator<TenantPrincipal & { revoked: boolean }> = {
  realm: 'project',
  async authenticate(ctx) {
    const token = bearerToken(ctx);
    if (!token) throw unauthorized('this route needs Authorization: Bearer <token>');
    const hash = sha256Hex(token);
    const bearer = await ctx.services.bearers.find(hash);
    if (!bearer || !safeEqual(bearer.tokenHash, hash) || (!bearer.active && !bearer.revoked && !bearer.suspended))
      throw unauthorized('the bearer token is unknown');
    return {
      realm: REALM_OF[bearer.generation],
      scope: bearer.tenantId,
      tenantId: bearer.tenantId,
      credentialId: bearer.credentialId,
      generation: bearer.generation,
      plan: bearer.plan,
      areas: bearer.areas,
      credits: bearer.credits,
      revoked: bearer.revoked === true,
    };
  },
};

export function isTenantPrincipal(p: Principal | undefined): p is TenantPrincipal {
  return p !== undefined && (p.realm === 'account' || p.realm === 'project') && 'tenantId' in p;
}
