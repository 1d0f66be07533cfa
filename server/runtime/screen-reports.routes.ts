// What a paired player tells of its glass besides reports: PUT /runtime/v1/screenshot (the still
// WebP a screenshot request asked for) and PUT /runtime/v1/observation (the surface it lays its
// canvas out on). The paired runtime cookie or a native session; the session names the screen.
import {
  CAPTURE_ID_HEADER,
  CAPTURE_METHOD_HEADER,
  CAPTURE_METHODS,
  CAPTURE_ID_PATTERN,
  PLAYER_HEADER,
  PLAYER_VERSION_PATTERN,
  SCREENSHOT_MAX_BYTES,
  ScreenObservation,
  type CaptureMethod,
} from '../../sdk/contract/screen-health';
import { bodyIdleTimeoutMs, jsonBodyDeadlineMs } from '../http/body-progress';
import { endpoint, mutation, reply, type AnyContext } from '../http/route';
import { readBody } from '../http/validation';
import { isNativeRequest } from '../pairing/native.auth';
import { pairedRuntimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import { invalidField, problem } from '../problem';
import { recordObservation } from '../screens/screen-health';
import { reencodeStill, storeScreenshot } from '../screens/screenshots';

/** A player answers each request once; a few more a minute leave room for retries. */
const SCREENSHOT_UPLOADS_PER_SCREEN_PER_MINUTE = 20;
/** A surface changes on a resize or a display change; more than this a minute is a loop. */
const OBSERVATIONS_PER_SCREEN_PER_MINUTE = 30;
const OBSERVATION_BODY_LIMIT = 4 * 1024;

const NO_STORE = { 'Cache-Control': 'no-store' };

const perScreen = (name: string, limit: number) => (ctx: AnyContext) => [
  { name, limit, windowSeconds: 60, key: (ctx.principal as RuntimePrincipal).screenId },
];

function header(ctx: AnyContext, name: string): string | undefined {
  const value = ctx.req.headers[name.toLowerCase()];
  return typeof value === 'string' ? value.trim() : undefined;
}

export const putScreenshot = endpoint<undefined, Record<string, never>, RuntimePrincipal>(
  {
    auth: pairedRuntimeCookie,
    body: 'raw',
    rateLimits: perScreen('runtime-screenshot', SCREENSHOT_UPLOADS_PER_SCREEN_PER_MINUTE),
  },
  async (ctx) => {
    const captureId = header(ctx, CAPTURE_ID_HEADER);
    if (!captureId) throw problem('resource_conflict', `send ${CAPTURE_ID_HEADER} with the pending capture id`);
    if (!CAPTURE_ID_PATTERN.test(captureId))
      throw problem('resource_conflict', `${CAPTURE_ID_HEADER} is not a capture id this server issued`);
    const method = (header(ctx, CAPTURE_METHOD_HEADER) ?? 'composed') as CaptureMethod;
    if (!CAPTURE_METHODS.includes(method))
      throw invalidField(CAPTURE_METHOD_HEADER, `must be one of ${CAPTURE_METHODS.join(', ')}`);
    const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'image/webp') throw invalidField('Content-Type', 'must be image/webp');
    const upload = await readBody(ctx.req, SCREENSHOT_MAX_BYTES, {
      idleMs: bodyIdleTimeoutMs(ctx.services),
      deadlineMs: (bytes) => jsonBodyDeadlineMs(ctx.services, bytes),
    });
    if (upload.length === 0) throw invalidField('body', 'send the still WebP');
    // Decoding is slow: done before the transaction, which then only checks and writes.
    const still = await reencodeStill(upload);
    const principal = ctx.principal;
    return ctx.commitReply(async (work) => {
      await storeScreenshot(
        ctx.services,
        work,
        { tenantId: principal.tenantId, screenId: principal.screenId, captureId, method, still },
        ctx.services.clock.now(),
      );
      return reply.noContent({ headers: NO_STORE });
    });
  },
);

export const putObservation = mutation<ScreenObservation, Record<string, never>, RuntimePrincipal>(
  {
    auth: pairedRuntimeCookie,
    body: ScreenObservation,
    bodyLimit: OBSERVATION_BODY_LIMIT,
    rateLimits: perScreen('runtime-observation', OBSERVATIONS_PER_SCREEN_PER_MINUTE),
  },
  async (ctx, work) => {
    const declared = header(ctx, PLAYER_HEADER);
    const version = declared?.split('/')[1];
    const player = {
      kind: isNativeRequest(ctx) ? ('kiosk' as const) : ('browser' as const),
      version: version !== undefined && PLAYER_VERSION_PATTERN.test(version) ? version : null,
    };
    await recordObservation(
      ctx.services,
      work,
      { screenId: ctx.principal.screenId, tenantId: ctx.principal.tenantId },
      ctx.body,
      player,
      ctx.now,
    );
    return reply.noContent({ headers: NO_STORE });
  },
);
