// Every cache a server keeps beside its services, named in one place. A cache holds only what can
// be rebuilt at any moment from the store, the configuration or a pure function (a replica that
// never saw an entry computes it again, and dropping one changes no answer). State that another
// replica must see is a seam in Services instead (services.ts), never a cache.
import type { Services } from './services';

export const CACHES = {
  'trusted-proxies': 'MARQUEE_TRUSTED_PROXIES as a prepared address list (http/client-ip.ts)',
  'runtime-cookies': 'runtime cookie values already verified, by their exact text (pairing/pairing-cookies.ts)',
  'runtime-session-rows':
    'runtime session rows as /content/v1 authenticates them, for 5 s, emptied by any write of a session or device credential, or of the screen columns or tenant status the row reads (pairing/pairing.auth.ts)',
  'compiled-queries':
    "hot-path queries compiled once, by SQL dialect, run with new values; process-wide, as the SQL text is the dialect's (store/compiled-once.ts)",
  'manifest-session-tags':
    "the session's digest in a manifest entity tag, by session; process-wide, as a pure digest is the same for every server (runtime/manifest.routes.ts)",
  'manifest-records':
    'stored manifest revisions as the byte routes check their grants, for 5 s, emptied by any update or delete of them (manifests/manifest-store.ts)',
  'parsed-manifests': 'stored manifest documents already parsed, by screen and revision (manifests/manifest-store.ts)',
  'event-reads': 'live event reads shared by the streams one notification wakes (events/event-stream.ts)',
  'native-life-writes':
    "when each native device key's last use was last written down, by key; dropping it costs one write (pairing/native.auth.ts)",
  'ready-media':
    'what the byte routes read of ready media, for READY_MEDIA_CACHE_MS, emptied by a media write of this process that sets one of those columns or its state (media/ready-media-cache.ts)',
  'named-content':
    'which content a minted manifest revision names (immutable), for 5 s, emptied by any write of those rows (runtime/content.routes.ts)',
  'player-shell':
    "the player's index.html with the pairing hint's meta tag, by file, rebuilt when its mtime, size or the hint changes; process-wide (player-host.ts)",
  'iframe-dns': 'answers of iframe host lookups, for IFRAME_DNS_CACHE_MS (playlists/iframe-hosts.ts)',
} as const;

export type CacheName = keyof typeof CACHES;

/**
 * A cache of one server, built on first use and forgotten with the server. It belongs to the
 * server's services, or to one of them (its keys, its store's Db) when that is all it derives from.
 */
export function serverCache<T, Owner extends object = Services>(
  name: CacheName,
  create: (owner: Owner) => T,
): (owner: Owner) => T {
  void name; // the name documents (CACHES); it keys nothing
  const instances = new WeakMap<Owner, T>();
  return (owner) => {
    let instance = instances.get(owner);
    if (instance === undefined) instances.set(owner, (instance = create(owner)));
    return instance;
  };
}
