// POST /api/v1/media/generations (Model P): admission, the vendor call, WebP at the exact aspect
// size, then one transaction that publishes the media, charges credits and counts the bytes.
import { MediaGenerationRequest } from '../../sdk/contract/media';
import { projectBearer } from '../http/auth';
import { problem, ProblemError } from '../problem';
import { endpoint, reply } from '../http/route';
import { newId } from '../keys';
import { objectKeyOf } from './media';
import {
  failGeneration,
  openGeneration,
  planGeneration,
  publishGeneration,
  renderGeneration,
} from './media-generation';

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
    const generation = planGeneration(ctx.principal.tenantId, ctx.body, ctx.requestId);
    const references = await services.store
      .transaction((work) => openGeneration(work, generation, ctx.now))
      .catch((error: unknown) => {
        // spec Errors: a concurrency denial (the one running generation) omits RateLimit-Policy and RateLimit.
        if (error instanceof ProblemError && error.code === 'rate_limited') {
          delete ctx.answerHeaders['RateLimit-Policy'];
          delete ctx.answerHeaders.RateLimit;
        }
        throw error;
      });

    const mediaId = newId('med');
    const key = objectKeyOf(mediaId);
    let stored = false;
    try {
      const webp = await renderGeneration(services, vendor, generation, references);
      const info = await services.blobs.write(key, webp);
      stored = true;
      return await ctx.commitReply(async (work) => {
        const body = await publishGeneration(
          services,
          work,
          generation,
          { mediaId, key, info },
          ctx.now,
          services.clock.now(),
        );
        return reply.created(body, { revision: body.revision });
      });
    } catch (error) {
      if (stored) await services.blobs.delete(key).catch(() => undefined);
      await services.store.transaction(({ db }) => failGeneration(db, generation.id, services.clock.now()));
      throw error;
    }
  },
);
