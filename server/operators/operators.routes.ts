// Operator routes (`/operator/v1/*` on the control origin; the operator bearer only). The feedback
// inbox, `/operator/v1/feedback`, is beside its feature in feedback/feedback.routes.ts.
import {
  OperatorCreditGrant,
  OperatorPlanChange,
  OperatorProjectListQuery,
  OperatorSuspension,
} from '../../sdk/contract/operators';
import { mutation, query, reply } from '../http/route';
import { operatorBearer } from './operators.auth';
import { changePlan, grantCredits, listProjects, operatorProject, resumeProject, suspendProject } from './operators';

const PRIVATE = { 'Cache-Control': 'private, no-store' };

export const listAllProjects = query({ auth: operatorBearer, query: OperatorProjectListQuery }, async (ctx) =>
  reply.ok(await listProjects(ctx.services.store.db, ctx.query), { headers: PRIVATE }),
);

export const getAnyProject = query({ auth: operatorBearer }, async (ctx) =>
  reply.ok(await operatorProject(ctx.services.store.db, ctx.params.id!), { headers: PRIVATE }),
);

export const suspend = mutation(
  { auth: operatorBearer, body: OperatorSuspension.optional(), idempotency: 'optional' },
  async (ctx, work) =>
    reply.ok(
      await suspendProject(
        ctx.services,
        work,
        { id: ctx.params.id!, reason: ctx.body?.reason ?? null, requestId: ctx.requestId },
        ctx.now,
      ),
      { headers: PRIVATE },
    ),
);

export const resume = mutation({ auth: operatorBearer, idempotency: 'optional' }, async (ctx, work) =>
  reply.ok(await resumeProject(ctx.services, work, { id: ctx.params.id!, requestId: ctx.requestId }, ctx.now), {
    headers: PRIVATE,
  }),
);

export const setPlan = mutation(
  { auth: operatorBearer, body: OperatorPlanChange, idempotency: 'optional' },
  async (ctx, work) =>
    reply.ok(
      await changePlan(
        ctx.services,
        work,
        { id: ctx.params.id!, plan: ctx.body.plan, requestId: ctx.requestId },
        ctx.now,
      ),
      {
        headers: PRIVATE,
      },
    ),
);

export const grant = mutation(
  { auth: operatorBearer, body: OperatorCreditGrant, idempotency: 'required' },
  async (ctx, work) =>
    reply.created(
      await grantCredits(
        ctx.services,
        work,
        {
          id: ctx.params.id!,
          credits: ctx.body.credits,
          reason: ctx.body.reason,
          operatorId: ctx.principal.operatorId,
          requestId: ctx.requestId,
        },
        ctx.now,
      ),
      { headers: PRIVATE },
    ),
);
