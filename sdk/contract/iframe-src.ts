// Which iframe sources a playlist may embed: absolute https URLs on public hosts. A screen sits on
// somebody's network, so a playlist must not point it at that network's private services.
// Pure (no DNS): the server adds a resolution check where it can afford one.

export const IFRAME_SRC_MAX = 2048;

/** Why `src` may not be embedded, or undefined when it may. */
export function iframeSrcProblem(src: string): string | undefined {
  if (src.length > IFRAME_SRC_MAX) return `must be at most ${IFRAME_SRC_MAX} characters`;
  if (!/^https:\/\//i.test(src)) return 'must be an absolute https:// URL';
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return 'must be an absolute https:// URL';
  }
  if (url.protocol !== 'https:') return 'must be an absolute https:// URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  if (host === '') return 'must name a host';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point at localhost';
  if (host.endsWith('.local')) return 'must not point at a .local (mDNS) host';
  if (isNonPublicAddress(host)) return 'must not point at a private, loopback or link-local address';
  return undefined;
}

/** The hosts an installation of Marquee answers on, which no iframe placement may show. */
export interface ServiceHosts {
  /** Host names of the control, play and dashboard origins. */
  hosts: string[];
  /** The domain release hosts are labels of (`release.example.com` for `https://{label}.release.example.com`). */
  releaseDomain: string;
}

/**
 * Marquee's own hosts from its public origins and the release origin template
 * (`https://{label}.release.example.com`). Ports do not count: cookies are not kept per port.
 */
export function serviceHostsOf(origins: {
  control: string;
  play: string;
  dashboard: string;
  releaseTemplate: string;
}): ServiceHosts {
  const hostOf = (origin: string) => new URL(origin).hostname.replace(/\.$/, '').toLowerCase();
  return {
    hosts: [origins.control, origins.play, origins.dashboard].map(hostOf),
    releaseDomain: hostOf(origins.releaseTemplate.replace('{label}', 'label')).replace(/^label\./, ''),
  };
}

/**
 * Why `src` points at Marquee itself, or undefined. A frame on the player's host would run a
 * second player with the screen's own cookies (same-site, so they are sent), and one on the control
 * plane, the dashboard or a release host shows Marquee's own pages and apps outside their rules.
 * Call it on a src iframeSrcProblem accepted.
 */
export function iframeSrcServiceProblem(src: string, service: ServiceHosts): string | undefined {
  let host: string;
  try {
    host = new URL(src).hostname.replace(/\.$/, '').toLowerCase();
  } catch {
    return undefined;
  }
  if (service.hosts.includes(host))
    return 'must not point at this Marquee service (its player, control plane or dashboard)';
  // What the template can name: one label in place of {label} (release host labels are digests, so any label counts).
  const dot = host.indexOf('.');
  if (dot > 0 && host.slice(dot + 1) === service.releaseDomain)
    return 'must not point at a release host of this Marquee service';
  return undefined;
}

/**
 * True for IP literals (as the WHATWG URL parser serializes them: dotted IPv4, bracketed IPv6)
 * that are not publicly routable: private, loopback, link-local, unspecified, shared (CGNAT),
 * multicast and reserved ranges, including IPv4-mapped IPv6 forms of those.
 */
export function isNonPublicAddress(host: string): boolean {
  const v4 = parseIpv4(host);
  if (v4) return isNonPublicIpv4(v4);
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const v6 = parseIpv6(bare);
  if (v6) return isNonPublicIpv6(v6);
  return false;
}

function parseIpv4(host: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : undefined;
}

function isNonPublicIpv4([a, b]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 || // private
    a === 127 || // loopback
    (a === 100 && b! >= 64 && b! <= 127) || // shared address space (CGNAT)
    (a === 169 && b === 254) || // link-local
    (a === 172 && b! >= 16 && b! <= 31) || // private
    (a === 192 && b === 168) || // private
    a! >= 224 // multicast, reserved, broadcast
  );
}

/** Eight 16-bit groups, or undefined when not an IPv6 literal. */
function parseIpv6(text: string): number[] | undefined {
  if (!text.includes(':') || !/^[0-9a-f:.]+$/i.test(text)) return undefined;
  let tail: number[] = [];
  let body = text;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseIpv4(dotted[2]!);
    if (!v4) return undefined;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    body = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string) =>
    s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const known = head.length + rest.length + tail.length;
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  if (halves.length === 1 && known !== 8) return undefined;
  if (halves.length === 2 && known > 7) return undefined;
  return [...head, ...new Array(8 - known).fill(0), ...rest, ...tail];
}

function isNonPublicIpv6(g: number[]): boolean {
  const [g0, , , , , g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const allZeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (allZeroTo(7) && (g7 === 0 || g7 === 1)) return true; // unspecified, loopback
  if (allZeroTo(5) && g5 === 0xffff) return isNonPublicIpv4([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]); // IPv4-mapped
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local (private)
  if ((g0 & 0xffc0) === 0xfe80) return true; // link-local
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  return false;
}
