// Browser links on the play origin (a TV's browser) and their claim on the control plane (an agent).
// The browser's routes take only the browser-link cookie (HttpOnly, SameSite=Strict) and never
// show the provisioning link as data: only the continue step's 303 carries it, in its Location.
import {
  BROWSER_LINK_SETUP_PATH,
  BrowserLinkClaimRequest,
  type BrowserLinkClaim,
} from '../../sdk/contract/browser-links';
import { projectBearer } from '../http/auth';
import { clientIp } from '../http/client-ip';
import {
  eventStream,
  mutation,
  query,
  reply,
  type AnyContext,
  type Authenticator,
  type Principal,
} from '../http/route';
import { openSse } from '../http/sse';
import { problem } from '../problem';
import { publicUrl } from '../screens/screens';
import {
  BROWSER_LINK_TTL_MS,
  browserLinkChannel,
  claimBrowserLink,
  deliveryOf,
  liveLink,
  startBrowserLink,
  statusOf,
} from './browser-links';
import type { BrowserLinkTable } from './browser-links.tables';
import { playerOrigin } from './pairing.auth';
import { readCookie, setCookie } from './pairing-cookies';
import { renderSetupPage } from './setup-page';

export const BROWSER_LINK_COOKIE = '__Host-marquee-browser-link';
const NO_STORE = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };
/** The peer's budgets: starts per client IP a minute; claims per project, per code and per IP an hour. */
const STARTS_PER_IP_PER_MINUTE = 20;
const CLAIMS_PER_PROJECT_PER_HOUR = 20;
const CLAIMS_PER_CODE_PER_HOUR = 5;
const CLAIMS_PER_IP_PER_HOUR = 10;

interface LinkCookieValue {
  /** browser link id */
  l: string;
  /** expiry, ms */
  e: number;
}

interface BrowserLinkPrincipal extends Principal {
  link: BrowserLinkTable;
}

function cookieLinkId(ctx: AnyContext): string | undefined {
  const value = ctx.services.keys.unseal<LinkCookieValue>(
    'browser-link-cookie',
    readCookie(ctx.req, BROWSER_LINK_COOKIE),
  );
  return value && value.e > ctx.now ? value.l : undefined;
}

/** The browser-link cookie of a link still of use (issued, or claimed within its delivery window). */
const browserLinkCookie: Authenticator<BrowserLinkPrincipal> = {
  realm: 'none',
  async authenticate(ctx) {
    await playerOrigin.authenticate(ctx);
    const id = cookieLinkId(ctx);
    const link = id === undefined ? undefined : await liveLink(ctx.services.store.db, id, ctx.now);
    if (!link) {
      throw problem('link_expired', 'this browser has no current setup code; open /setup to get one', {
        headers: NO_STORE,
      });
    }
    return { realm: 'none', scope: `browser-link:${link.id}`, link };
  },
};

const wantsHtml = (ctx: AnyContext) => /\btext\/html\b/.test(ctx.req.headers.accept ?? '');

/** POST /runtime/v1/browser-links: this browser's setup code (the one it holds while unclaimed). */
export const startLink = mutation(
  {
    auth: playerOrigin,
    rateLimits: (ctx) => [
      { name: 'browser-link-session-ip', limit: STARTS_PER_IP_PER_MINUTE, windowSeconds: 60, key: clientIp(ctx) },
    ],
  },
  async (ctx, work) => {
    const { row, reused } = await startBrowserLink(work, { current: cookieLinkId(ctx), ip: clientIp(ctx) }, ctx.now);
    if (!reused) {
      const cookie = setCookie(
        BROWSER_LINK_COOKIE,
        ctx.services.keys.seal('browser-link-cookie', { l: row.id, e: row.expires_at } satisfies LinkCookieValue),
        BROWSER_LINK_TTL_MS,
      );
      work.afterCommit(() => ctx.res.append('Set-Cookie', cookie));
    }
    // A form post (no JavaScript on the TV) goes on to the setup page, which shows the code.
    if (wantsHtml(ctx)) return { status: 303, headers: { ...NO_STORE, Location: BROWSER_LINK_SETUP_PATH } };
    return reply.created(statusOf(row), { headers: NO_STORE });
  },
);

/** GET /runtime/v1/browser-links: 202 while waiting for the claim, 200 once claimed. */
export const linkStatus = query({ auth: browserLinkCookie }, async (ctx) => {
  const status = statusOf(ctx.principal.link);
  return status.status === 'issued'
    ? reply.accepted(status, { headers: NO_STORE })
    : reply.ok(status, { headers: NO_STORE });
});

/** GET /runtime/v1/browser-links/events: the status now, and the claim when it comes; then the stream ends. */
export const linkEvents = eventStream({ auth: browserLinkCookie }, async (ctx) => {
  const { services } = ctx;
  const id = ctx.principal.link.id;
  const stream = openSse(ctx.res, { lifecycle: services.lifecycle });
  let sent = ctx.principal.link.state;
  stream.send({ event: 'browser_link', id: sent, data: statusOf(ctx.principal.link) });
  if (sent !== 'issued') return stream.close();
  let checks = Promise.resolve();
  const check = async () => {
    if (stream.closed) return;
    const link = await liveLink(services.store.db, id, services.clock.now());
    if (link && link.state !== sent) {
      sent = link.state;
      stream.send({ event: 'browser_link', id: sent, data: statusOf(link) });
      stream.close();
    }
  };
  const unsubscribe = services.notifier.subscribe(browserLinkChannel(id), () => {
    checks = checks.then(check).catch(() => stream.close());
  });
  stream.onClose(unsubscribe);
  await check();
  const timer = setTimeout(
    () => stream.close(),
    Math.max(0, Math.min(ctx.principal.link.expires_at - services.clock.now(), 2 ** 31 - 1)),
  );
  timer.unref();
  stream.onClose(() => clearTimeout(timer));
});

/** GET /runtime/v1/browser-links/continue: a navigation; 303 to the screen's provisioning link. */
export const continueLink = query({ auth: browserLinkCookie }, async (ctx) => {
  const location = deliveryOf(ctx.services, ctx.principal.link, ctx.now);
  ctx.res.status(303).set({ ...NO_STORE, Location: location });
  ctx.res.end();
});

/** GET /setup: the page a TV shows, without JavaScript: a button for a code, then the code, refreshed. */
export const setupPage = query({ auth: playerOrigin }, async (ctx) => {
  const id = cookieLinkId(ctx);
  const link = id === undefined ? undefined : await liveLink(ctx.services.store.db, id, ctx.now);
  const html = renderSetupPage(link ? statusOf(link) : undefined);
  ctx.res.status(200).set({
    'Cache-Control': 'no-store',
    // Not no-referrer: under it a browser sends `Origin: null` with the form post, which the
    // runtime plane's same-origin check must refuse. The page's own URL holds nothing secret.
    'Referrer-Policy': 'same-origin',
    'Content-Type': 'text/html; charset=utf-8',
    'X-Robots-Tag': 'noindex, nofollow',
    'Content-Security-Policy':
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    'X-Frame-Options': 'DENY',
  });
  ctx.res.end(ctx.req.method === 'HEAD' ? undefined : html);
});

/** POST /api/v1/account/browser-links/claim: a pairing_pending screen for the browser showing `code`. */
export const claimLink = mutation(
  {
    auth: projectBearer,
    area: 'screens',
    body: BrowserLinkClaimRequest,
    idempotency: 'required',
    rateLimits: (ctx) => {
      const code = BrowserLinkClaimRequest.shape.code.safeParse((ctx.body as { code?: unknown } | undefined)?.code);
      return [
        {
          name: 'browser-link-claim-account',
          limit: CLAIMS_PER_PROJECT_PER_HOUR,
          windowSeconds: 3600,
          key: ctx.principal.tenantId,
        },
        ...(code.success
          ? [{ name: 'browser-link-claim-token', limit: CLAIMS_PER_CODE_PER_HOUR, windowSeconds: 3600, key: code.data }]
          : []),
        { name: 'browser-link-claim-ip', limit: CLAIMS_PER_IP_PER_HOUR, windowSeconds: 3600, key: clientIp(ctx) },
      ];
    },
  },
  async (ctx, work) => {
    const claim: BrowserLinkClaim = await claimBrowserLink(
      ctx.services,
      work,
      {
        tenantId: ctx.principal.tenantId,
        code: ctx.body.code,
        label: ctx.body.label ?? 'Browser screen',
        requestId: ctx.requestId,
      },
      ctx.now,
      (publicId) => publicUrl(ctx.services, publicId),
    );
    return reply.created(claim, { headers: { 'Cache-Control': 'private, no-store' } });
  },
);
