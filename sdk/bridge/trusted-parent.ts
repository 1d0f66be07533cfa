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

/**
 * Asks the frame's own release host which player it trusts: same origin, with its cookies (the
 * answer needs the release-grant cookie), never from a cache. Null on any failure.
 */
export async function fetchTrustedParentOrigin(
  win: Window,
  timeoutMs = PLAYER_ORIGIN_TIMEOUT_MS,
): Promise<string | null> {
  if (win.location.protocol !== 'http:' && win.location.protocol !== 'https:') return null;
  const abort = new AbortController();
  const timer = win.setTimeout(() => abort.abort(), timeoutMs);
  try {
    const response = await win.fetch(PLAYER_ORIGIN_PATH, {
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
      headers: { accept: 'application/json' },
      signal: abort.signal,
    });
    if (response.status !== 200 || !/^application\/json\s*(;|$)/i.test(response.headers.get('content-type') ?? ''))
      return null;
    const text = await response.text();
    if (text.length > ANSWER_MAX_CHARACTERS) return null;
    return playerOriginOf(JSON.parse(text));
  } catch {
    return null;
  } finally {
    win.clearTimeout(timer);
  }
}
