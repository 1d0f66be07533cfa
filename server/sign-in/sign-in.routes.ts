// The dashboard's sign-in and session routes (`/dashboard/v1/*` on the dashboard origin): password
// and passkey sign-in, the current session, logout, the person's sessions and projects, and the
// members of the selected project.
import {
  DashboardProjectSelect,
  DashboardSignIn,
  PasskeyCeremonyComplete,
  PasskeyRegistrationStart,
  type DashboardMemberList,
  type DashboardProjectList,
  type DashboardSessionList,
  type PasskeyAssertion,
  type PasskeyRegistration,
} from '../../sdk/contract/people';
import { Email } from '../../sdk/contract/tenants';
import { sessionStreamsKey } from '../dashboard/dashboard-twin';
import { credentialStreamsEndChannel } from '../events/event-log';
import { clientIp } from '../http/client-ip';
import { endpoint, mutation, query, reply, type AnyContext } from '../http/route';
import { membersOf, projectsOf } from '../members/people';
import { problem } from '../problem';
import { clearDashboardCookie, SESSION_COOKIE, setCookies, SIGNUP_COOKIE } from './dashboard-cookies';
import { dashboardAnonymous, dashboardSession, projectMemberSession, signupOrSession } from './dashboard.auth';
import {
  listSessions,
  revokeOwnSession,
  revokeSession,
  selectSessionProject,
  sessionAnswer,
  sessionView,
} from './dashboard-sessions';
import {
  beginPasskeyRegistration,
  beginPasskeySignIn,
  checkPassword,
  finishPasskeyRegistration,
  finishPasskeySignIn,
  signInWithPassword,
} from './sign-in';

const NO_STORE = { 'Cache-Control': 'no-store' };
const PRIVATE = { 'Cache-Control': 'private, no-store' };
/** Password attempts per client address and per account address, per ten minutes. */
const SIGN_INS_PER_IP = 30;
const SIGN_INS_PER_EMAIL = 10;
/** The reference's dashboard-assertion-ip budget. */
const ASSERTIONS_PER_IP = 30;

function emailKey(ctx: AnyContext): string | undefined {
  const email = (ctx.body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' && Email.safeParse(email).success ? email.toLowerCase() : undefined;
}

export const signIn = endpoint(
  {
    auth: dashboardAnonymous,
    body: DashboardSignIn,
    rateLimits: (ctx) => {
      const email = emailKey(ctx);
      return [
        { name: 'dashboard-sign-in-ip', limit: SIGN_INS_PER_IP, windowSeconds: 600, key: clientIp(ctx) },
        ...(email
          ? [{ name: 'dashboard-sign-in-email', limit: SIGN_INS_PER_EMAIL, windowSeconds: 600, key: email }]
          : []),
      ];
    },
  },
  async (ctx) => {
    const person = await checkPassword(ctx.services, ctx.body.email, ctx.body.password);
    let cookie = '';
    const answer = await ctx.commitReply(async (work) => {
      const started = await signInWithPassword(work, person, ctx.now);
      cookie = started.cookie;
      return reply.ok(await sessionAnswer(work.db, started, person), { headers: NO_STORE });
    });
    // A signup cookie stays: a person with a login signs in, then accepts the invitation it holds.
    setCookies(ctx, [cookie]);
    return answer;
  },
);

export const startPasskeySignIn = mutation(
  {
    auth: dashboardAnonymous,
    rateLimits: (ctx) => [
      { name: 'dashboard-assertion-ip', limit: ASSERTIONS_PER_IP, windowSeconds: 600, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const { ceremonyId, options } = await beginPasskeySignIn(ctx.services, work, ctx.now);
    const body: PasskeyAssertion = { ceremony_id: ceremonyId, request_options: options };
    return reply.created(body, { headers: NO_STORE });
  },
);

export const completePasskeySignIn = endpoint(
  { auth: dashboardAnonymous, body: PasskeyCeremonyComplete },
  async (ctx) => {
    let cookie = '';
    const answer = await ctx.commitReply(async (work) => {
      const { session, person } = await finishPasskeySignIn(
        ctx.services,
        work,
        { ceremonyId: ctx.body.ceremony_id, credential: ctx.body.credential },
        ctx.now,
      );
      cookie = session.cookie;
      return reply.ok(await sessionAnswer(work.db, session, person), { headers: NO_STORE });
    });
    setCookies(ctx, [cookie, clearDashboardCookie(SIGNUP_COOKIE)]);
    return answer;
  },
);

export const startPasskeyRegistration = mutation(
  { auth: signupOrSession, body: PasskeyRegistrationStart.optional() },
  async (ctx, work) => {
    const { ceremonyId, options } = await beginPasskeyRegistration(
      ctx.services,
      work,
      ctx.principal,
      ctx.body?.display_name,
      ctx.now,
    );
    const body: PasskeyRegistration = { ceremony_id: ceremonyId, creation_options: options };
    return reply.created(body, { headers: NO_STORE });
  },
);

export const completePasskeyRegistration = endpoint(
  { auth: signupOrSession, body: PasskeyCeremonyComplete },
  async (ctx) => {
    let cookie: string | undefined;
    const answer = await ctx.commitReply(async (work) => {
      const done = await finishPasskeyRegistration(
        ctx.services,
        work,
        ctx.principal,
        { ceremonyId: ctx.body.ceremony_id, credential: ctx.body.credential, requestId: ctx.requestId },
        ctx.now,
      );
      cookie = done.cookie;
      return reply.ok(done.session, { headers: NO_STORE });
    });
    if (cookie) setCookies(ctx, [cookie, clearDashboardCookie(SIGNUP_COOKIE)]);
    return answer;
  },
);

/** A revoked session's open event streams end at once (the dashboard then asks to sign in again). */
function endSessionStreams(ctx: AnyContext, sessionId: string): void {
  ctx.services.notifier.publish(credentialStreamsEndChannel(sessionStreamsKey(sessionId)));
}

export const getSession = query({ auth: dashboardSession }, async (ctx) => {
  const { session, person, project } = ctx.principal;
  return reply.ok(sessionView(session, person, project), { headers: PRIVATE });
});

export const logout = endpoint({ auth: dashboardSession }, async (ctx) => {
  await revokeSession(ctx.services.store.db, ctx.principal.session.id, ctx.now);
  endSessionStreams(ctx, ctx.principal.session.id);
  setCookies(ctx, [clearDashboardCookie(SESSION_COOKIE)]);
  return reply.noContent({ headers: NO_STORE });
});

export const listMySessions = query({ auth: dashboardSession }, async (ctx) => {
  const { person, session } = ctx.principal;
  const body: DashboardSessionList = {
    items: await listSessions(ctx.services.store.db, person.id, session.id, ctx.now),
  };
  return reply.ok(body, { headers: PRIVATE });
});

export const revokeMySession = mutation({ auth: dashboardSession }, async (ctx, work) => {
  await revokeOwnSession(work.db, ctx.principal.person.id, ctx.params.id!, ctx.now);
  work.afterCommit(() => endSessionStreams(ctx, ctx.params.id!));
  return reply.noContent({ headers: NO_STORE });
});

export const listMyProjects = query({ auth: dashboardSession }, async (ctx) => {
  const selected = ctx.principal.project?.id;
  const items = await projectsOf(ctx.services.store.db, ctx.principal.person.id);
  const body: DashboardProjectList = { items: items.map((p) => ({ ...p, selected: p.id === selected })) };
  return reply.ok(body, { headers: PRIVATE });
});

export const selectProject = mutation({ auth: dashboardSession, body: DashboardProjectSelect }, async (ctx, work) => {
  const projects = await projectsOf(work.db, ctx.principal.person.id);
  const project = projects.find((p) => p.id === ctx.body.project_id);
  // Another project's id, a suspended one, or none at all: not_found alike.
  if (!project) throw problem('not_found', 'project not found');
  await selectSessionProject(work.db, ctx.principal.session.id, project.id);
  const { session, person } = ctx.principal;
  return reply.ok(sessionView({ ...session, tenant_id: project.id }, person, project), { headers: PRIVATE });
});

export const listMembers = query({ auth: projectMemberSession }, async (ctx) => {
  const body: DashboardMemberList = { items: await membersOf(ctx.services.store.db, ctx.principal.project!.id) };
  return reply.ok(body, { headers: PRIVATE });
});
