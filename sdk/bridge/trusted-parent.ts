// Which parent origin an application frame trusts: the one its release host names. Every release
// host answers `GET /.marquee/player-origin` itself (archives cannot hold `.marquee/`), so a page
// of a release learns its player from the server, wherever release hosts live; they must be another
// site than the player, which no rule over host names could express. A page anywhere else (opened
// directly, previewed, embedded elsewhere) gets no such answer, trusts nobody and stays inert.
import { PLAYER_ORIGIN_PATH } from '../contract/archive-paths';

/** The answer is a few dozen bytes; anything much longer is not the server's. */
const ANSWER_MAX_CHARACTERS = 4096;
/** A release host that does not answer within this is treated as naming no player. */
export const PLAYER_ORIGIN_TIMEOUT_MS = 10_000;

/** The origin in a `/.marquee/player-origin` answer, or null unless it is exactly one http(s) origin. */
export function playerOriginOf(answer: unknown): string | null {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return null;
  const value = (answer as Record<string, unknown>).player_origin;
  if (typeof value !== 'string') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // Exactly an origin: no path, query, fragment or credentials, in its serialized form.
  return url.origin === value ? value : null;
}

/** Waits before asking again after a transient failure (doubling), within PLAYER_ORIGIN_TIMEOUT_MS. */
const RETRY_FIRST_MS = 250;

/**
 * Asks the frame's own release host which player it trusts: same origin, with its cookies (the
 * answer needs the release-grant cookie), never from a cache. A transient failure (no answer, a
 * 5xx, a 429) is asked again with backoff until `timeoutMs` is up; any other answer counts at once.
 * Null when the host names no player, or never answered.
 */
export async function fetchTrustedParentOrigin(
  win: Window,
  timeoutMs = PLAYER_ORIGIN_TIMEOUT_MS,
): Promise<string | null> {
  if (win.location.protocol !== 'http:' && win.location.protocol !== 'https:') return null;
  const abort = new AbortController();
  const timer = win.setTimeout(() => abort.abort(), timeoutMs);
  try {
    for (let wait = RETRY_FIRST_MS; ; wait *= 2) {
      const answer = await askOnce(win, abort.signal);
      if (answer !== 'transient') return answer;
      if (!(await pause(win, wait, abort.signal))) return null;
    }
  } finally {
    win.clearTimeout(timer);
  }
}

/** Waits `ms`; false at once when `signal` aborts (before or meanwhile). */
function pause(win: Window, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      win.clearTimeout(timer);
      resolve(false);
    };
    const timer = win.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** One request: the origin named, null for an answer that names none, 'transient' for one worth asking again. */
async function askOnce(win: Window, signal: AbortSignal): Promise<string | null | 'transient'> {
  let response: Response;
  try {
    response = await win.fetch(PLAYER_ORIGIN_PATH, {
      credentials: 'same-origin',
      cache: 'no-store',
      // A redirect names no player: not followed, its opaque answer (status 0) counts at once.
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal,
    });
  } catch {
    // A network failure, or the deadline (the caller sees the abort).
    return 'transient';
  }
  if (response.status >= 500 || response.status === 429) return 'transient';
  try {
    if (response.status !== 200 || !/^application\/json\s*(;|$)/i.test(response.headers.get('content-type') ?? ''))
      return null;
    const text = await response.text();
    if (text.length > ANSWER_MAX_CHARACTERS) return null;
    return playerOriginOf(JSON.parse(text));
  } catch {
    return null;
  }
}
