// Application key/value storage: wire shapes shared by the owner routes, the runtime routes and the
// app bridge. Kept free of zod so the bridge script that apps include stays small.

/** Keys are 1 to 256 UTF-8 bytes; the `_marquee/` prefix is reserved for the service. */
export const KV_KEY_MAX_BYTES = 256;
export const KV_RESERVED_PREFIX = '_marquee/';
/** Standard base64 of at most 1 MiB of value bytes. */
export const KV_VALUE_BASE64_MAX = 1_398_104;
export const KV_CONTENT_TYPE_MAX = 127;
export const KV_LIST_MAX_ITEMS = 200;
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

/** Why `key` is not a usable key, or null. */
export function kvKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'must be a non-empty string';
  if (new TextEncoder().encode(key).length > KV_KEY_MAX_BYTES) return `must be at most ${KV_KEY_MAX_BYTES} UTF-8 bytes`;
  if (key.startsWith(KV_RESERVED_PREFIX)) return `must not start with the reserved prefix ${KV_RESERVED_PREFIX}`;
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'must not contain control characters';
  return null;
}

/** Content types are printable ASCII, 1 to 127 characters. */
export function kvContentTypeProblem(contentType: unknown): string | null {
  if (typeof contentType !== 'string' || !/^[\x21-\x7e][\x20-\x7e]*$/.test(contentType)) return 'must be printable ASCII';
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
