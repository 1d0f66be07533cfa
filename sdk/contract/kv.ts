// Application key/value storage: wire shapes shared by the owner routes, the runtime routes and the
// app bridge. Kept free of zod so the bridge script that apps include stays small.

/** Keys are 1 to 256 UTF-8 bytes; the `_marquee/` prefix is reserved for the service. */
export const KV_KEY_MAX_BYTES = 256;
export const KV_RESERVED_PREFIX = '_marquee/';
/** Standard base64 of at most 1 MiB of value bytes. */
export const KV_VALUE_BASE64_MAX = 1_398_104;
export const KV_CONTENT_TYPE_MAX = 127;
export const KV_LIST_MAX_ITEMS = 200;
/** A list cursor is a key's base64url (≤ 344 characters for 256 bytes); 400 leaves room. */
export const KV_LIST_CURSOR_MAX = 400;
/** Our limit: live keys per application (values are also bounded by the content quota). */
export const KV_MAX_ENTRIES_PER_APPLICATION = 10_000;
/** Runtime KV header carrying the placement capability (spec: Svc-Placement-Capability). */
export const PLACEMENT_CAPABILITY_HEADER = 'Marquee-Placement-Capability';

export interface KVWrite {
  value_base64: string;
  content_type: string;
}

export interface KVEntry {
  application_id: string;
  key: string;
  value_base64: string;
  content_type: string;
  bytes: number;
  sha256: string;
  revision: number;
}

export interface KVSummary {
  application_id: string;
  key: string;
  content_type: string;
  bytes: number;
  sha256: string;
  revision: number;
  created_at?: string;
  updated_at?: string;
}

export interface KVList {
  /** At most 200 entries, in UTF-8 byte order of their keys. */
  items: KVSummary[];
  /** Our addition: pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

/**
 * Keys that are dot segments: a URL parser removes them from a path (`…/kv/.` is the list,
 * `…/kv/..` the application), whether they are sent as dots or percent-encoded, so no client could
 * address them. They are refused rather than encoded some other way.
 */
const DOT_SEGMENT_KEYS = new Set(['.', '..']);

/** Why `key` is not a usable key, or null. */
export function kvKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'must be a non-empty string';
  if (hasLoneSurrogate(key)) return 'must be well-formed Unicode (no lone surrogate), so that it has a UTF-8 form';
  if (new TextEncoder().encode(key).length > KV_KEY_MAX_BYTES) return `must be at most ${KV_KEY_MAX_BYTES} UTF-8 bytes`;
  if (key.startsWith(KV_RESERVED_PREFIX)) return `must not start with the reserved prefix ${KV_RESERVED_PREFIX}`;
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'must not contain control characters';
  if (DOT_SEGMENT_KEYS.has(key)) return 'must not be "." or "..", which URLs treat as path steps';
  return null;
}

/** String.prototype.isWellFormed, spelled out: apps run the SDK in browsers older than it. */
function hasLoneSurrogate(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return true;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return true;
    }
  }
  return false;
}

/** An application's entries on the control plane (owner) or the runtime plane (its placements). */
export function kvCollectionPath(plane: 'owner' | 'runtime', applicationId: string): string {
  const app = encodeURIComponent(applicationId);
  return plane === 'owner' ? `/api/v1/applications/${app}/kv` : `/runtime/v1/apps/${app}/kv`;
}

/** A key the server would refuse, caught before any request is made. */
export class KvKeyError extends Error {
  constructor(readonly detail: string) {
    super(`key: ${detail}`);
    this.name = 'KvKeyError';
  }
}

/**
 * The path of one entry: the collection path and the key as one percent-encoded segment. Every
 * client builds entry paths here; a key kvKeyProblem refuses throws KvKeyError instead of becoming
 * a path that means something else.
 */
export function kvKeyPath(collection: string, key: string): string {
  const why = kvKeyProblem(key);
  if (why) throw new KvKeyError(why);
  return `${collection}/${encodeURIComponent(key)}`;
}

/** Content types are printable ASCII, 1 to 127 characters. */
export function kvContentTypeProblem(contentType: unknown): string | null {
  if (typeof contentType !== 'string' || !/^[\x21-\x7e][\x20-\x7e]*$/.test(contentType))
    return 'must be printable ASCII';
  if (contentType.length > KV_CONTENT_TYPE_MAX) return `must be at most ${KV_CONTENT_TYPE_MAX} characters`;
  return null;
}

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Why `value` is not canonical standard base64 of at most 1 MiB, or null. */
export function kvValueProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string of standard base64';
  if (value.length > KV_VALUE_BASE64_MAX) return `must be at most ${KV_VALUE_BASE64_MAX} characters (1 MiB of value)`;
  if (!STANDARD_BASE64.test(value)) return 'must be standard base64 with padding (A-Z a-z 0-9 + /, =)';
  return null;
}
