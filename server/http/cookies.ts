// Reading request cookies, one way for every realm. A name sent more than once is ambiguous (another
// page may have planted a copy) and is treated as absent rather than guessed.
import type { IncomingHttpHeaders } from 'node:http';

/** The value of cookie `name` in a Cookie header, or undefined when absent or sent more than once. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    if (found !== undefined) return undefined;
    found = part.slice(eq + 1).trim();
  }
  return found;
}

/** The named cookie of the request (see cookieValue). */
export function readCookie(req: { headers: IncomingHttpHeaders }, name: string): string | undefined {
  return cookieValue(req.headers.cookie, name);
}
