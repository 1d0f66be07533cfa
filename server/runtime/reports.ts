// What a player's reports record: the manifest it shows (the screen's active grant), the day's video
// starts per media (the reference contract's proof of play; server/playback counts ours),
// application events, and runtime conditions.
import type { z } from 'zod';
import {
  APPLICATION_EVENT,
  MANIFEST_ACTIVATED,
  type ApplicationEventContext,
  type PlaybackVideoStartedContext,
  type RuntimeReport,
} from '../../sdk/contract/runtime';
import { manifestRevisionId, manifestRevisionOf } from '../manifests/manifest-ids';
import { recordRecovery, RENDERER_RECOVERED } from '../screens/screen-health';
import { findManifest, inManifest, SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';
import type { ManifestRecord } from '../manifests/manifest-minter';
import { invalidField, problem } from '../problem';
import { revokeReleaseGrants } from '../release-host/launch-tickets';
import type { Services } from '../services';
import type { Work } from '../store/store';
import { recordVideoStarted } from '../playback/playback';

/** The reporting player: its screen, and the manifest revision and generation its session holds. */
export interface Reporter {
  tenantId: string;
  screenId: string;
  manifestRevision: number;
  contentAccessGeneration: number;
  requestId: string;
}

/** A minted manifest of this screen named by a report, or invalid_request. */
async function reportedManifest(
  services: Services,
  work: Work,
  reporter: Reporter,
  revisionId: string,
): Promise<ManifestRecord> {
  const revision = manifestRevisionOf(reporter.screenId, revisionId);
  const record =
    revision === undefined ? undefined : await findManifest(services, work.db, reporter.screenId, revision);
  if (!record) throw invalidField('context.manifest_revision', 'is not a manifest revision this screen was given');
  return record;
}

/**
 * manifest.activated: records the screen's active manifest (idempotent for the active revision),
 * ends the release grants of revisions the player no longer shows, and appends the event.
 */
export async function activateManifest(
  services: Services,
  work: Work,
  reporter: Reporter,
  revisionId: string,
  now: number,
): Promise<void> {
  const record = await reportedManifest(services, work, reporter, revisionId);
  // A player's retry arriving beside its report reads the activation the first committed, and is
  // the repeat the spec makes idempotent (one event), not a second activation.
  await work.lock(`manifest-activation:${reporter.screenId}`);
  const state = await work.db
    .selectFrom('screen_runtime_state')
    .selectAll()
    .where('screen_id', '=', reporter.screenId)
    .executeTakeFirst();
  if (state?.active_manifest_revision === record.revision) return;
  const granted =
    record.revision === reporter.manifestRevision ||
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
      screen_id: reporter.screenId,
      tenant_id: reporter.tenantId,
      active_manifest_revision: record.revision,
      activated_at: now,
      playlist_id: record.stored.playlistId ?? null,
    })
    .onConflict((oc) =>
      oc.column('screen_id').doUpdateSet({
        active_manifest_revision: record.revision,
        activated_at: now,
        playlist_id: record.stored.playlistId ?? null,
      }),
    )
    .execute();
  // Release grants of revisions the player no longer shows end; the active and the newest stay.
  const keep = [...new Set([record.revision, reporter.manifestRevision])].map((r) =>
    manifestRevisionId(reporter.screenId, r),
  );
  await revokeReleaseGrants(
    work,
    { tenantId: reporter.tenantId, screenId: reporter.screenId, exceptManifestRevisions: keep },
    now,
  );
  await services.events.append(
    work,
    {
      tenantId: reporter.tenantId,
      screenId: reporter.screenId,
      type: MANIFEST_ACTIVATED,
      message: 'the player shows a new manifest',
      resource: { type: 'screen', id: reporter.screenId },
      details: {
        manifest_revision: revisionId,
        previous_manifest_revision: state
          ? manifestRevisionId(reporter.screenId, state.active_manifest_revision)
          : null,
        content_access_generation: reporter.contentAccessGeneration,
      },
      requestId: reporter.requestId,
    },
    now,
  );
}

/** playback.video_started: one more start of the media on the screen's day (proof of play), for media of that revision. */
export async function recordVideoStart(
  services: Services,
  work: Work,
  reporter: Reporter,
  context: z.infer<typeof PlaybackVideoStartedContext>,
  now: number,
): Promise<void> {
  const record = await reportedManifest(services, work, reporter, context.manifest_revision);
  if (!(await inManifest(work.db, reporter.screenId, record.revision, 'media', context.media_id))) {
    throw invalidField('context.media_id', 'is not a media of that manifest revision');
  }
  await recordVideoStarted(
    work.db,
    reporter,
    { mediaId: context.media_id, pageId: context.page_id, manifestRevision: context.manifest_revision },
    now,
  );
}

/** application.event: a durable account event, naming the application the active manifest shows there. */
export async function recordApplicationEvent(
  services: Services,
  work: Work,
  reporter: Reporter,
  context: z.infer<typeof ApplicationEventContext>,
  now: number,
): Promise<void> {
  const state = await work.db
    .selectFrom('screen_runtime_state')
    .select('active_manifest_revision')
    .where('screen_id', '=', reporter.screenId)
    .executeTakeFirst();
  const active = state
    ? await findManifest(services, work.db, reporter.screenId, state.active_manifest_revision)
    : undefined;
  const shown = active?.stored.pages
    .flatMap((page) => page.placements)
    .find((p) => p.id === context.placement_id && p.content.type === 'application');
  const app =
    shown?.content.type === 'application'
      ? { application_id: shown.content.applicationId, release_id: shown.content.releaseId }
      : undefined;
  await services.events.append(
    work,
    {
      tenantId: reporter.tenantId,
      screenId: reporter.screenId,
      type: APPLICATION_EVENT,
      message: `application event ${context.code}`,
      resource: app ? { type: 'application', id: app.application_id } : { type: 'screen', id: reporter.screenId },
      details: { placement_id: context.placement_id, code: context.code, ...(app ?? {}) },
      requestId: reporter.requestId,
    },
    now,
  );
}

/** Any other code: a runtime condition, appended as runtime.reported with its severity. */
export async function recordCondition(
  services: Services,
  work: Work,
  reporter: Reporter,
  report: RuntimeReport,
  now: number,
): Promise<void> {
  await services.events.append(
    work,
    {
      tenantId: reporter.tenantId,
      screenId: reporter.screenId,
      type: 'runtime.reported',
      severity: report.severity,
      message: `the player reported ${report.code}`,
      resource: { type: 'screen', id: reporter.screenId },
      details: { code: report.code, severity: report.severity, context: report.context },
      requestId: reporter.requestId,
    },
    now,
  );
  // A kiosk watchdog's recovery also counts in the screen's health (screens/screen-health.ts).
  if (report.code === RENDERER_RECOVERED) {
    const reason = typeof report.context?.reason === 'string' ? report.context.reason : 'unknown';
    await recordRecovery(work, reporter, reason, now);
  }
}
