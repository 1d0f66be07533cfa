// POST /runtime/v1/manifests/{manifest_revision}/releases/{release_id}/launch: a single-use,
// 30-second launch ticket for the release's own host, only for a release that a granted manifest
// revision of this screen shows, bound to the screen's current content-access generation.
import type { ReleaseLaunch } from '../../sdk/contract/runtime';
import { isoTime } from '../clock';
import { problem } from '../problem';
import { mutation, reply } from '../http/route';
import { runtimeCookie } from '../pairing/pairing.auth';
import { mintLaunchTicket } from '../release-host/launch-tickets';
import { manifestGrantId, manifestRevisionId } from '../manifests/manifest-ids';
import { runtimeBudgetKey } from './runtime-budgets';
import { grantedManifest, inManifest } from '../manifests/manifest-store';

/** Per paired screen, and per viewer IP of its public URL (runtimeBudgetKey). */
const LAUNCHES_PER_SCREEN_PER_MINUTE = 120; // reference contract: release-launch 120 a minute

export const launchRelease = mutation(
  {
    auth: runtimeCookie,
    rateLimits: (ctx) => [
      { name: 'release-launch', limit: LAUNCHES_PER_SCREEN_PER_MINUTE, windowSeconds: 60, key: runtimeBudgetKey(ctx) },
    ],
  },
  async (ctx, work) => {
    const { services, principal } = ctx;
    const manifest = await grantedManifest(services, work.db, principal, ctx.params.manifest_revision!, ctx.now);
    const releaseId = ctx.params.release_id!;
    if (!(await inManifest(work.db, principal.screenId, manifest.revision, 'release', releaseId))) {
      throw problem('not_found', 'this manifest revision shows no such release');
    }
    const ticket = await mintLaunchTicket(
      services,
      work,
      {
        tenantId: principal.tenantId,
        releaseId,
        screenId: principal.screenId,
        contentGeneration: principal.contentAccessGeneration,
        manifestRevision: manifestRevisionId(principal.screenId, manifest.revision),
        grantId: manifestGrantId(principal.screenId, manifest.revision, principal.contentAccessGeneration),
      },
      ctx.now,
    );
    const body: ReleaseLaunch = { launch_url: ticket.launchUrl, expires_at: isoTime(ticket.expiresAt) };
    return reply.created(body, { headers: { 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' } });
  },
);
