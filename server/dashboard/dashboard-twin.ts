// The dashboard's project routes are twins of /api/v1 routes: the same handler (the same domain
// functions, request and response shapes, validation, If-Match and idempotency), mounted under
// /dashboard/v1 behind the session cookie instead of a bearer. So nothing the dashboard can do is
// impossible for an agent, and the two never drift apart. A twin differs in three ways only:
//   - the caller is a signed-in project member (cookie, Origin, CSRF: dashboard.auth.ts), and the
//     tenant is the session's selected project;
//   - it is never metered (the dashboard carries no credit headers; the pipeline meters /api/ only);
//   - the events its request writes name the person as `actor` (the reference's EventActor).
import type { EventActor } from '../../sdk/contract/events';
import type { EventLog } from '../events/event-log';
import type { AnyContext, Authenticator, RouteHandler } from '../http/route';
import { type DashboardPrincipal, projectMemberSession } from '../sign-in/dashboard.auth';

/** A project member's session, seen by a twin's handler as the tenant principal it expects. */
export interface DashboardProjectPrincipal extends DashboardPrincipal {
  tenantId: string;
  /** What ends the streams this session opened when it is revoked (`sessionStreamsKey`). */
  credentialId: string;
  generation: 'P';
  actor: EventActor;
}

/** The credential key of a dashboard session's event streams (see credentialStreamsEndChannel). */
export const sessionStreamsKey = (sessionId: string) => `dashboard-session:${sessionId}`;

export const dashboardProject: Authenticator<DashboardProjectPrincipal> = {
  realm: 'dashboard',
  async authenticate(ctx) {
    const principal = await projectMemberSession.authenticate(ctx);
    const tenantId = principal.project!.id;
    return {
      ...principal,
      // Idempotency records and budgets of a person within one project (never shared with agents).
      scope: `dashboard:${tenantId}:${principal.person.id}`,
      tenantId,
      credentialId: sessionStreamsKey(principal.session.id),
      generation: 'P',
      actor: { user_id: principal.person.id, display_name: principal.person.display_name },
    };
  },
};

/** An event log that stamps every event it appends with the person as actor. */
function actorLog(log: EventLog, actor: EventActor): EventLog {
  const stamped = Object.create(log) as EventLog;
  stamped.appendMany = (work, events, now) =>
    log.appendMany(
      work,
      events.map((event) => ({ ...event, actor })),
      now,
    );
  return stamped;
}

/** The handler's view of the request: the same context, with services whose event log names the actor. */
function withActor(ctx: AnyContext): AnyContext {
  const { actor } = ctx.principal as DashboardProjectPrincipal;
  const services = { ...ctx.services, events: actorLog(ctx.services.events, actor) };
  return Object.create(ctx, { services: { value: services } }) as AnyContext;
}

/**
 * A twin's answer holds the project's data for a person's browser, which keeps what it is not told
 * to drop (a shared computer's next user would find it in the disk cache): private, no-store unless
 * the route sets its own Cache-Control, which replaces this (D-472).
 */
const DASHBOARD_CACHING = 'private, no-store';

function uncached(ctx: AnyContext): AnyContext {
  ctx.res.setHeader('Cache-Control', DASHBOARD_CACHING);
  return withActor(ctx);
}

/** The /dashboard/v1 twin of an /api/v1 route (see the top of this file). */
export function onDashboard(route: RouteHandler): RouteHandler {
  const { policy, handler } = route;
  const { area: _area, ...rest } = policy;
  return {
    policy: { ...rest, auth: dashboardProject, meter: false },
    handler:
      handler.kind === 'mutation'
        ? { kind: 'mutation', run: (ctx, work) => handler.run(uncached(ctx), work) }
        : { kind: handler.kind, run: (ctx) => handler.run(uncached(ctx)) },
  };
}
