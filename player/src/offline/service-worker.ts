// The player's service worker (built on its own into /sw.js): keeps the player shell and the
// media of the manifests it played, so a screen reloaded or rebooted while the server is down
// still starts and plays. Media are cached whole under their media id and answered with single
// byte ranges; the runtime API itself is never cached (its answers carry short-lived authority).
/// <reference lib="webworker" />
import { coversWholeObject, parseByteRange } from './byte-ranges';
import { MEDIA_CACHE, MEDIA_ROUTE, mediaCacheKey } from './media-cache-policy';
import { filling, fillMediaCache, type MediaToFill, mayKeep } from './media-fill';

declare const self: ServiceWorkerGlobalScope;

const SHELL_CACHE = 'marquee-shell-v1';
const SHELL_URL = '/';
const NETWORK_ONLY = /^\/(runtime|api|content|problems|private-storage)\//;

self.addEventListener('install', (event) => {
  event.waitUntil(
    refreshShell()
      .catch(() => undefined)
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  const media = MEDIA_ROUTE.exec(url.pathname);
  if (media) return event.respondWith(serveMedia(request, media[1]!));
  if (NETWORK_ONLY.test(url.pathname) || url.pathname === '/sw.js') return;
  if (request.mode === 'navigate') return event.respondWith(serveShell(request));
  if (url.pathname.startsWith('/assets/')) return event.respondWith(serveAsset(request));
});

/** The page asks for every medium of a manifest it prepares, so the whole loop plays offline later. */
self.addEventListener('message', (event) => {
  const data = event.data as { type?: string; items?: MediaToFill[] } | null;
  if (data?.type !== 'cache-media' || !Array.isArray(data.items)) return;
  const items = data.items;
  event.waitUntil(
    caches.open(MEDIA_CACHE).then((cache) =>
      fillMediaCache(items, {
        cache,
        fetch: (url) => fetch(url, { credentials: 'same-origin', cache: 'no-store' }),
        free: async () => {
          const { quota, usage } = await navigator.storage.estimate();
          return quota === undefined || usage === undefined ? null : quota - usage;
        },
        origin: self.location.origin,
      }),
    ),
  );
});

/** The shell and the hashed assets it names, kept for the next start without a server. */
async function refreshShell(): Promise<Response> {
  const response = await fetch(SHELL_URL, { cache: 'no-cache' });
  if (!response.ok) throw new Error(`shell answered ${response.status}`);
  const html = await response.clone().text();
  const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  const cache = await caches.open(SHELL_CACHE);
  await cache.addAll(assets);
  await cache.put(SHELL_URL, response.clone());
  // Assets of older builds are not needed any more.
  const keep = new Set([SHELL_URL, ...assets].map((p) => new URL(p, self.location.origin).href));
  for (const key of await cache.keys()) if (!keep.has(key.url)) await cache.delete(key);
  return response;
}

/** Network first (a new build shows at once), the cached shell when the server is unreachable. */
async function serveShell(request: Request): Promise<Response> {
  try {
    const response = await fetch(request);
    if (response.ok && new URL(request.url).pathname === SHELL_URL) void refreshShell().catch(() => undefined);
    else if (response.ok)
      void caches
        .open(SHELL_CACHE)
        .then((c) => c.match(SHELL_URL))
        .then((cached) => (cached ? undefined : refreshShell()))
        .catch(() => undefined);
    return response;
  } catch (error) {
    const cached = await (await caches.open(SHELL_CACHE)).match(SHELL_URL);
    if (cached) return cached;
    throw error;
  }
}

async function serveAsset(request: Request): Promise<Response> {
  const cache = await caches.open(SHELL_CACHE);
  const cached = await cache.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok) await cache.put(request, response.clone());
  return response;
}

/**
 * Media: from the cache when held (any manifest's URL of the same media id), else from the network
 * with the element's own request (its Fetch Metadata intact), keeping a copy of a whole answer.
 */
async function serveMedia(request: Request, mediaId: string): Promise<Response> {
  const cache = await caches.open(MEDIA_CACHE);
  const key = mediaCacheKey(self.location.origin, mediaId);
  const cached = await cache.match(key);
  if (cached) return answerRange(cached, request.headers.get('range'));
  const response = await fetch(request);
  if (filling.has(mediaId)) return response;
  const whole =
    response.status === 200
      ? Number(response.headers.get('content-length')) || null
      : response.status === 206
        ? coversWholeObject(response.headers.get('content-range'))
        : null;
  if (whole !== null && response.body && mayKeep(response)) {
    const headers = new Headers({
      'Content-Type': response.headers.get('content-type') ?? 'application/octet-stream',
      'Content-Length': String(whole),
    });
    const etag = response.headers.get('etag');
    if (etag) headers.set('ETag', etag);
    void cache.put(key, new Response(response.clone().body, { status: 200, headers })).catch(() => undefined);
  }
  return response;
}

async function answerRange(cached: Response, range: string | null): Promise<Response> {
  const blob = await cached.blob();
  const answer = parseByteRange(range, blob.size);
  const type = cached.headers.get('content-type') ?? 'application/octet-stream';
  if (answer === 'whole') {
    return new Response(blob, {
      status: 200,
      headers: { 'Content-Type': type, 'Content-Length': String(blob.size), 'Accept-Ranges': 'bytes' },
    });
  }
  if (answer === 'unsatisfiable') {
    return new Response(null, {
      status: 416,
      headers: { 'Content-Range': `bytes */${blob.size}`, 'Accept-Ranges': 'bytes' },
    });
  }
  return new Response(blob.slice(answer.start, answer.end + 1), {
    status: 206,
    headers: {
      'Content-Type': type,
      'Content-Length': String(answer.end - answer.start + 1),
      'Content-Range': `bytes ${answer.start}-${answer.end}/${blob.size}`,
      'Accept-Ranges': 'bytes',
    },
  });
}
