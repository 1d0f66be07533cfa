// The client's IP address, the key of every per-IP rate budget. Behind reverse proxies the socket
// peer is the proxy, so X-Forwarded-For is read, but only the hops that trusted proxies
// (MARQUEE_TRUSTED_PROXIES) appended: a client can write anything to the left of those.
import { serverCache } from '../caches';
import type { AnyContext } from './route';
import { TrustedProxies } from './trusted-proxies';

const trustedProxiesOf = serverCache(
  'trusted-proxies',
  (services) => new TrustedProxies(services.config.trustedProxies),
);

/** The client's IP address as every per-IP budget keys it. */
export function clientIp(ctx: AnyContext): string {
  return trustedProxiesOf(ctx.services).clientIp(ctx.req);
}

/** Whether the request reached this server through a trusted proxy (its socket peer is one). */
export function viaTrustedProxy(ctx: AnyContext): boolean {
  return trustedProxiesOf(ctx.services).peerIsTrusted(ctx.req);
}

/**
 * Whether this connection comes from a trusted proxy (listed, or on the proxy's Unix socket): the
 * per-address connection cap exempts them.
 */
export function isTrustedProxySocket(services: AnyContext['services'], socket: { remoteAddress?: string }): boolean {
  return trustedProxiesOf(services).socketIsTrusted(socket);
}
