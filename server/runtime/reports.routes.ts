// POST /runtime/v1/reports (paired runtime cookie): what the player says about its glass.
// manifest.activated records the screen's active manifest (the "active grant") before the 202 and
// is idempotent for the current active revision; playback.video_started upserts the day's
// aggregate; application.event appends a durable account event; any other code is a runtime
// condition, appended as runtime.reported.
import { sql } from 'kysely';
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
import { invalidField, problem } from '../problem';
import { mutation, reply, type RequestContext } from '../http/route';
import { validate } from '../http/validation';
import { pairedRuntimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import { revokeReleaseGrants } from '../release-host/launch-tickets';
import type { Work } from '../store/store';
import { utcDay } from '../tenants/credits';
import { manifestRevisionId, manifestRevisionOf } from '../manifests/manifest-ids';
import {
  findManifest,
  inManifest,
  SUPERSEDED_MANIFEST_GRACE_MS,
  type ManifestRecord,
} from '../manifests/manifest-store';

const REPORTS_PER_SCREEN_PER_MINUTE = 120; // reference contract: runtime-report 120 a minute
/** A report is a small JSON document; its context is stored with the event. */
const REPORT_BODY_LIMIT = 16 * 1024;

type ReportContext = RequestContext<RuntimeReport, Record<string, never>, RuntimePrincipal>;

/** The typed report's context, checked against its schema; problems name `context.<field>`. */
function contextOf<T>(ctx: ReportContext, schema: z.ZodType<T>): T {
  if (ctx.body.severity !== 'info') throw invalidField('severity', `a ${ctx.body.code} report has severity info`);
  return validate(z.strictObject({ context: schema }), { context: ctx.body.context }, 'body').context;
}

/** A minted manifest of this screen named by a report, or invalid_request. */
async function reportedManifest(ctx: ReportContext, work: Work, revisionId: string): Promise<ManifestRecord> {
  const revision = manifestRevisionOf(ctx.principal.screenId, revisionId);
  const record =
    revision === undefined ? undefined : await findManifest(ctx.services, work.db, ctx.principal.screenId, revision);
  if (!record) throw invalidField('context.manifest_revision', 'is not a manifest revision this screen was given');
  return record;
}

async function manifestActivated(ctx: ReportContext, work: Work): Promise<void> {
  const { principal, now } = ctx;
  const context = contextOf(ctx, ManifestActivatedContext);
  const record = await reportedManifest(ctx, work, context.manifest_revision);
  const state = await work.db
    .selectFrom('screen_runtime_state')
    .selectAll()
    .where('screen_id', '=', principal.screenId)
    .executeTakeFirst();
  if (state?.active_manifest_revision === record.revision) return; // idempotent for the active revision
  const granted =
    record.revision === principal.manifestRevision ||
    record.supersededAt === null ||
    record.supersededAt > now - SUPERSEDED_MANIFEST_GRACE_MS;
  if (!granted)
    throw problem(
      'resource_conflict',
      'this manifest revision no longer grants content; fetch the current manifest and activate that',
    );

  await work.db
    .insertInto('screen_runtime_state')
    .values({
      screen_id: principal.screenId,
      tenant_id: principal.tenantId,
      active_manifest_revision: record.revision,
      activated_at: now,
    })
    .onConflict((oc) =>
      oc.column('screen_id').doUpdateSet({ active_manifest_revision: record.revision, activated_at: now }),
    )
    .execute();
  // Release grants of revisions the player no longer shows end; the active and the newest stay.
  const keep = [...new Set([record.revision, principal.manifestRevision])].map((r) =>
    manifestRevisionId(principal.screenId, r),
  );
  await revokeReleaseGrants(
    work,
    { tenantId: principal.tenantId, screenId: principal.screenId, exceptManifestRevisions: keep },
    now,
  );
  await ctx.services.events.append(
    work,
    {
      tenantId: principal.tenantId,
      screenId: principal.screenId,
      type: MANIFEST_ACTIVATED,
      message: 'the player shows a new manifest',
      resource: { type: 'screen', id: principal.screenId },
      details: {
        manifest_revision: context.manifest_revision,
        previous_manifest_revision: state
          ? manifestRevisionId(principal.screenId, state.active_manifest_revision)
          : null,
        content_access_generation: principal.contentAccessGeneration,
      },
      requestId: ctx.requestId,
    },
    now,
  );
}

async function videoStarted(ctx: ReportContext, work: Work): Promise<void> {
  const { principal, now } = ctx;
  const context = contextOf(ctx, PlaybackVideoStartedContext);
  const record = await reportedManifest(ctx, work, context.manifest_revision);
  if (!(await inManifest(work.db, principal.screenId, record.revision, 'media', context.media_id))) {
    throw invalidField('context.media_id', 'is not a media of that manifest revision');
  }
  await work.db
    .insertInto('playback_daily')
    .values({
      tenant_id: principal.tenantId,
      screen_id: principal.screenId,
      media_id: context.media_id,
      day: utcDay(now),
      play_count: 1,
      last_page_id: context.page_id,
      last_manifest_revision: context.manifest_revision,
      first_started_at: now,
      last_started_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['screen_id', 'media_id', 'day']).doUpdateSet({
        play_count: sql<number>`playback_daily.play_count + 1`,
        last_page_id: context.page_id,
        last_manifest_revision: context.manifest_revision,
        last_started_at: now,
      }),
    )
    .execute();
}

async function applicationEvent(ctx: ReportContext, work: Work): Promise<void> {
  const { principal, now } = ctx;
  const context = contextOf(ctx, ApplicationEventContext);
  // Name the application when the active manifest shows it at that placement.
  const state = await work.db
    .selectFrom('screen_runtime_state')
    .select('active_manifest_revision')
    .where('screen_id', '=', principal.screenId)
    .executeTakeFirst();
  const active = state
    ? await findManifest(ctx.services, work.db, principal.screenId, state.active_manifest_revision)
    : undefined;
  const shown = active?.stored.pages
    .flatMap((page) => page.placements)
    .find((p) => p.id === context.placement_id && p.content.type === 'application');
  const app =
    shown?.content.type === 'application'
      ? { application_id: shown.content.applicationId, release_id: shown.content.releaseId }
      : undefined;
  await ctx.services.events.append(
    work,
    {
      tenantId: principal.tenantId,
      screenId: principal.screenId,
      type: APPLICATION_EVENT,
      message: `application event ${context.code}`,
      resource: app ? { type: 'application', id: app.application_id } : { type: 'screen', id: principal.screenId },
      details: { placement_id: context.placement_id, code: context.code, ...(app ?? {}) },
      requestId: ctx.requestId,
    },
    now,
  );
}

async function runtimeCondition(ctx: ReportContext, work: Work): Promise<void> {
  const { principal, now, body } = ctx;
  await ctx.services.events.append(
    work,
    {
      tenantId: principal.tenantId,
      screenId: principal.screenId,
      type: 'runtime.reported',
      severity: body.severity,
      message: `the player reported ${body.code}`,
      resource: { type: 'screen', id: principal.screenId },
      details: { code: body.code, severity: body.severity, context: body.context },
      requestId: ctx.requestId,
    },
    now,
  );
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
    const handlers: Record<string, (c: ReportContext, w: Work) => Promise<void>> = {
      [MANIFEST_ACTIVATED]: manifestActivated,
      [PLAYBACK_VIDEO_STARTED]: videoStarted,
      [APPLICATION_EVENT]: applicationEvent,
    };
    await (handlers[ctx.body.code] ?? runtimeCondition)(ctx, work);
    return reply.accepted(undefined, { headers: { 'Cache-Control': 'no-store' } });
  },
);
