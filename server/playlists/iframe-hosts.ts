// The server half of the iframe rule: a source on one of this installation's own hosts (player,
// control plane, dashboard, release hosts) is refused, and a host name that resolves to a private,
// loopback or link-local address is refused like the literal address would be. DNS runs before the
// write's transaction, bounded in time; a name that does not resolve (yet, or from here) is not
// refused, because the screen's network decides what it reaches.
import dns from 'node:dns';
import { iframeSrcServiceProblem, isNonPublicAddress, serviceHostsOf } from '../../sdk/contract/iframe-src';
import type { PageWriteV2, PlaylistWriteV2 } from '../../sdk/contract/playlist';
import { problem, type FieldError } from '../http/problem';
import type { Services } from '../services';

export type HostResolver = (host: string) => Promise<string[]>;

/** A slow resolver must not hold a playlist write for long. */
export const IFRAME_DNS_TIMEOUT_MS = 2000;

const systemResolver: HostResolver = async (host) => (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
const resolvers = new WeakMap<Services, HostResolver>();

/** Replaces the resolver (tests use a fixed table: no DNS lookups in tests). */
export function setHostResolver(services: Services, resolver: HostResolver): void {
  resolvers.set(services, resolver);
}

function iframeSources(doc: Pick<PlaylistWriteV2, 'pages'>): { field: string; src: string; host: string }[] {
  const found: { field: string; src: string; host: string }[] = [];
  doc.pages.forEach((page: PageWriteV2, i) => {
    const [path, placements] = page.type === 'adslot' ? [`pages.${i}.fallback`, page.fallback.placements] : [`pages.${i}`, page.placements];
    placements.forEach((p, j) => {
      if (p.content.type !== 'iframe') return;
      const host = new URL(p.content.src).hostname.replace(/\.$/, '');
      found.push({ field: `${path}.placements.${j}.content.src`, src: p.content.src, host });
    });
  });
  return found;
}

async function resolveBounded(resolver: HostResolver, host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), IFRAME_DNS_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([resolver(host).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkIframeHosts(services: Services, doc: Pick<PlaylistWriteV2, 'pages'>): Promise<void> {
  const sources = iframeSources(doc);
  if (sources.length === 0) return;
  const { config } = services;
  const service = serviceHostsOf({ control: config.controlOrigin, play: config.playOrigin, dashboard: config.dashboardOrigin, releaseTemplate: config.releaseOrigin });
  const own: FieldError[] = sources.flatMap((f) => {
    const why = iframeSrcServiceProblem(f.src, service);
    return why ? [{ field: f.field, code: 'service_origin', detail: why }] : [];
  });
  if (own.length > 0) throw problem('invalid_request', `${own[0]!.field}: ${own[0]!.detail}`, { errors: own });

  // Literal addresses were judged by the schema; names are resolved.
  const found = sources.filter((f) => !/^[\d.]+$/.test(f.host) && !f.host.startsWith('['));
  if (found.length === 0) return;
  const resolver = resolvers.get(services) ?? systemResolver;
  const hosts = [...new Set(found.map((f) => f.host))];
  const addresses = new Map(await Promise.all(hosts.map(async (h) => [h, await resolveBounded(resolver, h)] as const)));
  const errors: FieldError[] = found
    .filter((f) => addresses.get(f.host)!.some(isNonPublicAddress))
    .map((f) => ({ field: f.field, code: 'private_address', detail: `${f.host} resolves to a private, loopback or link-local address` }));
  if (errors.length > 0) throw problem('invalid_request', `${errors[0]!.field}: ${errors[0]!.detail}`, { errors });
}
