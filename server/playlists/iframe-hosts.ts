// The server half of the iframe rule: a source on one of this installation's own hosts (player,
// control plane, dashboard, release hosts) is refused, and a host name that resolves to a private,
// loopback or link-local address is refused like the literal address would be. DNS runs before the
// write's transaction, bounded in time; a name that does not resolve (yet, or from here, or in
// time) is not refused, because the screen's network decides what it reaches.
//
// One write must not occupy the process: names are resolved with c-ares (its own sockets, not
// libuv's four-thread pool that blob I/O and zlib share, and cancellable, unlike getaddrinfo),
// each distinct name once, a few at a time, at most MAX_IFRAME_HOSTS per document, and answers
// are remembered briefly so a repeated write resolves nothing again.
import { iframeSrcServiceProblem, isNonPublicAddress, serviceHostsOf } from '../../sdk/contract/iframe-src';
import type { PageWriteV2, PlaylistWriteV2 } from '../../sdk/contract/playlist';
import { problem, type FieldError } from '../problem';
import { serverCache } from '../caches';
import type { Services } from '../services';
import { IFRAME_DNS_TIMEOUT_MS, type HostResolver } from './host-resolver';

/** All the names of one write get this long together; names not answered by then are not refused. */
export const IFRAME_DNS_WRITE_DEADLINE_MS = 5000;
/** Names of one write resolved at once. */
export const IFRAME_DNS_CONCURRENCY = 8;
/**
 * Distinct iframe host names one playlist may have (a document naming more is refused): every
 * name is checked, and a screen showing more than 64 different sites in one loop is not signage.
 */
export const MAX_IFRAME_HOSTS = 64;
/** How long an answer is reused (a repeated write of the same document resolves nothing again). */
export const IFRAME_DNS_CACHE_MS = 60_000;
/** Names remembered per process (the oldest answer goes first). */
const IFRAME_DNS_CACHE_ENTRIES = 4096;

const answers = serverCache('iframe-dns', () => new Map<string, { addresses: string[]; until: number }>());

function iframeSources(doc: Pick<PlaylistWriteV2, 'pages'>): { field: string; src: string; host: string }[] {
  const found: { field: string; src: string; host: string }[] = [];
  doc.pages.forEach((page: PageWriteV2, i) => {
    const [path, placements] =
      page.type === 'adslot' ? [`pages.${i}.fallback`, page.fallback.placements] : [`pages.${i}`, page.placements];
    placements.forEach((p, j) => {
      if (p.content.type !== 'iframe') return;
      const host = new URL(p.content.src).hostname.replace(/\.$/, '');
      found.push({ field: `${path}.placements.${j}.content.src`, src: p.content.src, host });
    });
  });
  return found;
}

/** The name's addresses, or none if it did not answer within its time or the write's. */
async function resolveBounded(resolver: HostResolver, host: string, write: AbortSignal): Promise<string[]> {
  const signal = AbortSignal.any([write, AbortSignal.timeout(IFRAME_DNS_TIMEOUT_MS)]);
  if (signal.aborted) return [];
  const gaveUp = new Promise<string[]>((resolve) =>
    signal.addEventListener('abort', () => resolve([]), { once: true }),
  );
  return Promise.race([resolver(host, signal).catch(() => []), gaveUp]);
}

/** Resolves each name once, IFRAME_DNS_CONCURRENCY at a time, reusing recent answers. */
async function resolveAll(services: Services, hosts: string[]): Promise<Map<string, string[]>> {
  const resolver = services.hostResolver;
  const cache = answers(services);
  const now = services.clock.now();
  const found = new Map<string, string[]>();
  const pending: string[] = [];
  for (const host of hosts) {
    const cached = cache.get(host);
    if (cached && cached.until > now) found.set(host, cached.addresses);
    else pending.push(host);
  }
  const write = new AbortController();
  const deadline = setTimeout(() => write.abort(), IFRAME_DNS_WRITE_DEADLINE_MS);
  deadline.unref();
  const worker = async () => {
    for (let host = pending.shift(); host !== undefined; host = pending.shift()) {
      const addresses = await resolveBounded(resolver, host, write.signal);
      found.set(host, addresses);
      // Only answers are remembered: a name that did not resolve (or not in time) is asked again.
      if (addresses.length === 0) continue;
      cache.delete(host);
      cache.set(host, { addresses, until: services.clock.now() + IFRAME_DNS_CACHE_MS });
      if (cache.size > IFRAME_DNS_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(IFRAME_DNS_CONCURRENCY, pending.length) }, worker));
  } finally {
    clearTimeout(deadline);
    write.abort(); // stops whatever is still asked (nothing, unless the deadline passed)
  }
  return found;
}

export async function checkIframeHosts(services: Services, doc: Pick<PlaylistWriteV2, 'pages'>): Promise<void> {
  const sources = iframeSources(doc);
  if (sources.length === 0) return;
  const { config } = services;
  const service = serviceHostsOf({
    control: config.controlOrigin,
    play: config.playOrigin,
    dashboard: config.dashboardOrigin,
    releaseTemplate: config.releaseOrigin,
  });
  const own: FieldError[] = sources.flatMap((f) => {
    const why = iframeSrcServiceProblem(f.src, service);
    return why ? [{ field: f.field, code: 'service_origin', detail: why }] : [];
  });
  if (own.length > 0) throw problem('invalid_request', `${own[0]!.field}: ${own[0]!.detail}`, { errors: own });

  // Literal addresses were judged by the schema; names are resolved.
  const found = sources.filter((f) => !/^[\d.]+$/.test(f.host) && !f.host.startsWith('['));
  if (found.length === 0) return;
  const hosts = [...new Set(found.map((f) => f.host))];
  if (hosts.length > MAX_IFRAME_HOSTS) {
    const first = found.find((f) => f.host === hosts[MAX_IFRAME_HOSTS])!;
    const detail = `a playlist may name at most ${MAX_IFRAME_HOSTS} distinct iframe hosts; this is host ${MAX_IFRAME_HOSTS + 1}`;
    throw problem('invalid_request', `${first.field}: ${detail}`, {
      errors: [{ field: first.field, code: 'too_many_hosts', detail }],
    });
  }
  const addresses = await resolveAll(services, hosts);
  const errors: FieldError[] = found
    .filter((f) => addresses.get(f.host)!.some(isNonPublicAddress))
    .map((f) => ({
      field: f.field,
      code: 'private_address',
      detail: `${f.host} resolves to a private, loopback or link-local address`,
    }));
  if (errors.length > 0) throw problem('invalid_request', `${errors[0]!.field}: ${errors[0]!.detail}`, { errors });
}
