// Launch tickets and release grants. The runtime plane mints a ticket when a player launches an
// application placement (mintLaunchTicket); the release host consumes it once, turns it into an
// exact-host release-grant cookie, and checks the grant behind that cookie on every request.
// Grants stop working when revoked (revokeReleaseGrants), which the runtime drives.
import { problem } from '../problem';
import { randomToken, sha256Hex } from '../keys';
import type { Services } from '../services';
import type { Db, Tx, Work } from '../store/store';
import { releaseOriginOf } from './host-label';

export const LAUNCH_TICKET_TTL_MS = 30_000; // spec: launch ticket single use, 30 seconds
/** Random bytes in a ticket (256 bits, base64url). */
const TICKET_BYTES = 32;

/** What a launch is bound to (spec: host, release, screen, content generation, manifest and grant). */
export interface LaunchBinding {
  tenantId: string;
  releaseId: string;
  screenId: string;
  /** The screen's content-access generation when the ticket is minted. */
  contentGeneration: number;
  /** The manifest revision (`man_…`) whose placement launches the release. */
  manifestRevision: string;
  /** The manifest grant the launch belongs to; revoking it ends every cookie made from it. */
  grantId: string;
}

export interface LaunchTicket {
  /** The secret itself; only its SHA-256 is stored. Never log it. */
  ticket: string;
  /** `<release origin>/?ticket=<ticket>`: what the player loads in the frame. */
  launchUrl: string;
  expiresAt: number;
}

/** A consumed ticket's binding, as the release-grant cookie carries it. */
export interface GrantBinding {
  tenantId: string;
  releaseId: string;
  hostLabel: string;
  screenId: string;
  contentGeneration: number;
  manifestRevision: string;
  grantId: string;
}

/**
 * Mints a single-use, 30-second launch ticket for a ready release of the tenant, in the caller's
 * transaction. The grant is recorded on first use; a revoked grant mints nothing (forbidden).
 */
export async function mintLaunchTicket(
  services: Pick<Services, 'config'>,
  work: Work,
  binding: LaunchBinding,
  now: number,
): Promise<LaunchTicket> {
  const release = await work.db
    .selectFrom('releases')
    .select(['id', 'state', 'host_label'])
    .where('id', '=', binding.releaseId)
    .where('tenant_id', '=', binding.tenantId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!release) throw problem('not_found', 'release not found');
  if (release.state !== 'ready')
    throw problem('resource_conflict', `release ${release.id} is not ready and cannot be launched`);
  await recordGrant(work.db, binding, now);
  const ticket = randomToken(TICKET_BYTES);
  const expiresAt = now + LAUNCH_TICKET_TTL_MS;
  await work.db
    .insertInto('launch_tickets')
    .values({
      ticket_hash: sha256Hex(ticket),
      tenant_id: binding.tenantId,
      release_id: release.id,
      host_label: release.host_label,
      screen_id: binding.screenId,
      content_generation: binding.contentGeneration,
      manifest_revision: binding.manifestRevision,
      grant_id: binding.grantId,
      expires_at: expiresAt,
      consumed_at: null,
      created_at: now,
    })
    .execute();
  return { ticket, launchUrl: `${releaseOriginOf(services.config, release.host_label)}/?ticket=${ticket}`, expiresAt };
}

async function recordGrant(tx: Tx, binding: LaunchBinding, now: number): Promise<void> {
  const existing = await tx
    .selectFrom('release_grants')
    .selectAll()
    .where('id', '=', binding.grantId)
    .executeTakeFirst();
  if (!existing) {
    await tx
      .insertInto('release_grants')
      .values({
        id: binding.grantId,
        tenant_id: binding.tenantId,
        screen_id: binding.screenId,
        content_generation: binding.contentGeneration,
        manifest_revision: binding.manifestRevision,
        created_at: now,
        revoked_at: null,
      })
      .execute();
    return;
  }
  if (existing.revoked_at !== null) throw problem('forbidden', 'this grant was revoked; fetch the current manifest');
  if (
    existing.tenant_id !== binding.tenantId ||
    existing.screen_id !== binding.screenId ||
    existing.content_generation !== binding.contentGeneration ||
    existing.manifest_revision !== binding.manifestRevision
  ) {
    throw problem('forbidden', 'this grant belongs to another screen, generation or manifest');
  }
}

/**
 * Consumes a ticket atomically: exactly one request can ever win it, and only while it is fresh.
 * A ticket presented on the wrong host is spent all the same and yields nothing.
 */
export async function consumeLaunchTicket(
  tx: Tx,
  ticket: string,
  hostLabel: string,
  now: number,
): Promise<GrantBinding | undefined> {
  const hash = sha256Hex(ticket);
  const won = await tx
    .updateTable('launch_tickets')
    .set({ consumed_at: now })
    .where('ticket_hash', '=', hash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (Number(won.numUpdatedRows) !== 1) return undefined;
  const row = await tx
    .selectFrom('launch_tickets')
    .selectAll()
    .where('ticket_hash', '=', hash)
    .executeTakeFirstOrThrow();
  if (row.host_label !== hostLabel) return undefined;
  return {
    tenantId: row.tenant_id,
    releaseId: row.release_id,
    hostLabel: row.host_label,
    screenId: row.screen_id,
    contentGeneration: row.content_generation,
    manifestRevision: row.manifest_revision,
    grantId: row.grant_id,
  };
}

/** True while the grant is recorded for exactly this tenant, screen, generation and manifest, and not revoked. */
export async function releaseGrantLive(db: Db | Tx, binding: GrantBinding): Promise<boolean> {
  const grant = await db
    .selectFrom('release_grants')
    .select('id')
    .where('id', '=', binding.grantId)
    .where('tenant_id', '=', binding.tenantId)
    .where('screen_id', '=', binding.screenId)
    .where('content_generation', '=', binding.contentGeneration)
    .where('manifest_revision', '=', binding.manifestRevision)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return grant !== undefined;
}

/**
 * Revokes release grants in the caller's transaction: one grant (a manifest replaced), or every
 * grant of a screen (public id rotated, credential revoked, screen archived or deleted), or every
 * grant of a screen but those of the manifest revisions named (a newer manifest activated). Cookies
 * made from them are refused from the next request on, and their unspent tickets are dropped.
 */
export async function revokeReleaseGrants(
  work: Work,
  scope: { tenantId: string; screenId?: string; grantId?: string; exceptManifestRevisions?: string[] },
  now: number,
): Promise<number> {
  let revoke = work.db
    .updateTable('release_grants')
    .set({ revoked_at: now })
    .where('tenant_id', '=', scope.tenantId)
    .where('revoked_at', 'is', null);
  let tickets = work.db
    .deleteFrom('launch_tickets')
    .where('tenant_id', '=', scope.tenantId)
    .where('consumed_at', 'is', null);
  if (scope.screenId !== undefined) {
    revoke = revoke.where('screen_id', '=', scope.screenId);
    tickets = tickets.where('screen_id', '=', scope.screenId);
  }
  if (scope.grantId !== undefined) {
    revoke = revoke.where('id', '=', scope.grantId);
    tickets = tickets.where('grant_id', '=', scope.grantId);
  }
  // Grants of the manifests a player may still show stay (the runtime's activation keeps these).
  if (scope.exceptManifestRevisions !== undefined && scope.exceptManifestRevisions.length > 0) {
    revoke = revoke.where('manifest_revision', 'not in', scope.exceptManifestRevisions);
    tickets = tickets.where('manifest_revision', 'not in', scope.exceptManifestRevisions);
  }
  const result = await revoke.executeTakeFirst();
  await tickets.execute();
  return Number(result.numUpdatedRows);
}

/** Drops tickets past their expiry: an expired ticket is refused whether its row exists or not. */
export async function pruneLaunchTickets(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('launch_tickets').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
