// Pairing on both planes: the player starts a session and shows its code, an agent claims the code
// (a new pairing_pending screen), the player hears the claim, completes with the nonce and gets
// its paired-device cookie, then trades that for runtime sessions. Browser provisioning skips the
// code: a fragment token in the screen's URL is exchanged once for the device cookie.
import {
  BrowserProvisioningExchange,
  DeviceSessionRequest,
  displayPairingCode,
  PairingComplete,
  PairScreen,
  ProvisionScreen,
  RuntimeSessionRequest,
  type PairingClaim,
  type PairingClaimedEvent,
  type PairingSession,
  type ScreenProvisioning,
} from '../../sdk/contract/screens';
import { isoTime } from '../clock';
import { anyBearer, projectBearer } from '../http/auth';
import { clientIp } from '../http/client-ip';
import { problem } from '../problem';
import { rateLimitHeaders, type RateBudget } from '../http/rate-limit';
import { eventStream, mutation, reply, type AnyContext, type IdempotencyPolicy } from '../http/route';
import { openSse } from '../http/sse';
import { findScreen, publicUrl, viewOf } from '../screens/screens';
import type { Work } from '../store/store';
import { deviceCookie, pairingCookie, playerOrigin } from './pairing.auth';
import {
  claimedNonce,
  claimPairingCode,
  completePairing as completeClaimedPairing,
  deviceCookieFor,
  exchangeProvisioning as exchangeProvisioningLink,
  livePairingSession,
  openRuntimeSession,
  pairingChannel,
  PROVISIONING_WINDOW_MS,
  provisionScreen as provisionBrowserScreen,
  restartPairing,
  screenByPublicId,
} from './pairing';
import { clearCookie, cookieValues, PAIRING_COOKIE, readCookie } from './pairing-cookies';
import type { PairingSessionTable } from './pairing.tables';

const NO_STORE = { 'Cache-Control': 'no-store' };
const PRIVATE_NO_STORE = { 'Cache-Control': 'private, no-store' };

// Rate budgets (reference contract values). Claims are also limited by misses: guessing codes is
// the one way to attack pairing, so each wrong code costs from a small separate budget.
const PAIRING_START_PER_IP_PER_MINUTE = 20;
const PAIRING_CLAIMS_PER_MINUTE = 30; // per tenant and per IP
const PAIRING_MISSES_PER_TEN_MINUTES = 10; // per tenant and per IP
const PAIRING_COMPLETES_PER_IP_PER_MINUTE = 30;
const RUNTIME_SESSIONS_PER_IP_PER_MINUTE = 60;
const PROVISIONS_PER_TENANT_PER_HOUR = 20;
const PROVISIONS_PER_IP_PER_HOUR = 10;
const EXCHANGES_PER_IP_PER_MINUTE = 30;

const tenantOf = (ctx: AnyContext) => (ctx.principal as { tenantId?: string } | undefined)?.tenantId ?? 'unknown';

/** Appends each Set-Cookie once the transaction committed, so a rolled-back request sets none. */
function setCookiesAfterCommit(ctx: AnyContext, work: Work, cookies: string[]): void {
  work.afterCommit(() => {
    for (const c of cookies) ctx.res.append('Set-Cookie', c);
  });
}

// ---- Runtime plane

/**
 * The pairing session this player's pairing cookie names, if it is still current. A player renews
 * its code with the same cookie: the code it showed until now must stop being claimable (a claim
 * of it would create a screen no player completes), and a claim that landed just before the
 * renewal must be completed, not abandoned.
 */
async function previousPairingSession(ctx: AnyContext, work: Work): Promise<PairingSessionTable | undefined> {
  const value = cookieValues.pairing.unseal(ctx.services.keys, readCookie(ctx.req, PAIRING_COOKIE));
  if (!value || value.e <= ctx.now) return undefined;
  return livePairingSession(work.db, value.s, ctx.now);
}

export const startPairing = mutation(
  {
    auth: playerOrigin,
    rateLimits: (ctx) => [
      { name: 'pairing-start', limit: PAIRING_START_PER_IP_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const previous = await previousPairingSession(ctx, work);
    const { session, cookie } = await restartPairing(ctx.services, work, previous, ctx.now);
    setCookiesAfterCommit(ctx, work, [cookie]);
    const body: PairingSession = { code: session.code, expires_at: isoTime(session.code_expires_at) };
    return reply.created(body, { headers: NO_STORE });
  },
);

/** One terminal pairing.claimed frame, replayed when the claim came before the connection; then close. */
export const pairingEvents = eventStream({ auth: pairingCookie }, async (ctx) => {
  const { services } = ctx;
  const sessionId = ctx.principal.session.id;
  const stream = openSse(ctx.res, { lifecycle: services.lifecycle });
  const deliverIfClaimed = async (): Promise<boolean> => {
    const nonce = await claimedNonce(services.store.db, sessionId);
    if (nonce === undefined) return false;
    const data: PairingClaimedEvent = { type: 'pairing.claimed', completion_nonce: nonce };
    stream.send({ event: 'pairing.claimed', data });
    stream.close();
    return true;
  };
  // Subscribe first, then look: a claim committing in between still wakes us. Wake-ups run one at a time.
  let checks = Promise.resolve();
  const check = async () => {
    if (!stream.closed) await deliverIfClaimed();
  };
  const unsubscribe = services.notifier.subscribe(pairingChannel(sessionId), () => {
    checks = checks.then(check).catch(() => stream.close());
  });
  stream.onClose(unsubscribe);
  if (await deliverIfClaimed()) return;
  // Nothing can be claimed after the code expires: end the stream then (the player starts over).
  const remaining = ctx.principal.session.code_expires_at - services.clock.now();
  const timer = setTimeout(() => stream.close(), Math.max(0, Math.min(remaining, 2 ** 31 - 1)));
  timer.unref();
  stream.onClose(() => clearTimeout(timer));
});

export const completePairing = mutation(
  {
    auth: pairingCookie,
    body: PairingComplete,
    rateLimits: (ctx) => [
      { name: 'pairing-complete', limit: PAIRING_COMPLETES_PER_IP_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const { screen, cookie } = await completeClaimedPairing(
      ctx.services,
      work,
      ctx.principal.session.id,
      ctx.body.completion_nonce,
      ctx.now,
      ctx.requestId,
    );
    setCookiesAfterCommit(ctx, work, [cookie, clearCookie(PAIRING_COOKIE)]);
    const body: PairingClaim = {
      screen: await viewOf(ctx.services, work.db, screen),
      public_url: publicUrl(ctx.services, screen.public_id),
    };
    return reply.ok(body, { headers: NO_STORE });
  },
);

export const createDeviceSession = mutation(
  { auth: deviceCookie, body: DeviceSessionRequest.optional() },
  async (ctx, work) => {
    const screen = await findScreen(work.db, ctx.principal.tenantId, ctx.principal.screenId);
    if (ctx.body?.public_id !== undefined && ctx.body.public_id !== screen.public_id) {
      throw problem(
        'resource_conflict',
        'this player is paired with a screen whose public URL is different; open public_url instead',
        {
          extensions: { public_url: publicUrl(ctx.services, screen.public_id) },
        },
      );
    }
    const { body, cookie } = await openRuntimeSession(
      ctx.services,
      work,
      screen,
      { deviceId: ctx.principal.deviceId },
      ctx.now,
    );
    // Re-set the device cookie too: an active player keeps it from lapsing.
    setCookiesAfterCommit(ctx, work, [cookie, deviceCookieFor(ctx.services, ctx.principal.deviceId)]);
    return reply.created(body, { headers: NO_STORE });
  },
);

export const createRuntimeSession = mutation(
  {
    auth: playerOrigin,
    body: RuntimeSessionRequest,
    rateLimits: (ctx) => [
      { name: 'runtime-session', limit: RUNTIME_SESSIONS_PER_IP_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const screen = await screenByPublicId(work.db, ctx.body.public_id);
    const { body, cookie } = await openRuntimeSession(ctx.services, work, screen, null, ctx.now);
    setCookiesAfterCommit(ctx, work, [cookie]);
    return reply.created(body, { headers: NO_STORE });
  },
);

export const exchangeProvisioning = mutation(
  {
    auth: playerOrigin,
    body: BrowserProvisioningExchange,
    rateLimits: (ctx) => [
      {
        name: 'browser-provision-exchange-ip',
        limit: EXCHANGES_PER_IP_PER_MINUTE,
        windowSeconds: 60,
        key: clientIp(ctx),
      },
    ],
  },
  async (ctx, work) => {
    const { screen, cookie } = await exchangeProvisioningLink(
      ctx.services,
      work,
      ctx.body.provisioning_token,
      ctx.body.exchange_id,
      ctx.now,
      ctx.requestId,
    );
    setCookiesAfterCommit(ctx, work, [cookie]);
    const body: PairingClaim = {
      screen: await viewOf(ctx.services, work.db, screen),
      public_url: publicUrl(ctx.services, screen.public_id),
    };
    return reply.created(body, { headers: { ...NO_STORE, 'Referrer-Policy': 'no-referrer' } });
  },
);

// ---- Control plane

function missBudgets(ctx: AnyContext): RateBudget[] {
  return [
    {
      name: 'pairing-claim-miss-account',
      limit: PAIRING_MISSES_PER_TEN_MINUTES,
      windowSeconds: 600,
      key: tenantOf(ctx),
    },
    { name: 'pairing-claim-miss-ip', limit: PAIRING_MISSES_PER_TEN_MINUTES, windowSeconds: 600, key: clientIp(ctx) },
  ];
}

export const pairScreen = mutation(
  {
    auth: anyBearer,
    area: 'screens',
    body: PairScreen,
    idempotency: 'required',
    rateLimits: (ctx) => [
      { name: 'pairing-claim-account', limit: PAIRING_CLAIMS_PER_MINUTE, windowSeconds: 60, key: tenantOf(ctx) },
      { name: 'pairing-claim-ip', limit: PAIRING_CLAIMS_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const { rateLimiter } = ctx.services;
    for (const budget of missBudgets(ctx)) {
      const decision = await rateLimiter.peek(budget, ctx.now);
      if (!decision.allowed) {
        throw problem('rate_limited', `too many wrong pairing codes; retry after ${decision.resetSeconds} s`, {
          retryAfter: decision.resetSeconds,
          headers: rateLimitHeaders(budget, decision),
        });
      }
    }
    const screen = await claimPairingCode(
      ctx.services,
      work,
      {
        tenantId: ctx.principal.tenantId,
        code: ctx.body.code,
        label: ctx.body.label ?? `Screen ${displayPairingCode(ctx.body.code)}`,
      },
      ctx.now,
      ctx.requestId,
    );
    if (!screen) {
      for (const budget of missBudgets(ctx)) await rateLimiter.take(budget, ctx.now);
      throw problem(
        'not_found',
        'no pairing session with this code is waiting; check the code on the screen (codes expire after ten minutes)',
      );
    }
    const body: PairingClaim = {
      screen: await viewOf(ctx.services, work.db, screen),
      public_url: publicUrl(ctx.services, screen.public_id),
    };
    return reply.created(body, { headers: PRIVATE_NO_STORE, revision: screen.revision });
  },
);

/** A replay redelivers the fragment token only inside its window; the recorded answer is erased after it. */
const provisioningDelivery: Omit<IdempotencyPolicy, 'mode'> = {
  eraseBodyAfterMs: PROVISIONING_WINDOW_MS,
  async onReplay(ctx, recorded) {
    const expiresAt = (recorded.body as { expires_at?: string } | undefined)?.expires_at;
    if (expiresAt === undefined || ctx.now >= Date.parse(expiresAt)) {
      throw problem(
        'credential_issuance_expired',
        'the provisioning link of this request can no longer be shown; provision again with a new Idempotency-Key',
      );
    }
  },
};

export const provisionScreen = mutation(
  {
    auth: projectBearer,
    area: 'screens',
    body: ProvisionScreen,
    idempotency: { mode: 'required', ...provisioningDelivery },
    rateLimits: (ctx) => [
      {
        name: 'screen-provision-account',
        limit: PROVISIONS_PER_TENANT_PER_HOUR,
        windowSeconds: 3600,
        key: tenantOf(ctx),
      },
      { name: 'screen-provision-ip', limit: PROVISIONS_PER_IP_PER_HOUR, windowSeconds: 3600, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const { screen, token, expiresAt } = await provisionBrowserScreen(
      ctx.services,
      work,
      { tenantId: ctx.principal.tenantId, label: ctx.body.label ?? 'Browser screen' },
      ctx.now,
      ctx.requestId,
    );
    const url = publicUrl(ctx.services, screen.public_id);
    const body: ScreenProvisioning = {
      screen: await viewOf(ctx.services, work.db, screen),
      public_url: url,
      provisioning_url: `${url}#provision=${token}`,
      expires_at: isoTime(expiresAt),
    };
    return reply.created(body, { headers: PRIVATE_NO_STORE, revision: screen.revision });
  },
);
