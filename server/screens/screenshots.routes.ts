// Screenshots on the control plane (reference contract): request one (202 with its capture id),
// poll its status, download the ready still WebP. Screen messages: exempt from the credit meter.
import { z } from 'zod';
import { CaptureId } from '../../sdk/contract/screen-health';
import { anyBearer, type TenantPrincipal } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { mutation, query, reply, type AnyContext } from '../http/route';
import { readScreenshot, requestScreenshot, screenshotStatus } from './screenshots';
import { findScreen } from './screens';

/** reference contract x-rate-limit-policies: 10 a minute per screen, 30 per project and per IP. */
const SCREENSHOTS_PER_SCREEN_PER_MINUTE = 10;
const SCREENSHOTS_PER_PROJECT_PER_MINUTE = 30;
const SCREENSHOTS_PER_IP_PER_MINUTE = 30;

const NO_STORE = { 'Cache-Control': 'no-store' };

const budgets = (ctx: AnyContext) => {
  const tenantId = (ctx.principal as TenantPrincipal).tenantId;
  return [
    {
      name: 'screenshot-screen',
      limit: SCREENSHOTS_PER_SCREEN_PER_MINUTE,
      windowSeconds: 60,
      key: `${tenantId}:${ctx.params.id}`,
    },
    { name: 'screenshot-project', limit: SCREENSHOTS_PER_PROJECT_PER_MINUTE, windowSeconds: 60, key: tenantId },
    { name: 'screenshot-ip', limit: SCREENSHOTS_PER_IP_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
  ];
};

export const requestScreenScreenshot = mutation<undefined, Record<string, never>, TenantPrincipal>(
  { auth: anyBearer, area: 'screens', meter: false, idempotency: 'optional', rateLimits: budgets },
  async (ctx, work) => {
    const screen = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
    const accepted = await requestScreenshot(
      ctx.services,
      { events: ctx.services.events, work, now: ctx.now, requestId: ctx.requestId },
      screen,
    );
    return reply.accepted(accepted, { headers: NO_STORE });
  },
);

export const getScreenScreenshotStatus = query({ auth: anyBearer, area: 'screens', meter: false }, async (ctx) => {
  const screen = await findScreen(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(await screenshotStatus(ctx.services, screen, ctx.now), { headers: NO_STORE });
});

const ScreenshotQuery = z.strictObject({ capture_id: CaptureId.optional() });

export const getScreenScreenshot = query(
  { auth: anyBearer, area: 'screens', meter: false, query: ScreenshotQuery },
  async (ctx) => {
    const screen = await findScreen(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
    const still = await readScreenshot(ctx.services, screen, ctx.query.capture_id, ctx.now);
    ctx.res.status(200).set({
      'Content-Type': 'image/webp',
      'Content-Length': String(still.image.length),
      'Content-Disposition': `attachment; filename="${screen.id}-${still.captureId}.webp"`,
      ETag: `"${still.sha256}"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : still.image);
  },
);
