// Fleet control on the control plane: a screen's playlist schedule, takeover, toast, display and
// reboot routes, and fleet actions over many screens. Each single-screen route runs the same action
// entry a fan-out runs per screen (screen-actions.ts).
import type { z } from 'zod';
import {
  DisplayRequest,
  DisplaySchedule,
  ScreenActionRequest,
  ScreenPlaylistScheduleWrite,
  TakeoverRequest,
  ToastRequest,
  type FleetAction,
} from '../../sdk/contract/fleet';
import { projectBearer } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { endpoint, mutation, query, reply, type AnyContext, type RequestContext } from '../http/route';
import type { TenantPrincipal } from '../http/auth';
import { displayOf } from '../screens/display-state';
import { findScreen } from '../screens/screens';
import { runFleetAction, runScreenAction } from './fleet-actions';
import { prepareAction, scheduleView, screenControlIpBudget } from './screen-actions';

const PRIVATE_NO_STORE = { 'Cache-Control': 'private, no-store' };

const screenControlIp = (ctx: AnyContext) => [screenControlIpBudget(clientIp(ctx))];

/** Adds a handler's rate headers to those the pipeline set (the per-IP budget's): both are disclosed. */
function addRateHeaders(answer: Record<string, string>, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers))
    answer[name] = answer[name] ? `${answer[name]}, ${value}` : value;
}

type Ctx<B> = RequestContext<B, Record<string, never>, TenantPrincipal>;

/**
 * A single-screen action route: the screen of the caller's tenant (others: not_found), If-Match,
 * then the action entry with the project's and the screen's budgets.
 */
function screenAction<B>(options: {
  body?: z.ZodType<B>;
  /** spec: screen messages (reload, toast, display, reboot) are exempt from the credit meter. */
  message?: boolean;
  ipBudget?: boolean;
  action: (ctx: Ctx<B>) => FleetAction;
}) {
  return mutation(
    {
      auth: projectBearer,
      area: 'screens',
      body: options.body,
      meter: !options.message,
      ifMatch: 'optional',
      idempotency: 'optional', // exact retries replay the answer for 24 h (the records' retention)
      ...(options.ipBudget ? { rateLimits: screenControlIp } : {}),
    },
    async (raw, work) => {
      const ctx = raw as unknown as Ctx<B>;
      const screen = await findScreen(work.db, ctx.principal.tenantId, ctx.params.id!);
      ctx.checkRevision(screen.revision);
      const prepared = prepareAction(options.action(ctx), ctx.now);
      const { answer, headers } = await runScreenAction(
        { services: ctx.services, events: ctx.services.events, work, now: ctx.now, requestId: ctx.requestId },
        screen,
        prepared,
        'project-and-screen',
      );
      addRateHeaders(ctx.answerHeaders, headers);
      return { status: answer.status, body: answer.body, revision: answer.revision, headers: PRIVATE_NO_STORE };
    },
  );
}

export const getPlaylistSchedule = query({ auth: projectBearer, area: 'screens' }, async (ctx) => {
  const { db } = ctx.services.store;
  const screen = await findScreen(db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(await scheduleView(db, screen, ctx.now), { revision: screen.revision });
});

export const putPlaylistSchedule = screenAction({
  body: ScreenPlaylistScheduleWrite,
  action: (ctx) =>
    ctx.body.entries.length === 0
      ? { type: 'clear_playlist_schedule' }
      : { type: 'set_playlist_schedule', entries: ctx.body.entries },
});

export const deletePlaylistSchedule = screenAction({ action: () => ({ type: 'clear_playlist_schedule' }) });

export const startTakeover = screenAction({
  body: TakeoverRequest,
  ipBudget: true,
  action: (ctx) => ({ type: 'takeover', ...ctx.body }),
});

export const clearTakeover = screenAction({ ipBudget: true, action: () => ({ type: 'takeover_clear' }) });

export const toastScreen = screenAction({
  body: ToastRequest,
  message: true,
  action: (ctx) => ({ type: 'toast', ...(ctx.body as z.output<typeof ToastRequest>) }),
});

export const rebootScreen = screenAction({ message: true, action: () => ({ type: 'reboot' }) });

export const setDisplay = screenAction({
  body: DisplayRequest,
  message: true,
  action: (ctx) => ({ type: 'display', power: ctx.body.power }),
});

export const clearDisplay = screenAction({ message: true, action: () => ({ type: 'display_clear' }) });

export const putDisplaySchedule = screenAction({
  body: DisplaySchedule,
  message: true,
  action: (ctx) => ({ type: 'set_display_schedule', on: ctx.body.on }),
});

export const deleteDisplaySchedule = screenAction({
  message: true,
  action: () => ({ type: 'clear_display_schedule' }),
});

export const getDisplay = query({ auth: projectBearer, area: 'screens' }, async (ctx) => {
  const { db } = ctx.services.store;
  const screen = await findScreen(db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(await displayOf(db, screen.id), { revision: screen.revision });
});

/** spec: one metered request whatever the fan-out; partial success is a normal 200. */
export const screenActions = endpoint(
  {
    auth: projectBearer,
    area: 'screens',
    body: ScreenActionRequest,
    bodyLimit: 256 * 1024, // 500 ids and a schedule of 32 entries
    idempotency: 'optional',
  },
  async (ctx) => {
    // Screens commit one by one (a crash keeps what finished); the whole answer is recorded last.
    const { result, headers } = await runFleetAction(ctx.services, {
      tenantId: ctx.principal.tenantId,
      request: ctx.body,
      now: ctx.now,
      requestId: ctx.requestId,
      generation: ctx.generation,
      clientIp: clientIp(ctx),
      ...(ctx.idempotencyKey ? { record: { key: ctx.idempotencyKey, fingerprint: fingerprintOf(ctx) } } : {}),
    });
    addRateHeaders(ctx.answerHeaders, headers);
    return ctx.commitReply(async () => reply.ok(result, { headers: PRIVATE_NO_STORE }));
  },
);

function fingerprintOf(ctx: AnyContext): string {
  return JSON.stringify(ctx.body);
}
