// Media generation: prompt framing, the vendor's size and price, credit admission, the one
// in-flight generation per project, rendering the vendor's image as WebP, and publishing it. The
// route (media-generation.routes.ts) strings them together around its idempotency record.
import sharp from 'sharp';
import type { z } from 'zod';
import {
  GENERATED_SIZES,
  GENERATION_REFERENCE_MAX_BYTES,
  type AspectRatio,
  type GenerationQuality,
  type MediaContentType,
  type MediaGeneration,
  type MediaGenerationRequest,
} from '../../sdk/contract/media';
import type { BlobInfo } from '../blobs/blob-store';
import { newId } from '../keys';
import { problem } from '../problem';
import { mediaSelectionLock } from '../references';
import type { Services } from '../services';
import type { Tx, Work } from '../store/store';
import { debit, floorMillis, MILLIS_PER_CREDIT } from '../tenants/credits';
import { commitReservation, reserveBytes } from '../tenants/tenants';
import {
  VENDOR_TIMEOUT_MS,
  VendorRefusedError,
  type ImageVendor,
  type ReferenceImage,
  type VendorSize,
} from './image-vendor';
import { MEDIA_GENERATION_KIND, mediaView, readyMedia } from './media';
import type { MediaTable } from './media.tables';

/** spec Media: appended before the prompt reaches the vendor; the stored prompt stays unchanged. */
export const FRAMING_REQUIREMENTS =
  'Requirements: edge-to-edge artwork that fills the whole canvas. Do not depict a television, monitor, device, bezel, frame, border, mounting, room, shadow, or a photograph of an installed sign.';

export function framedPrompt(prompt: string): string {
  return `${prompt}\n\n${FRAMING_REQUIREMENTS}`;
}

/** The vendor size closest in shape to the aspect; the server then crops and scales to the exact size. */
export function vendorSizeFor(aspect: AspectRatio): VendorSize {
  const { width, height } = GENERATED_SIZES[aspect];
  return width === height ? '1024x1024' : width > height ? '1536x1024' : '1024x1536';
}

/**
 * The vendor's price of one image in US dollars, by size and quality: the list prices of the
 * OpenAI gpt-image-1 model, which the default adapter targets. Known before the call, so admission
 * can check the balance first.
 */
export const VENDOR_PRICE_USD: Record<VendorSize, Record<GenerationQuality, number>> = {
  '1024x1024': { low: 0.011, medium: 0.042, high: 0.167 },
  '1536x1024': { low: 0.016, medium: 0.063, high: 0.25 },
  '1024x1536': { low: 0.016, medium: 0.063, high: 0.25 },
};

/** What one credit is worth when a vendor cost is charged in credits (10,000 included credits = $10). */
export const USD_PER_CREDIT = 0.001;

export interface GenerationPrice {
  usd: string;
  /** Whole credits charged on success: the vendor cost rounded up. */
  credits: number;
}

export function priceOf(size: VendorSize, quality: GenerationQuality): GenerationPrice {
  const usd = VENDOR_PRICE_USD[size][quality];
  return { usd: decimal(usd), credits: Math.ceil(Math.round((usd / USD_PER_CREDIT) * 1e6) / 1e6) };
}

function decimal(value: number): string {
  return value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

/** A running generation holds the project's slot this long at most (a crashed one frees it). */
export const GENERATION_LEASE_MS = 10 * 60_000;

/**
 * spec Limits: remaining credits must be above the floor by at least 1 credit, and must cover twice
 * the vendor cost (rounded up to whole credits); both measured above the floor, like every debit.
 */
export async function admitGeneration(tx: Tx, tenantId: string, price: GenerationPrice, now: number): Promise<void> {
  const tenant = await tx
    .selectFrom('tenants')
    .select(['credit_millis'])
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  const spendable = tenant.credit_millis - floorMillis(now);
  if (spendable < MILLIS_PER_CREDIT)
    throw problem(
      'payment_required',
      'remaining credits are at the floor; media generation needs at least 1 credit above it',
    );
  if (spendable < 2 * price.credits * MILLIS_PER_CREDIT) {
    throw problem(
      'payment_required',
      `media generation at this quality needs ${2 * price.credits} credits of headroom (twice its ${price.credits}-credit vendor cost)`,
    );
  }
}

/** spec Limits: one in-flight generation per project; more parallelism is rate_limited (no RateLimit headers). */
export async function holdGenerationSlot(tx: Tx, tenantId: string, now: number): Promise<void> {
  const running = await tx
    .selectFrom('media_generations')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('state', '=', 'running')
    .where('lease_expires_at', '>', now)
    .executeTakeFirst();
  if (running)
    throw problem('rate_limited', 'another media generation of this project is still running; retry when it finished', {
      retryAfter: 5,
    });
}

/** spec: lossy WebP, quality 90. */
const WEBP_QUALITY = 90;

/** One generation request as the route parsed it (defaults applied). */
export type GenerationRequest = z.output<typeof MediaGenerationRequest>;

/** What a generation is before it runs: its id, the vendor size, the price and the stored size. */
export interface Generation {
  id: string;
  tenantId: string;
  request: GenerationRequest;
  vendorSize: VendorSize;
  price: GenerationPrice;
  requestId: string;
}

export function planGeneration(tenantId: string, request: GenerationRequest, requestId: string): Generation {
  const vendorSize = vendorSizeFor(request.aspect_ratio);
  return {
    id: newId('gen'),
    tenantId,
    request,
    vendorSize,
    price: priceOf(vendorSize, request.quality),
    requestId,
  };
}

/**
 * Admits the generation in the caller's (short) transaction: the project's one slot, its credits,
 * its content quota and its references; records it as running. Returns the reference media.
 */
export async function openGeneration(work: Work, g: Generation, now: number): Promise<MediaTable[]> {
  // The slot and the credits are read, then the running row is written: one admission per project
  // at a time where transactions run side by side (PostgreSQL), or two would both find the slot free.
  await work.lock(`media-generation:${g.tenantId}`);
  const tx = work.db;
  await holdGenerationSlot(tx, g.tenantId, now);
  await admitGeneration(tx, g.tenantId, g.price, now);
  const tenant = await tx
    .selectFrom('tenants')
    .select(['used_bytes', 'reserved_bytes', 'content_limit_bytes'])
    .where('id', '=', g.tenantId)
    .executeTakeFirstOrThrow();
  if (tenant.content_limit_bytes > 0 && tenant.used_bytes + tenant.reserved_bytes >= tenant.content_limit_bytes) {
    throw problem('quota_exceeded', `content bytes quota exceeded (limit ${tenant.content_limit_bytes})`);
  }
  const referenceIds = g.request.references ?? [];
  const rows: MediaTable[] = [];
  for (const [i, id] of referenceIds.entries()) {
    const row = await readyMedia(tx, g.tenantId, id).catch(() => {
      throw problem('not_found', `references[${i}]: media ${id} not found`, {
        errors: [{ field: `references.${i}`, code: 'not_found', detail: 'no ready media with this id' }],
      });
    });
    if (row.kind !== 'image')
      throw problem('invalid_request', `references[${i}]: must be an image`, {
        errors: [{ field: `references.${i}`, code: 'not_image', detail: 'must be an image' }],
      });
    // Read whole before it is sent: an image may be up to 1 GiB, far more than a vendor takes.
    if (row.bytes > GENERATION_REFERENCE_MAX_BYTES) {
      const detail = `is ${row.bytes} bytes; a reference image may be at most ${GENERATION_REFERENCE_MAX_BYTES}`;
      throw problem('invalid_request', `references[${i}]: ${detail}`, {
        errors: [{ field: `references.${i}`, code: 'too_large', detail }],
      });
    }
    rows.push(row);
  }
  await tx
    .insertInto('media_generations')
    .values({
      id: g.id,
      tenant_id: g.tenantId,
      state: 'running',
      media_id: null,
      prompt: g.request.prompt,
      aspect_ratio: g.request.aspect_ratio,
      quality: g.request.quality,
      tag: g.request.tag ?? null,
      references: JSON.stringify(referenceIds),
      credits: null,
      usd: null,
      lease_expires_at: now + GENERATION_LEASE_MS,
      request_id: g.requestId,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return rows;
}

/**
 * The vendor's image for the framed prompt, as lossy WebP at the exact aspect size. A refused
 * prompt is invalid_request; a vendor that fails or answers with something that is not an image is
 * dependency_unavailable.
 */
export async function renderGeneration(
  services: Services,
  vendor: ImageVendor,
  g: Generation,
  references: MediaTable[],
): Promise<Buffer> {
  const refs: ReferenceImage[] = [];
  for (const row of references)
    refs.push({
      bytes: await readAll(services.blobs.read(row.blob_key!)),
      contentType: row.content_type,
      filename: row.filename,
    });
  const rendered = await vendor
    .generate(
      {
        prompt: framedPrompt(g.request.prompt),
        size: g.vendorSize,
        quality: g.request.quality,
        references: refs,
      },
      AbortSignal.timeout(VENDOR_TIMEOUT_MS),
    )
    .catch((error: unknown) => {
      if (error instanceof VendorRefusedError)
        throw problem('invalid_request', `prompt: ${error.message}`, {
          errors: [{ field: 'prompt', code: 'refused', detail: error.message }],
        });
      services.logger.warn({ generation_id: g.id, reason: (error as Error).message }, 'image vendor failed');
      throw problem('dependency_unavailable', 'the image vendor is unavailable; retry later');
    });
  const target = GENERATED_SIZES[g.request.aspect_ratio];
  return sharp(rendered, { failOn: 'none' })
    .resize(target.width, target.height, { fit: 'cover', position: 'centre' })
    .webp({ quality: WEBP_QUALITY })
    .toBuffer()
    .catch(() => {
      throw problem(
        'dependency_unavailable',
        'the image vendor answered with bytes that are not an image; retry later',
      );
    });
}

/**
 * Publishes the stored image as ready media in the caller's transaction: its bytes counted, its
 * credits charged, an operation recorded already succeeded (every media names the operation that
 * made it), the generation closed, its event, and playlists re-resolved.
 */
export async function publishGeneration(
  services: Services,
  work: Work,
  g: Generation,
  stored: { mediaId: string; key: string; info: BlobInfo },
  startedAt: number,
  now: number,
): Promise<MediaGeneration> {
  const { mediaId, key, info } = stored;
  const { request, price, tenantId } = g;
  // Playlists selecting from all media (or by its tag) re-resolve below; one written at the same
  // moment commits first or reads the media ready (D-453's order: before any event).
  await work.lock(mediaSelectionLock(tenantId));
  const target = GENERATED_SIZES[request.aspect_ratio];
  await reserveBytes(work.db, tenantId, info.bytes);
  await commitReservation(work.db, tenantId, info.bytes, info.bytes);
  await debit(work.db, tenantId, now, 'media_generation', price.credits * MILLIS_PER_CREDIT);
  const operationId = newId('op');
  await work.db
    .insertInto('operations')
    .values({
      id: operationId,
      tenant_id: tenantId,
      kind: MEDIA_GENERATION_KIND,
      state: 'succeeded',
      fence: 0,
      attempts: 1,
      lease_expires_at: null,
      lease_owner: null,
      input: JSON.stringify({ generation_id: g.id }),
      result: JSON.stringify({ media_id: mediaId }),
      error: null,
      request_id: g.requestId,
      created_at: startedAt,
      updated_at: now,
    })
    .execute();
  const row: MediaTable = {
    id: mediaId,
    tenant_id: tenantId,
    state: 'ready',
    kind: 'image',
    filename: `generated-${request.aspect_ratio.replace(':', 'x')}-${mediaId.slice(-8)}.webp`,
    source_filename: null,
    content_type: 'image/webp' satisfies MediaContentType,
    bytes: info.bytes,
    sha256: info.sha256,
    tag: request.tag ?? null,
    width: target.width,
    height: target.height,
    duration_ms: null,
    codecs: null,
    revision: 1,
    operation_id: operationId,
    blob_key: key,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  await work.db.insertInto('media').values(row).execute();
  await work.db
    .updateTable('media_generations')
    .set({ state: 'succeeded', media_id: mediaId, credits: price.credits, usd: price.usd, updated_at: now })
    .where('id', '=', g.id)
    .execute();
  await services.events.append(
    work,
    {
      tenantId,
      type: 'media.generated',
      message: `media ${row.filename} generated`,
      resource: { type: 'media', id: mediaId },
      operationId,
      requestId: g.requestId,
      details: { aspect_ratio: request.aspect_ratio, quality: request.quality, credits: price.credits, tag: row.tag },
    },
    now,
  );
  await services.references.mediaChanged(work, tenantId, { mediaId, tags: [row.tag] }, now);
  return { ...mediaView(row), usage: { quality: request.quality, credits: price.credits, usd: price.usd } };
}

/** A generation that did not publish frees the project's slot. */
export async function failGeneration(tx: Tx, generationId: string, now: number): Promise<void> {
  await tx
    .updateTable('media_generations')
    .set({ state: 'failed', updated_at: now })
    .where('id', '=', generationId)
    .where('state', '=', 'running')
    .execute();
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
