// POST /runtime/v1/reports (paired runtime cookie): what the player says about its glass. The
// route checks the context of each typed code and hands it to reports.ts: manifest.activated
// records the screen's active manifest (the "active grant") before the 202 and is idempotent for
// the current active revision; playback.video_started upserts the day's aggregate;
// application.event appends a durable account event; any other code is a runtime condition.
import { z } from 'zod';
import {
  APPLICATION_EVENT,
  ApplicationEventContext,
  MANIFEST_ACTIVATED,
  ManifestActivatedContext,
  PLAYBACK_VIDEO_STARTED,
  PlaybackVideoStartedContext,
  RuntimeReport,
} from '../../sdk/contract/runtime';
import { invalidField } from '../problem';
import { mutation, reply, type RequestContext } from '../http/route';
import { validate } from '../http/validation';
import { pairedRuntimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import { activateManifest, recordApplicationEvent, recordCondition, recordVideoStart, type Reporter } from './reports';

const REPORTS_PER_SCREEN_PER_MINUTE = 120; // reference contract: runtime-report 120 a minute
/** A report is a small JSON document; its context is stored with the event. */
const REPORT_BODY_LIMIT = 16 * 1024;

type ReportContext = RequestContext<RuntimeReport, Record<string, never>, RuntimePrincipal>;

/** The typed report's context, checked against its schema; problems name `context.<field>`. */
function contextOf<T>(ctx: ReportContext, schema: z.ZodType<T>): T {
  if (ctx.body.severity !== 'info') throw invalidField('severity', `a ${ctx.body.code} report has severity info`);
  return validate(z.strictObject({ context: schema }), { context: ctx.body.context }, 'body').context;
}

export const postReport = mutation(
  {
    auth: pairedRuntimeCookie,
    body: RuntimeReport,
    bodyLimit: REPORT_BODY_LIMIT,
    rateLimits: (ctx) => [
      {
        name: 'runtime-report',
        limit: REPORTS_PER_SCREEN_PER_MINUTE,
        windowSeconds: 60,
        key: (ctx.principal as RuntimePrincipal).screenId,
      },
    ],
  },
  async (ctx, work) => {
    const { principal, services, now } = ctx;
    const reporter: Reporter = {
      tenantId: principal.tenantId,
      screenId: principal.screenId,
      manifestRevision: principal.manifestRevision,
      contentAccessGeneration: principal.contentAccessGeneration,
      requestId: ctx.requestId,
    };
    switch (ctx.body.code) {
      case MANIFEST_ACTIVATED:
        await activateManifest(
          services,
          work,
          reporter,
          contextOf(ctx, ManifestActivatedContext).manifest_revision,
          now,
        );
        break;
      case PLAYBACK_VIDEO_STARTED:
        await recordVideoStart(services, work, reporter, contextOf(ctx, PlaybackVideoStartedContext), now);
        break;
      case APPLICATION_EVENT:
        await recordApplicationEvent(services, work, reporter, contextOf(ctx, ApplicationEventContext), now);
        break;
      default:
        await recordCondition(services, work, reporter, ctx.body, now);
    }
    return reply.accepted(undefined, { headers: { 'Cache-Control': 'no-store' } });
  },
);
