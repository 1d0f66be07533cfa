// Control-plane bearer realms: the Model A account bearer and the Model P project bearer.
// Tokens are random, stored only as SHA-256 hashes, and compared in constant time.
import { safeEqual, sha256Hex } from '../keys';
import { effectiveAreas } from '../tenants/plans';
import { problem, type Generation } from '../problem';
import type { AnyContext, Authenticator, CapabilityArea, Principal } from './route';

export interface TenantPrincipal extends Principal {
  realm: 'account' | 'project';
  tenantId: string;
  credentialId: string;
  generation: Generation;
  plan: string;
  /** Effective areas: the credential's, as far as the plan allows. */
  areas: ReadonlySet<CapabilityArea>;
  /** Balance as read while authenticating, so routes exempt from the meter need no second read. */
  credits: { millis: number; grantMonth: string };
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
      const row = await ctx.services.store.db
        .selectFrom('credentials')
        .innerJoin('tenants', 'tenants.id', 'credentials.tenant_id')
        .select([
          'credentials.id as credential_id',
          'credentials.token_hash',
          'credentials.areas',
          'credentials.status as credential_status',
          'tenants.id as tenant_id',
          'tenants.generation',
          'tenants.status as tenant_status',
          'tenants.plan',
          'tenants.credit_millis',
          'tenants.credit_grant_month',
        ])
        .where('credentials.token_hash', '=', hash)
        .executeTakeFirst();
      if (
        !row ||
        !safeEqual(row.token_hash, hash) ||
        row.credential_status !== 'active' ||
        row.tenant_status !== 'active'
      ) {
        throw unauthorized('the bearer token is unknown or revoked');
      }
      if (!generations.includes(row.generation)) {
        const wanted = generations.map((g) => `${REALM_OF[g]} bearer (Model ${g})`).join(' or ');
        throw problem('forbidden', `this route takes a ${wanted}`);
      }
      return {
        realm: REALM_OF[row.generation],
        scope: row.tenant_id,
        tenantId: row.tenant_id,
        credentialId: row.credential_id,
        generation: row.generation,
        plan: row.plan,
        areas: effectiveAreas(row.plan, JSON.parse(row.areas) as string[]),
        credits: { millis: row.credit_millis, grantMonth: row.credit_grant_month },
      };
    },
  };
}

export const accountBearer = tenantBearer(['A']);
export const projectBearer = tenantBearer(['P']);
/** Routes marked "A or P". */
export const anyBearer = tenantBearer(['A', 'P']);

export function isTenantPrincipal(p: Principal | undefined): p is TenantPrincipal {
  return p !== undefined && (p.realm === 'account' || p.realm === 'project') && 'tenantId' in p;
}
