// The dashboard's fetch for the SDK's typed client: the client speaks /api/v1 paths; on the
// dashboard origin the same routes (the same handlers and shapes) live under /dashboard/v1 behind
// the session cookie. This fetch moves the path, sends the cookie (same origin), adds the session's
// CSRF token to changes, and tells the app when the session is gone.
export const API_PREFIX = '/api/v1/';
export const DASHBOARD_PREFIX = '/dashboard/v1/';
const CSRF_HEADER = 'Marquee-CSRF-Token';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface DashboardFetchOptions {
  /** The current session's csrf_token ('' before sign-in). */
  csrfToken: () => string;
  /** Told of a 401 from a session route: the session ended (signed out, revoked, expired). */
  onUnauthorized?: () => void;
  fetch?: typeof fetch;
}

/** The dashboard path of an /api/v1 URL on this origin; other URLs unchanged. */
export function dashboardUrl(input: string | URL, origin: string): string {
  const url = new URL(input, origin);
  if (url.origin === origin && url.pathname.startsWith(API_PREFIX))
    url.pathname = DASHBOARD_PREFIX + url.pathname.slice(API_PREFIX.length);
  return url.href;
}

export function createDashboardFetch(origin: string, options: DashboardFetchOptions): typeof fetch {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  return async (input, init = {}) => {
    const raw = input instanceof Request ? input.url : input;
    const url = dashboardUrl(raw, origin);
    const sameOrigin = new URL(url).origin === origin;
    const headers = new Headers(init.headers);
    const method = (init.method ?? 'GET').toUpperCase();
    if (sameOrigin && !SAFE.has(method) && options.csrfToken()) headers.set(CSRF_HEADER, options.csrfToken());
    const response = await base(url, {
      ...init,
      headers,
      // Never a cookie to another origin (an S3 upload URL); the session cookie to our own.
      credentials: sameOrigin ? 'same-origin' : 'omit',
    });
    if (response.status === 401 && sameOrigin && new URL(url).pathname.startsWith(DASHBOARD_PREFIX))
      options.onUnauthorized?.();
    return response;
  };
}
