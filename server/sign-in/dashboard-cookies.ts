// The dashboard's cookies: the session cookie and the signup cookie, both `__Host-` (Secure, Path=/,
// no Domain: the dashboard host alone ever receives them), HttpOnly and SameSite=Strict. Each value
// is 256 random bits naming a server-side row by its hash, so a row revokes its cookie.
import type { AnyContext } from '../http/route';
import { randomToken, sha256Hex } from '../keys';

/** The signed-in person's session and selected project. */
export const SESSION_COOKIE = '__Host-marquee-dashboard';
/** Binds link-invitation signup, address verification, credential options and acceptance; and resets. */
export const SIGNUP_COOKIE = '__Host-marquee-signup';

/** A session unused this long ends (idle expiry): an unattended browser does not stay signed in. */
export const SESSION_IDLE_MS = 60 * 60_000;
/** Whatever its use, a session ends a day after it began (the reference's twenty-four-hour session row). */
export const SESSION_ABSOLUTE_MS = 24 * 3600_000;
/** last_seen_at is written at most this often per session (idle expiry is this coarse). */
export const SESSION_TOUCH_EVERY_MS = 60_000;
/** A signup or reset in progress: enough to verify an address and make a passkey. */
export const SIGNUP_TTL_MS = 30 * 60_000;

export interface CookieToken {
  token: string;
  hash: string;
}

export function newCookieToken(): CookieToken {
  const token = randomToken(32);
  return { token, hash: sha256Hex(token) };
}

export function setDashboardCookie(name: string, token: string, maxAgeMs: number): string {
  return `${name}=${token}; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}; Path=/; Secure; HttpOnly; SameSite=Strict`;
}

export function clearDashboardCookie(name: string): string {
  return `${name}=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Strict`;
}

/** Set-Cookie lines appended once the change committed (a failed request sets no cookie). */
export function setCookies(ctx: AnyContext, cookies: (string | undefined)[]): void {
  for (const cookie of cookies) if (cookie) ctx.res.append('Set-Cookie', cookie);
}
