// Invitations: an agent's routes on the control plane (GET/POST /api/v1/invitations, revoke), and
// the invited person's on the dashboard (open the link, prove an address, make a password, accept).
import {
  InvitationClaimRequest,
  InvitationCreate,
  InvitationListQuery,
  SignupEmail,
  SignupEmailVerify,
  SignupPassword,
} from '../../sdk/contract/people';
import { projectBearer } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { readCookie } from '../http/cookies';
import { endpoint, mutation, query, reply } from '../http/route';
import { clearDashboardCookie, setCookies, SIGNUP_COOKIE } from '../sign-in/dashboard-cookies';
import { dashboardAnonymous, dashboardSession, optionalSession, signupCookie } from '../sign-in/dashboard.auth';
import { sessionAnswer } from '../sign-in/dashboard-sessions';
import { newPasswordHash } from '../sign-in/sign-in';
import { acceptWithSession, claimInvitation, sendAddressCode, verifyAddressCode } from './acceptance';
import {
  checkDashboardLinkReplay,
  createDashboardLink,
  createInvitations,
  DASHBOARD_LINK_TTL_MS,
  listInvitations,
  revokeInvitation,
} from './invitations';
import { checkSignupReady, completeInvitationSignup } from './signup';

/** Invitation requests per project per hour: each may send up to twenty mails. */
const INVITATIONS_PER_PROJECT_PER_HOUR = 30;
const CLAIMS_PER_IP = 30;
const CODES_PER_IP_PER_HOUR = 10;
const NO_STORE = { 'Cache-Control': 'no-store' };

export const listProjectInvitations = query(
  { auth: projectBearer, area: 'project', query: InvitationListQuery },
  async (ctx) => reply.ok(await listInvitations(ctx.services.store.db, ctx.principal.tenantId, ctx.query, ctx.now)),
);

export const createProjectInvitations = mutation(
  {
    auth: projectBearer,
    area: 'project',
    body: InvitationCreate,
    idempotency: 'required',
    rateLimits: (ctx) => [
      {
        name: 'invitation-project',
        limit: INVITATIONS_PER_PROJECT_PER_HOUR,
        windowSeconds: 3600,
        key: ctx.principal.tenantId,
      },
    ],
  },
  async (ctx, work) => {
    const created = await createInvitations(
      ctx.services,
      work,
      { tenantId: ctx.principal.tenantId, ...ctx.body, requestId: ctx.requestId },
      ctx.now,
    );
    // A link's URL is a credential: never cached, never sent on as a Referer.
    return reply.created(created, {
      headers: { 'Cache-Control': 'private, no-store', 'Referrer-Policy': 'no-referrer' },
    });
  },
);

/** Dashboard links per project, per calling credential and per client IP, per hour (the peer's budgets). */
const DASHBOARD_LINKS_PER_PROJECT_PER_HOUR = 30;
const DASHBOARD_LINKS_PER_CREDENTIAL_PER_HOUR = 20;
const DASHBOARD_LINKS_PER_IP_PER_HOUR = 30;

/**
 * POST /api/v1/account/dashboard-links: a ten-minute, single-use link for the person beside the
 * agent. An exact Idempotency-Key retry gets the same link while it can still be claimed; the
 * recorded answer (a credential) is erased when the link expires, and a later retry is link_expired.
 */
export const createAccountDashboardLink = mutation(
  {
    auth: projectBearer,
    area: 'project',
    idempotency: {
      mode: 'optional',
      eraseBodyAfterMs: DASHBOARD_LINK_TTL_MS,
      onReplay: (ctx, recorded) => checkDashboardLinkReplay(ctx.services.store.db, recorded.body, ctx.now),
    },
    rateLimits: (ctx) => [
      {
        name: 'dashboard-link-project',
        limit: DASHBOARD_LINKS_PER_PROJECT_PER_HOUR,
        windowSeconds: 3600,
        key: ctx.principal.tenantId,
      },
      {
        name: 'dashboard-link-credential',
        limit: DASHBOARD_LINKS_PER_CREDENTIAL_PER_HOUR,
        windowSeconds: 3600,
        key: ctx.principal.credentialId,
      },
      { name: 'dashboard-link-ip', limit: DASHBOARD_LINKS_PER_IP_PER_HOUR, windowSeconds: 3600, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const link = await createDashboardLink(
      ctx.services,
      work,
      { tenantId: ctx.principal.tenantId, requestId: ctx.requestId },
      ctx.now,
    );
    return reply.created(link, { headers: { 'Cache-Control': 'private, no-store', 'Referrer-Policy': 'no-referrer' } });
  },
);

export const revokeProjectInvitation = mutation(
  { auth: projectBearer, area: 'project', idempotency: 'optional' },
  async (ctx, work) => {
    await revokeInvitation(
      ctx.services,
      work,
      { tenantId: ctx.principal.tenantId, id: ctx.params.id!, requestId: ctx.requestId },
      ctx.now,
    );
    return reply.noContent();
  },
);

export const claimDashboardInvitation = endpoint(
  {
    auth: dashboardAnonymous,
    body: InvitationClaimRequest,
    rateLimits: (ctx) => [
      { name: 'invitation-claim-ip', limit: CLAIMS_PER_IP, windowSeconds: 600, key: clientIp(ctx) },
    ],
  },
  async (ctx) => {
    const signedIn = await optionalSession(ctx);
    let cookie = '';
    const answer = await ctx.commitReply(async (work) => {
      const claimed = await claimInvitation(work.db, { token: ctx.body.token, signedIn: signedIn?.person }, ctx.now);
      cookie = claimed.cookie;
      return reply.ok(claimed.claim, { headers: { ...NO_STORE, 'Referrer-Policy': 'no-referrer' } });
    });
    setCookies(ctx, [cookie]);
    return answer;
  },
);

export const sendSignupCode = mutation(
  {
    auth: signupCookie,
    body: SignupEmail,
    rateLimits: (ctx) => [
      { name: 'address-code-ip', limit: CODES_PER_IP_PER_HOUR, windowSeconds: 3600, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    await sendAddressCode(ctx.services, work, ctx.principal.signup, ctx.body.email, ctx.now);
    return reply.accepted(undefined, { headers: NO_STORE });
  },
);

export const verifySignupCode = endpoint({ auth: signupCookie, body: SignupEmailVerify }, async (ctx) =>
  reply.ok(await verifyAddressCode(ctx.services.store.db, ctx.principal.signup, ctx.body.code, ctx.now), {
    headers: NO_STORE,
  }),
);

export const signupWithPassword = endpoint({ auth: signupCookie, body: SignupPassword }, async (ctx) => {
  const { signup } = ctx.principal;
  checkSignupReady(signup);
  const passwordHash = await newPasswordHash(ctx.services, ctx.body.password);
  let cookie = '';
  const answer = await ctx.commitReply(async (work) => {
    const done = await completeInvitationSignup(
      ctx.services,
      work,
      { signup, displayName: ctx.body.display_name, credential: { passwordHash }, requestId: ctx.requestId },
      ctx.now,
    );
    cookie = done.session.cookie;
    return reply.ok(await sessionAnswer(work.db, done.session, done.person), { headers: NO_STORE });
  });
  setCookies(ctx, [cookie, clearDashboardCookie(SIGNUP_COOKIE)]);
  return answer;
});

/** A signed-in person accepts the invitation whose link this browser opened (the signup cookie). */
export const acceptAsSignedIn = endpoint({ auth: dashboardSession }, async (ctx) => {
  const token = readCookie(ctx.req, SIGNUP_COOKIE);
  const answer = await ctx.commitReply(async (work) =>
    reply.ok(
      await acceptWithSession(
        ctx.services,
        work,
        { signupToken: token, principal: ctx.principal, requestId: ctx.requestId },
        ctx.now,
      ),
      {
        headers: NO_STORE,
      },
    ),
  );
  setCookies(ctx, [clearDashboardCookie(SIGNUP_COOKIE)]);
  return answer;
});
