// Sign-in resets: the spec's POST /api/v1/sign-in-resets on the control plane, the same request
// from the dashboard's own page, and the dashboard steps that finish one (open the link, make a new
// password; a new passkey goes through the passkey registration routes with the signup cookie).
import {
  ResetClaimRequest,
  ResetPassword,
  SignInResetRequest,
  type SignInResetAccepted,
} from '../../sdk/contract/people';
import { Email } from '../../sdk/contract/tenants';
import { clientIp } from '../http/client-ip';
import { endpoint, mutation, reply, type AnyContext } from '../http/route';
import { problem } from '../problem';
import type { RateBudget } from '../http/rate-limit';
import { clearDashboardCookie, setCookies, SIGNUP_COOKIE } from './dashboard-cookies';
import { dashboardAnonymous, signupCookie } from './dashboard.auth';
import { claimReset, completeReset, requestReset, SIGN_IN_RESET_TTL_MS } from './resets';
import { sessionAnswer } from './dashboard-sessions';
import { newPasswordHash } from './sign-in';

/** Reset requests per client address and per address asked about, per hour (spec: rate-limited). */
const RESETS_PER_IP_PER_HOUR = 10;
const RESETS_PER_EMAIL_PER_HOUR = 3;
const CLAIMS_PER_IP = 30;

const ACCEPTED: SignInResetAccepted = { status: 'accepted', expires_in_seconds: SIGN_IN_RESET_TTL_MS / 1000 };

function resetBudgets(ctx: AnyContext): RateBudget[] {
  const email = (ctx.body as { email?: unknown } | undefined)?.email;
  const key = typeof email === 'string' && Email.safeParse(email).success ? email.toLowerCase() : undefined;
  return [
    { name: 'sign-in-reset-ip', limit: RESETS_PER_IP_PER_HOUR, windowSeconds: 3600, key: clientIp(ctx) },
    // Counted for every address alike, known or not: the budget is no oracle either.
    ...(key ? [{ name: 'sign-in-reset-email', limit: RESETS_PER_EMAIL_PER_HOUR, windowSeconds: 3600, key }] : []),
  ];
}

export const requestSignInReset = mutation(
  { body: SignInResetRequest, idempotency: 'required', rateLimits: resetBudgets },
  async (ctx, work) => {
    await requestReset(ctx.services, work, { email: ctx.body.email }, ctx.now);
    return reply.accepted(ACCEPTED, { headers: { 'Cache-Control': 'no-store' } });
  },
);

/** The same request from the dashboard page (same origin: no cross-origin call to the control plane). */
export const requestSignInResetFromDashboard = mutation(
  { auth: dashboardAnonymous, body: SignInResetRequest, rateLimits: resetBudgets },
  async (ctx, work) => {
    await requestReset(ctx.services, work, { email: ctx.body.email }, ctx.now);
    return reply.accepted(ACCEPTED, { headers: { 'Cache-Control': 'no-store' } });
  },
);

export const claimSignInReset = endpoint(
  {
    auth: dashboardAnonymous,
    body: ResetClaimRequest,
    rateLimits: (ctx) => [
      { name: 'sign-in-reset-claim-ip', limit: CLAIMS_PER_IP, windowSeconds: 600, key: clientIp(ctx) },
    ],
  },
  async (ctx) => {
    let cookie = '';
    const answer = await ctx.commitReply(async (work) => {
      const claimed = await claimReset(work.db, ctx.body.token, ctx.now);
      cookie = claimed.cookie;
      return reply.ok(claimed.claim, { headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' } });
    });
    setCookies(ctx, [cookie]);
    return answer;
  },
);

export const resetWithPassword = endpoint({ auth: signupCookie, body: ResetPassword }, async (ctx) => {
  if (ctx.principal.signup.purpose !== 'reset') throw problem('forbidden', 'this signup is not a sign-in reset');
  const passwordHash = await newPasswordHash(ctx.services, ctx.body.password);
  let cookie = '';
  const answer = await ctx.commitReply(async (work) => {
    const done = await completeReset(
      ctx.services,
      work,
      { signup: ctx.principal.signup, credential: { passwordHash }, requestId: ctx.requestId },
      ctx.now,
    );
    cookie = done.session.cookie;
    return reply.ok(await sessionAnswer(work.db, done.session, done.person), {
      headers: { 'Cache-Control': 'no-store' },
    });
  });
  setCookies(ctx, [cookie, clearDashboardCookie(SIGNUP_COOKIE)]);
  return answer;
});
