// Event cursors: opaque, tamper-evident strings naming a position in one stream scope. The MAC binds
// the scope, so a cursor of another tenant, another screen, or of a tenant stream on a screen stream
// (or the reverse) is simply invalid, exactly like a forged one.
import { safeEqual, type Keys } from '../keys';

/** The streams a cursor can belong to. Tenant streams carry all of a tenant's events; screen streams one screen's. */
export type StreamScope = { kind: 'tenant'; tenantId: string } | { kind: 'screen'; tenantId: string; screenId: string };

/** Also the key of the scope's retention watermark. */
export function scopeKey(scope: StreamScope): string {
  return scope.kind === 'tenant' ? `tenant:${scope.tenantId}` : `screen:${scope.screenId}`;
}

const CURSOR_FORMAT = 'v1';
/** 128 bits of HMAC-SHA-256 (22 base64url characters) are plenty to make forgery hopeless. */
const MAC_CHARS = 22;
const CURSOR_PATTERN = /^(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_-]{22})$/;

export class EventCursors {
  constructor(private readonly keys: Keys) {}

  encode(scope: StreamScope, position: number): string {
    return `${position}.${this.mac(scope, position)}`;
  }

  /** The position a cursor names in this scope, or undefined when it is malformed, forged or another scope's. */
  decode(scope: StreamScope, cursor: string): number | undefined {
    const match = CURSOR_PATTERN.exec(cursor);
    if (!match) return undefined;
    const position = Number(match[1]);
    if (!Number.isSafeInteger(position)) return undefined;
    return safeEqual(this.mac(scope, position), match[2]!) ? position : undefined;
  }

  private mac(scope: StreamScope, position: number): string {
    return this.keys.sign('event-cursor', `${CURSOR_FORMAT}|${scopeKey(scope)}|${position}`).slice(0, MAC_CHARS);
  }
}
