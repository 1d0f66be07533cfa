// An application's key/value storage, from the owner's side (Model A): list, read, write with
// If-Match (omit it only to create a key), delete with If-Match. Values go as base64.
import type { KVEntry, KVList, KVWrite } from '../contract/kv';
import type { CallOptions, ClientTransport, GuardedCallOptions, Revisioned } from './transport';

export interface KvSetOptions extends GuardedCallOptions {
  /** Default: `text/plain; charset=utf-8` for a string, `application/octet-stream` for bytes. */
  contentType?: string;
}

/** Chunk of bytes turned into one binary string at a time (keeps the argument list of fromCharCode short). */
const BASE64_CHUNK = 0x8000;

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += BASE64_CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + BASE64_CHUNK));
  return btoa(binary);
}

export function fromBase64(value: string): Uint8Array {
  const binary = atob(value);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function kvRoutes(t: ClientTransport) {
  const base = (applicationId: string) => `/api/v1/applications/${encodeURIComponent(applicationId)}/kv`;
  const path = (applicationId: string, key: string) => `${base(applicationId)}/${encodeURIComponent(key)}`;
  return {
    /** Summaries (no values). */
    list: (applicationId: string) => t.request<KVList>({ method: 'GET', path: base(applicationId) }),
    get: (applicationId: string, key: string) => t.request<KVEntry>({ method: 'GET', path: path(applicationId, key) }),
    /**
     * Writes a string (as UTF-8) or bytes. Pass `ifMatch` (the entry, or its revision) to update;
     * without it the write only creates, and an existing key answers 412 revision_conflict.
     */
    set: (applicationId: string, key: string, value: string | Uint8Array, options: KvSetOptions = {}) => {
      const { contentType, ...call } = options;
      const text = typeof value === 'string';
      const body: KVWrite = {
        value_base64: toBase64(text ? new TextEncoder().encode(value) : value),
        content_type: contentType ?? (text ? 'text/plain; charset=utf-8' : 'application/octet-stream'),
      };
      return t.request<KVEntry>({ method: 'PUT', path: path(applicationId, key), json: body, idempotent: true, ...call });
    },
    /** Deletes the key at the revision you read (If-Match is required). */
    delete: (applicationId: string, key: string, ifMatch: Revisioned, options: CallOptions = {}) =>
      t.request<void>({ method: 'DELETE', path: path(applicationId, key), idempotent: true, ifMatch, ...options }),
    /** An entry's value as bytes. */
    bytes: (entry: Pick<KVEntry, 'value_base64'>) => fromBase64(entry.value_base64),
    /** An entry's value decoded as UTF-8. */
    text: (entry: Pick<KVEntry, 'value_base64'>) => new TextDecoder().decode(fromBase64(entry.value_base64)),
  };
}
