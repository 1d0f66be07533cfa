// POST /api/v1/media/generations (Model P): admission, the vendor call, WebP at the exact aspect
// size, then one transaction that publishes the media, charges credits and counts the bytes.
import sharp from 'sharp';
import {
  GENERATED_SIZES,
  MediaGenerationRequest,
  type MediaContentType,
  type MediaGeneration,
} from '../../sdk/contract/media';
import { projectBearer } from '../http/auth';
import { problem } from '../problem';
import { endpoint, reply } from '../http/route';
import { newId } from '../keys';
import { debit, MILLIS_PER_CREDIT } from '../tenants/credits';
import { commitReservation, reserveBytes } from '../tenants/tenants';
import { VENDOR_TIMEOUT_MS, VendorRefusedError, type ReferenceImage } from './image-vendor';
import { MEDIA_GENERATION_KIND, mediaView, objectKeyOf, readyMedia } from './media';
import type { MediaTable } from './media.tables';
import {
  admitGeneration,
  framedPrompt,
  GENERATION_LEASE_MS,
  holdGenerationSlot,
  priceOf,
  vendorSizeFor,
} from './media-generation';

/** spec: lossy WebP, quality 90. */
const WEBP_QUALITY = 90;
/** A fixed-window budget on top of the one-in-flight rule (reference-style RateLimit headers). */
const GENERATIONS_PER_HOUR = 60;

export const generateMedia = endpoint(
  {
    auth: projectBearer,
    area: 'content',
    body: MediaGenerationRequest,
    idempotency: 'required',
    rateLimits: (ctx) => [
      { name: 'media-generation', limit: GENERATIONS_PER_HOUR, windowSeconds: 3600, key: ctx.principal.tenantId },
    ],
  },
  async (ctx) => {
    const { services } = ctx;
    const vendor = services.imageVendor;
    if (!vendor)
      throw problem(
        'dependency_unavailable',
        'media generation is not enabled on this server (no image vendor is configured)',
      );
    const request = ctx.body;
    const tenantId = ctx.principal.tenantId;
    const target = GENERATED_SIZES[request.aspect_ratio];
    const vendorSize = vendorSizeFor(request.aspect_ratio);
    const price = priceOf(vendorSize, request.quality);
    const referenceIds = request.references ?? [];

    const generationId = newId('gen');
    const references = await services.store.transaction(async ({ db }) => {
      await holdGenerationSlot(db, tenantId, ctx.now).catch((error: unknown) => {
        // spec Errors: a concurrency denial omits RateLimit-Policy and RateLimit.
        delete ctx.answerHeaders['RateLimit-Policy'];
        delete ctx.answerHeaders.RateLimit;
        throw error;
      });
      await admitGeneration(db, tenantId, price, ctx.now);
      const tenant = await db
        .selectFrom('tenants')
        .select(['used_bytes', 'reserved_bytes', 'content_limit_bytes'])
        .where('id', '=', tenantId)
        .executeTakeFirstOrThrow();
      if (tenant.content_limit_bytes > 0 && tenant.used_bytes + tenant.reserved_bytes >= tenant.content_limit_bytes) {
        throw problem('quota_exceeded', `content bytes quota exceeded (limit ${tenant.content_limit_bytes})`);
      }
      const rows: MediaTable[] = [];
      for (const [i, id] of referenceIds.entries()) {
        const row = await readyMedia(db, tenantId, id).catch(() => {
          throw problem('not_found', `references[${i}]: media ${id} not found`, {
            errors: [{ field: `references.${i}`, code: 'not_found', detail: 'no ready media with this id' }],
          });
        });
        if (row.kind !== 'image')
          throw problem('invalid_request', `references[${i}]: must be an image`, {
            errors: [{ field: `references.${i}`, code: 'not_image', detail: 'must be an image' }],
          });
        rows.push(row);
      }
      await db
        .insertInto('media_generations')
        .values({
          id: generationId,
          tenant_id: tenantId,
          state: 'running',
          media_id: null,
          prompt: request.prompt,
          aspect_ratio: request.aspect_ratio,
          quality: request.quality,
          tag: request.tag ?? null,
          references: JSON.stringify(referenceIds),
          credits: null,
          usd: null,
          lease_expires_at: ctx.now + GENERATION_LEASE_MS,
          request_id: ctx.requestId,
          created_at: ctx.now,
          updated_at: ctx.now,
        })
        .execute();
      return rows;
    });

    const mediaId = newId('med');
    const key = objectKeyOf(mediaId);
    let stored = false;
    try {
      const refs: ReferenceImage[] = [];
      for (const row of references)
        refs.push({
          bytes: await readAll(services.blobs.read(row.blob_key!)),
          contentType: row.content_type,
          filename: row.filename,
        });
      const signal = AbortSignal.timeout(VENDOR_TIMEOUT_MS);
      const rendered = await vendor
        .generate(
          { prompt: framedPrompt(request.prompt), size: vendorSize, quality: request.quality, references: refs },
          signal,
        )
        .catch((error: unknown) => {
          if (error instanceof VendorRefusedError)
            throw problem('invalid_request', `prompt: ${error.message}`, {
              errors: [{ field: 'prompt', code: 'refused', detail: error.message }],
            });
          services.logger.warn(
            { generation_id: generationId, reason: (error as Error).message },
            'image vendor failed',
          );
          throw problem('dependency_unavailable', 'the image vendor is unavailable; retry later');
        });
      const webp = await sharp(rendered, { failOn: 'none' })
        .resize(target.width, target.height, { fit: 'cover', position: 'centre' })
        .webp({ quality: WEBP_QUALITY })
        .toBuffer()
        .catch(() => {
          throw problem(
            'dependency_unavailable',
            'the image vendor answered with bytes that are not an image; retry later',
          );
        });
      const info = await services.blobs.write(key, webp);
      stored = true;
      const aspect = request.aspect_ratio.replace(':', 'x');
      return await ctx.commitReply(async (work) => {
        const now = services.clock.now();
        await reserveBytes(work.db, tenantId, info.bytes);
        await commitReservation(work.db, tenantId, info.bytes, info.bytes);
        await debit(work.db, tenantId, now, 'media_generation', price.credits * MILLIS_PER_CREDIT);
        const operationId = newId('op');
        // A generation finishes within its request; its operation is recorded already succeeded so that
        // every media names the operation that made it.
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
            input: JSON.stringify({ generation_id: generationId }),
            result: JSON.stringify({ media_id: mediaId }),
            error: null,
            request_id: ctx.requestId,
            created_at: ctx.now,
            updated_at: now,
          })
          .execute();
        const row: MediaTable = {
          id: mediaId,
          tenant_id: tenantId,
          state: 'ready',
          kind: 'image',
          filename: `generated-${aspect}-${mediaId.slice(-8)}.webp`,
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
          .where('id', '=', generationId)
          .execute();
        await services.events.append(
          work,
          {
            tenantId,
            type: 'media.generated',
            message: `media ${row.filename} generated`,
            resource: { type: 'media', id: mediaId },
            operationId,
            requestId: ctx.requestId,
            details: {
              aspect_ratio: request.aspect_ratio,
              quality: request.quality,
              credits: price.credits,
              tag: row.tag,
            },
          },
          now,
        );
        await services.references.mediaChanged(work, tenantId, { mediaId, tags: [row.tag] }, now);
        const body: MediaGeneration = {
          ...mediaView(row),
          usage: { quality: request.quality, credits: price.credits, usd: price.usd },
        };
        return reply.created(body, { revision: row.revision });
      });
    } catch (error) {
      if (stored) await services.blobs.delete(key).catch(() => undefined);
      await services.store.transaction(async ({ db }) => {
        await db
          .updateTable('media_generations')
          .set({ state: 'failed', updated_at: services.clock.now() })
          .where('id', '=', generationId)
          .where('state', '=', 'running')
          .execute();
      });
      throw error;
    }
  },
);

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
