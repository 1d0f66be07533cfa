// Which reverse proxies may name the client: MARQUEE_TRUSTED_PROXIES as a prepared address list.
// Pure (node:net only), so the configuration can validate its entries without the HTTP layer.
import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';

/** An IPv4 address or an IPv6 address, optionally with a CIDR prefix length (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrRange(text: string): boolean {
  const [address, prefix, extra] = text.split('/');
  const family = net.isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** `::ffff:192.0.2.1` (IPv4 on a dual-stack socket) is 192.0.2.1: one client, one budget key. */
export function normalizedAddress(address: string): string {
  return /^::ffff:[0-9.]+$/i.test(address) && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/** What the walk reads of a request: its socket peer and its X-Forwarded-For header. */
export interface ForwardedRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string };
}

/** The answer of peerIsTrusted, on the socket it is about. */
const PEER_TRUSTED = Symbol('marquee.peer-trusted');

type MarkedSocket = ForwardedRequest['socket'] & { [PEER_TRUSTED]?: boolean };

/**
 * Marks a connection accepted on the proxy's Unix socket (MARQUEE_PROXY_SOCKET, D-389): its peer is
 * the trusted proxy whatever MARQUEE_TRUSTED_PROXIES lists, as the socket file's permissions already
 * chose who may connect. Such a socket has no address of its own.
 */
export function markProxySocket(socket: object): void {
  (socket as MarkedSocket)[PEER_TRUSTED] = true;
}

export class TrustedProxies {
  private readonly list = new net.BlockList();
  readonly empty: boolean;

  constructor(ranges: readonly string[]) {
    this.empty = ranges.length === 0;
    for (const range of ranges) {
      const [address, prefix] = range.split('/') as [string, string | undefined];
      const family = net.isIPv4(address) ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(prefix), family);
    }
  }

  /**
   * Whether the socket peer itself is a trusted proxy (the request came through one). Kept on the
   * socket: its peer never changes, and the byte routes ask on every request of a keep-alive connection.
   */
  peerIsTrusted(req: ForwardedRequest): boolean {
    return this.socketIsTrusted(req.socket);
  }

  /** Whether this connection's peer is a trusted proxy: listed, or marked by markProxySocket. */
  socketIsTrusted(socket: ForwardedRequest['socket']): boolean {
    const marked = socket as MarkedSocket;
    if (this.empty) return marked[PEER_TRUSTED] === true;
    return (marked[PEER_TRUSTED] ??= this.trusts(normalizedAddress(socket.remoteAddress ?? '')));
  }

  trusts(address: string): boolean {
    const family = net.isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /**
   * The socket peer, unless it is a trusted proxy: then the right-most X-Forwarded-For hop that is
   * not one (each proxy appends the address it received the request from). A malformed hop ends
   * the walk at the trusted proxy that passed it on, so garbage can never mint new budget keys.
   */
  clientIp(req: ForwardedRequest): string {
    let client = normalizedAddress(req.socket.remoteAddress ?? 'unknown');
    if (!this.peerIsTrusted(req)) return client;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalizedAddress(hops[i]!);
      if (net.isIP(hop) === 0) return client;
      client = hop;
      if (!this.trusts(hop)) return client;
    }
    return client;
  }
}
