// Dashboard realms: the session cookie and the signup cookie, read only on the dashboard origin.
// Every dashboard route refuses an Authorization header (no bearer, agent or operator credential
// works here) and cross-site requests; a mutation must come from the dashboard origin itself and
// carry the cookie row's synchronizer token in Marquee-CSRF-Token (SameSite=Strict is the first
// wall, the Origin check the second, the token the third).
import { CSRF_HEADER } from '../../sdk/contract/people';
import { readCookie } from '../http/cookies';
import type { AnyContext, Authenticator, Principal } from '../http/route';
import { safeEqual } from '../keys';
import type { MembershipKind, PersonTable } from '../members/members.tables';
import { problem } from '../problem';
import { SESSION_COOKIE, SIGNUP_COOKIE } from './dashboard-cookies';
import { liveSession, touchSession } from './dashboard-sessions';
import type { DashboardSessionTable, SignupTable } from './sign-in.tables';
import { liveSignup } from './signups';

export interface DashboardPrincipal extends Principal {
  realm: 'dashboard';
  session: DashboardSessionTable;
  person: PersonTable;
  /** The selected project and the person's membership of it, when both are current. */
  project: { id: string; name: string; membership: MembershipKind } | null;
}

export interface SignupPrincipal extends Principal {
  realm: 'signup';
  signup: SignupTable;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function unauthorized(detail: string) {
  return problem('unauthorized', detail);
}

/**
 * What every dashboard route checks before any cookie: no Authorization header, no cross-site or
 * same-site request (Fetch Metadata), and for a mutation an Origin that is the dashboard's own.
 */
export function checkDashboardRequest(ctx: AnyContext): void {
  if (ctx.req.headers.authorization !== undefined)
    throw unauthorized('dashboard routes take the dashboard cookie, never an Authorization header');
  const site = ctx.req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site')
    throw problem('forbidden', `Fetch Metadata: ${site} requests are refused on the dashboard`);
  if (MUTATING.has(ctx.req.method) && ctx.req.headers.origin !== ctx.services.config.dashboardOrigin)
    throw problem('forbidden', 'dashboard changes must come from the dashboard origin (Origin header)');
}

function checkCsrf(ctx: AnyContext, expected: string): void {
  if (!MUTATING.has(ctx.req.method)) return;
  const sent = ctx.req.headers[CSRF_HEADER.toLowerCase()];
  if (typeof sent !== 'string' || !safeEqual(sent, expected))
    throw problem('forbidden', `this change needs the ${CSRF_HEADER} header with the session's csrf_token`);
}

/** No credential, on the dashboard origin: sign-in, ceremonies' starts, claims of links. */
export const dashboardAnonymous: Authenticator = {
  realm: 'none',
  async authenticate(ctx) {
    checkDashboardRequest(ctx);
    return { realm: 'none', scope: 'dashboard-anon' };
  },
};

async function resolveSession(ctx: AnyContext, csrf = true): Promise<DashboardPrincipal | undefined> {
  const token = readCookie(ctx.req, SESSION_COOKIE);
  if (!token) return undefined;
  const { db } = ctx.services.store;
  const session = await liveSession(db, token, ctx.now);
  if (!session) return undefined;
  const person = await db.selectFrom('people').selectAll().where('id', '=', session.person_id).executeTakeFirst();
  if (!person) return undefined;
  let project: DashboardPrincipal['project'] = null;
  if (session.tenant_id !== null) {
    const row = await db
      .selectFrom('memberships')
      .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
      .select(['tenants.id', 'tenants.name', 'tenants.status', 'memberships.kind'])
      .where('memberships.tenant_id', '=', session.tenant_id)
      .where('memberships.person_id', '=', person.id)
      .executeTakeFirst();
    if (row && row.status === 'active') project = { id: row.id, name: row.name, membership: row.kind };
  }
  if (csrf) checkCsrf(ctx, session.csrf_token);
  await touchSession(db, session, ctx.now);
  return { realm: 'dashboard', scope: `person:${person.id}`, session, person, project };
}

/** A signed-in person (the session cookie). */
export const dashboardSession: Authenticator<DashboardPrincipal> = {
  realm: 'dashboard',
  async authenticate(ctx) {
    checkDashboardRequest(ctx);
    const principal = await resolveSession(ctx);
    if (!principal) throw unauthorized('sign in first: this route needs a current dashboard session');
    return principal;
  },
};

/** A signed-in project member of the selected project (ad buyers see only their own scope, later). */
export const projectMemberSession: Authenticator<DashboardPrincipal> = {
  realm: 'dashboard',
  async authenticate(ctx) {
    const principal = await dashboardSession.authenticate(ctx);
    if (!principal.project)
      throw problem('forbidden', 'select a project first: this session has no current project (or it is suspended)');
    if (principal.project.membership !== 'project_member')
      throw problem('forbidden', 'this needs a project member; an ad buyer cannot do it');
    return principal;
  },
};

/** The signup cookie: an invitation being accepted, or a sign-in reset being finished. */
export const signupCookie: Authenticator<SignupPrincipal> = {
  realm: 'signup',
  async authenticate(ctx) {
    checkDashboardRequest(ctx);
    const principal = await resolveSignup(ctx);
    if (!principal) throw unauthorized('open your invitation or reset link again: this step needs its signup cookie');
    return principal;
  },
};

async function resolveSignup(ctx: AnyContext): Promise<SignupPrincipal | undefined> {
  const token = readCookie(ctx.req, SIGNUP_COOKIE);
  if (!token) return undefined;
  const signup = await liveSignup(ctx.services.store.db, token, ctx.now);
  if (!signup) return undefined;
  checkCsrf(ctx, signup.csrf_token);
  return { realm: 'signup', scope: `signup:${signup.id}`, signup };
}

/** Either cookie: passkey registration serves signups, resets and signed-in people adding a passkey. */
export const signupOrSession: Authenticator<SignupPrincipal | DashboardPrincipal> = {
  realm: 'dashboard',
  async authenticate(ctx) {
    checkDashboardRequest(ctx);
    // A signup in progress wins: it is the narrower, more recent intent of this browser.
    const principal = (await resolveSignup(ctx)) ?? (await resolveSession(ctx));
    if (!principal)
      throw unauthorized('this needs the signup cookie of an invitation or reset, or a dashboard session');
    return principal;
  },
};

/**
 * The session when there is one, without its CSRF check: for answers that only describe what to do
 * next (an invitation claim says "accept" to a signed-in person) and change nothing of the session.
 */
export async function optionalSession(ctx: AnyContext): Promise<DashboardPrincipal | undefined> {
  return resolveSession(ctx, false);
}
