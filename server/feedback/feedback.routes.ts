// Feedback routes: POST/GET /api/v1/feedback/{bugs,features} for a project (or account) bearer,
// and the operators' inbox, GET /operator/v1/feedback (the operator bearer only).
import { FeedbackSubmission, OperatorFeedbackListQuery, type FeedbackKind } from '../../sdk/contract/feedback';
import { anyBearer, type TenantPrincipal } from '../http/auth';
import { mutation, query, reply } from '../http/route';
import { operatorBearer } from '../operators/operators.auth';
import { listFeedback, operatorInbox, submitFeedback } from './feedback';

/** Per project, bugs and features together: plenty for people reporting by hand, a bound on a looping script. */
const SUBMISSIONS_PER_HOUR = 20;
const PRIVATE = { 'Cache-Control': 'private, no-store' };

const submissions = (ctx: { principal: TenantPrincipal }) => [
  { name: 'feedback-submit', limit: SUBMISSIONS_PER_HOUR, windowSeconds: 3600, key: ctx.principal.tenantId },
];

function submit(kind: FeedbackKind) {
  return mutation(
    { auth: anyBearer, body: FeedbackSubmission, idempotency: 'optional', rateLimits: submissions },
    async (ctx, work) =>
      reply.created(
        await submitFeedback(work, { tenantId: ctx.principal.tenantId, kind, submission: ctx.body }, ctx.now),
      ),
  );
}

function list(kind: FeedbackKind) {
  return query({ auth: anyBearer }, async (ctx) =>
    reply.ok(await listFeedback(ctx.services.store.db, ctx.principal.tenantId, kind)),
  );
}

export const submitBug = submit('bug');
export const submitFeature = submit('feature');
export const listBugs = list('bug');
export const listFeatures = list('feature');

export const inbox = query({ auth: operatorBearer, query: OperatorFeedbackListQuery }, async (ctx) =>
  reply.ok(await operatorInbox(ctx.services.store.db, ctx.query), { headers: PRIVATE }),
);
