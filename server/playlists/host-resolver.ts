// How the iframe rule resolves host names (iframe-hosts.ts): c-ares by default, a fixed table in
// tests (ServerOptions.hostResolver), so no test depends on the network.
import dns from 'node:dns';

/** Resolves a name to its addresses; stops (and may reject) once `signal` aborts. */
export type HostResolver = (host: string, signal: AbortSignal) => Promise<string[]>;

/** A slow resolver must not hold a playlist write for long: each name gets this long. */
export const IFRAME_DNS_TIMEOUT_MS = 2000;

/** c-ares queries for A and AAAA; `cancel()` really stops them. */
export const systemResolver: HostResolver = async (host, signal) => {
  const resolver = new dns.promises.Resolver({ timeout: IFRAME_DNS_TIMEOUT_MS, tries: 1 });
  const cancel = () => resolver.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    return answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
  } finally {
    signal.removeEventListener('abort', cancel);
  }
};
