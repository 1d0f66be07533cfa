// A screen's screenshot slot (reference contract, screenshots): one request at a time, latest wins;
// the player hears screen.screenshot_requested on its runtime stream and uploads a still WebP with
// PUT /runtime/v1/screenshot before expires_at; otherwise the request times out (recorded lazily by
// the next status read or request, and by the sweep, whichever comes first: once). The last ready
// image is kept until a later upload replaces it.
import sharp, { type Metadata, type OutputInfo } from 'sharp';
import {
  SCREENSHOT_FORMAT,
  SCREENSHOT_MAX_BYTES,
  SCREENSHOT_QUALITY,
  SCREENSHOT_SIZE_DIVISOR,
  SCREENSHOT_TTL_MS,
  type CaptureMethod,
  type ScreenshotAccepted,
  type ScreenshotStatus,
} from '../../sdk/contract/screen-health';
import { isoTime } from '../clock';
import { newId, sha256Hex } from '../keys';
import { invalidField, problem } from '../problem';
import type { Services } from '../services';
import { expectUpdated, type Db, type Tx, type Work } from '../store/store';
import type { ScreenScreenshotTable } from './screen-health.tables';
import type { EventLog } from '../events/event-log';
import type { ScreenTable } from './screens.tables';

/**
 * Largest image the server decodes (pixels): a 16K surface halved, far past any signage display,
 * and small enough that a crafted header cannot make the decoder allocate gigabytes.
 */
export const SCREENSHOT_MAX_PIXELS = 8192 * 8192;
/** Re-encoding qualities tried in turn until the still fits in SCREENSHOT_MAX_BYTES. */
const REENCODE_QUALITIES = [SCREENSHOT_QUALITY, 60, 40];

/** A screen with no player yet (pairing_pending) or dark glass (archived) has nothing to capture. */
export function checkCapturable(screen: ScreenTable): void {
  if (screen.state === 'pairing_pending')
    throw problem('resource_conflict', `screen ${screen.id} is still pairing_pending; there is no player to capture`);
  if (screen.state === 'archived')
    throw problem('resource_conflict', `screen ${screen.id} is archived; its glass is dark`);
}

async function slotOf(db: Db | Tx, screenId: string): Promise<ScreenScreenshotTable | undefined> {
  return db.selectFrom('screen_screenshots').selectAll().where('screen_id', '=', screenId).executeTakeFirst();
}

/** Why nobody answered: the screen never connected during the request, or its player did not send. */
async function failureOf(services: Services, db: Db | Tx, slot: ScreenScreenshotTable): Promise<string> {
  const screen = await db
    .selectFrom('screens')
    .select('last_online_at')
    .where('id', '=', slot.screen_id)
    .executeTakeFirst();
  const online = (await services.presence.online([slot.screen_id])).has(slot.screen_id);
  const seen = online || (screen?.last_online_at ?? 0) >= slot.requested_at;
  return seen
    ? `the player did not send a screenshot within ${SCREENSHOT_TTL_MS / 1000} s (it may be too old to capture, or its capture failed)`
    : `the screen was offline: no player was connected to hear the request within ${SCREENSHOT_TTL_MS / 1000} s`;
}

/**
 * Records the timeout of the slot's current request, once: a conditional update, so two readers
 * (or replicas) racing append one screen.screenshot_failed between them.
 */
async function recordTimeout(
  services: Services,
  work: Work,
  slot: ScreenScreenshotTable,
  now: number,
): Promise<ScreenScreenshotTable> {
  const failure = await failureOf(services, work.db, slot);
  const updated = await work.db
    .updateTable('screen_screenshots')
    .set({ timed_out_at: now, failure })
    .where('screen_id', '=', slot.screen_id)
    .where('capture_id', '=', slot.capture_id)
    .where('timed_out_at', 'is', null)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) {
    await services.events.append(
      work,
      {
        tenantId: slot.tenant_id,
        screenId: slot.screen_id,
        severity: 'warning',
        type: 'screen.screenshot_failed',
        message: `screenshot ${slot.capture_id} timed out: ${failure}`,
        resource: { type: 'screen', id: slot.screen_id },
        details: { capture_id: slot.capture_id, reason: 'expired', detail: failure },
      },
      now,
    );
  }
  return { ...slot, timed_out_at: slot.timed_out_at ?? now, failure: slot.failure ?? failure };
}

const isPending = (slot: ScreenScreenshotTable) =>
  slot.timed_out_at === null && slot.ready_capture_id !== slot.capture_id;

/** The slot with a request past its expiry recorded as timed out. */
async function currentSlot(
  services: Services,
  work: Work,
  screenId: string,
  now: number,
): Promise<ScreenScreenshotTable | undefined> {
  const slot = await slotOf(work.db, screenId);
  if (slot && isPending(slot) && slot.expires_at <= now) return recordTimeout(services, work, slot, now);
  return slot;
}

/** The request a screenshot is asked under (a subset of screen-changes' ChangeRequest, without its import). */
interface ShotRequest {
  events: EventLog;
  work: Work;
  now: number;
  requestId: string;
}

/** Latest wins: a new request replaces any in-flight one (no 409); the ready image stays. */
export async function requestScreenshot(
  services: Services,
  r: ShotRequest,
  screen: ScreenTable,
): Promise<ScreenshotAccepted> {
  checkCapturable(screen);
  await currentSlot(services, r.work, screen.id, r.now);
  const captureId = newId('shot');
  const expiresAt = r.now + SCREENSHOT_TTL_MS;
  const request = {
    capture_id: captureId,
    requested_at: r.now,
    expires_at: expiresAt,
    timed_out_at: null,
    failure: null,
  };
  await r.work.db
    .insertInto('screen_screenshots')
    .values({ screen_id: screen.id, tenant_id: screen.tenant_id, ...request })
    .onConflict((oc) => oc.column('screen_id').doUpdateSet(request))
    .execute();
  const accepted: ScreenshotAccepted = { capture_id: captureId, expires_at: isoTime(expiresAt) };
  await r.events.append(
    r.work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      type: 'screen.screenshot_requested',
      message: `screenshot ${captureId} requested`,
      resource: { type: 'screen', id: screen.id },
      details: {
        ...accepted,
        max_width_divisor: SCREENSHOT_SIZE_DIVISOR,
        max_height_divisor: SCREENSHOT_SIZE_DIVISOR,
        format: SCREENSHOT_FORMAT,
        quality: SCREENSHOT_QUALITY,
        max_bytes: SCREENSHOT_MAX_BYTES,
      },
      requestId: r.requestId,
    },
    r.now,
  );
  return accepted;
}

/** The slot as the status route and the screen view show it. */
export function statusView(slot: ScreenScreenshotTable | undefined, now: number): ScreenshotStatus {
  if (!slot) return { state: 'idle' };
  const base = { capture_id: slot.capture_id, expires_at: isoTime(slot.expires_at) };
  const ready =
    slot.ready_capture_id !== null
      ? {
          width: slot.width!,
          height: slot.height!,
          bytes: Number(slot.bytes),
          sha256: slot.sha256!,
          captured_at: isoTime(slot.captured_at!),
          method: slot.method as CaptureMethod,
        }
      : {};
  if (slot.ready_capture_id === slot.capture_id) return { state: 'ready', ...base, ...ready };
  // The older ready image's facts stay with a pending or timed-out request (its bytes are still served).
  if (slot.timed_out_at !== null || slot.expires_at <= now)
    return { state: 'timed_out', ...base, ...ready, ...(slot.failure ? { reason: slot.failure } : {}) };
  return { state: 'pending', ...base, ...ready };
}

export async function screenshotStatus(
  services: Services,
  screen: ScreenTable,
  now: number,
): Promise<ScreenshotStatus> {
  const slot = await services.store.transaction((work) => currentSlot(services, work, screen.id, now));
  return statusView(slot, now);
}

/** The screens' slots without their images (the screen list). */
export async function statusesOf(
  db: Db | Tx,
  screenIds: string[],
  now: number,
): Promise<Map<string, ScreenshotStatus>> {
  const statuses = new Map<string, ScreenshotStatus>();
  if (screenIds.length === 0) return statuses;
  const rows = await db
    .selectFrom('screen_screenshots')
    .select([
      'screen_id',
      'tenant_id',
      'capture_id',
      'requested_at',
      'expires_at',
      'timed_out_at',
      'failure',
      'ready_capture_id',
      'method',
      'width',
      'height',
      'bytes',
      'sha256',
      'captured_at',
    ])
    .where('screen_id', 'in', screenIds)
    .execute();
  for (const row of rows) statuses.set(row.screen_id, statusView({ ...row, image: null }, now));
  return statuses;
}

export interface ValidStill {
  image: Buffer;
  width: number;
  height: number;
}

/**
 * Decodes an uploaded still and re-encodes it: the stored bytes are ours (no metadata, no trailing
 * data, no second frame), whatever the player sent. Animated or undecodable images are refused.
 */
export async function reencodeStill(upload: Buffer): Promise<ValidStill> {
  const isWebp =
    upload.length >= 12 && upload.toString('latin1', 0, 4) === 'RIFF' && upload.toString('latin1', 8, 12) === 'WEBP';
  if (!isWebp) throw invalidField('body', 'must be a WebP image (RIFF/WEBP)');
  let metadata: Metadata;
  try {
    metadata = await sharp(upload, { animated: true, limitInputPixels: SCREENSHOT_MAX_PIXELS }).metadata();
  } catch {
    throw invalidField('body', 'is not a decodable WebP image');
  }
  if ((metadata.pages ?? 1) > 1) throw invalidField('body', 'must be a still image, not an animation', 'animated');
  for (const quality of REENCODE_QUALITIES) {
    let encoded: { data: Buffer; info: OutputInfo };
    try {
      encoded = await sharp(upload, { limitInputPixels: SCREENSHOT_MAX_PIXELS })
        .webp({ quality })
        .toBuffer({ resolveWithObject: true });
    } catch {
      throw invalidField('body', 'is not a decodable WebP image');
    }
    if (encoded.data.length <= SCREENSHOT_MAX_BYTES)
      return { image: encoded.data, width: encoded.info.width, height: encoded.info.height };
  }
  throw invalidField('body', `does not fit in ${SCREENSHOT_MAX_BYTES} bytes even re-encoded`, 'too_large');
}

/**
 * The player's upload for the current request: it must name the pending capture (a stale,
 * replaced, expired or unknown id is resource_conflict), and becomes the screen's ready image.
 */
export async function storeScreenshot(
  services: Services,
  work: Work,
  upload: { tenantId: string; screenId: string; captureId: string; method: CaptureMethod; still: ValidStill },
  now: number,
): Promise<void> {
  const slot = await currentSlot(services, work, upload.screenId, now);
  if (!slot || slot.capture_id !== upload.captureId)
    throw problem('resource_conflict', `capture ${upload.captureId} is not this screen's current screenshot request`);
  if (slot.ready_capture_id === slot.capture_id)
    throw problem('resource_conflict', `capture ${upload.captureId} was already uploaded`);
  if (slot.timed_out_at !== null)
    throw problem('resource_conflict', `capture ${upload.captureId} expired; the owner must request another`);
  const { image, width, height } = upload.still;
  const sha256 = sha256Hex(image);
  const bytes = image.length;
  // Only the request read, still pending: an upload or a time-out that committed since makes this
  // run again, where it is refused above.
  const stored = await work.db
    .updateTable('screen_screenshots')
    .set({
      ready_capture_id: slot.capture_id,
      method: upload.method,
      width,
      height,
      bytes,
      sha256,
      captured_at: now,
      image,
    })
    .where('screen_id', '=', upload.screenId)
    .where('capture_id', '=', slot.capture_id)
    .where('timed_out_at', 'is', null)
    .where((eb) => eb.or([eb('ready_capture_id', 'is', null), eb('ready_capture_id', '!=', slot.capture_id)]))
    .executeTakeFirst();
  expectUpdated(stored, `screenshot ${slot.capture_id}`);
  await services.events.append(
    work,
    {
      tenantId: upload.tenantId,
      screenId: upload.screenId,
      type: 'screen.screenshot_ready',
      message: `screenshot ${slot.capture_id} ready (${width}×${height}, ${upload.method})`,
      resource: { type: 'screen', id: upload.screenId },
      details: { capture_id: slot.capture_id, bytes, width, height, sha256, method: upload.method },
    },
    now,
  );
}

/**
 * The ready image. `captureId`, when given, must be the ready one: a later request that replaced
 * it is resource_conflict; one that expired with no upload is screenshot_unavailable.
 */
export async function readScreenshot(
  services: Services,
  screen: ScreenTable,
  captureId: string | undefined,
  now: number,
): Promise<{ image: Buffer; captureId: string; sha256: string }> {
  const slot = await services.store.transaction((work) => currentSlot(services, work, screen.id, now));
  const image = slot?.image ? Buffer.from(slot.image) : undefined;
  if (captureId !== undefined && slot?.ready_capture_id !== captureId) {
    if (slot?.capture_id === captureId && slot.timed_out_at !== null)
      throw problem(
        'screenshot_unavailable',
        `capture ${captureId} expired with no upload: ${slot.failure ?? ''}`.trim(),
      );
    if (slot?.capture_id === captureId)
      throw problem('screenshot_unavailable', `capture ${captureId} is still pending; poll its status`);
    throw problem(
      'resource_conflict',
      `capture ${captureId} is not the ready screenshot (a later request replaced it, or it is unknown)`,
    );
  }
  if (!slot || !image || slot.ready_capture_id === null)
    throw problem('screenshot_unavailable', `screen ${screen.id} has no screenshot yet; request one first`);
  return { image, captureId: slot.ready_capture_id, sha256: slot.sha256! };
}

/** Records the timeouts of every request past its expiry (the sweep: events appear without a reader). */
export async function expireScreenshots(services: Services, now: number): Promise<void> {
  const due = await services.store.db
    .selectFrom('screen_screenshots')
    .select('screen_id')
    .where('timed_out_at', 'is', null)
    .where('expires_at', '<=', now)
    .where((eb) => eb.or([eb('ready_capture_id', 'is', null), eb('ready_capture_id', '!=', eb.ref('capture_id'))]))
    .execute();
  for (const { screen_id } of due) {
    await services.store.transaction((work) => currentSlot(services, work, screen_id, now));
  }
}

/** A deleted screen's image goes with it (its tombstone keeps no pixels). */
export async function dropDeletedScreenshots(services: Services): Promise<void> {
  const { db } = services.store;
  await db
    .deleteFrom('screen_screenshots')
    .where('screen_id', 'in', db.selectFrom('screens').select('id').where('state', '=', 'deleted'))
    .execute();
}
