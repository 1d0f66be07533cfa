// An application's key/value storage, from the owner's side (Model A): list, read, write with
// If-Match (omit it only to create a key), delete with If-Match. Values go as base64.
import { kvCollectionPath, KvKeyError, kvKeyPath, type KVEntry, type KVList, type KVWrite } from '../contract/kv';
import { MarqueeProblem } from './problem';
import type { CallOptions, ClientTransport, GuardedCallOptions, Revisioned } from './transport';

export interface KvSetOptions extends GuardedCallOptions {
  /** Default: `text/plain; charset=utf-8` for a string, `application/octet-stream` for bytes. */
  contentType?: string;
}

/** Chunk of bytes turned into one binary string at a time (keeps the argument list of fromCharCode short). */
const BASE64_CHUNK = 0x8000;

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += BASE64_CHUNK)
    binary += String.fromCharCode(...bytes.subarray(i, i + BASE64_CHUNK));
  return btoa(binary);
}

export function fromBase64(value: string): Uint8Array {
  const binary = atob(value);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Runs `call` with the entry's path; a key the server would refuse rejects with the problem it
 * would answer (400 invalid_request naming `key`), before anything is sent.
 */
function withKeyPath<T>(applicationId: string, key: string, call: (path: string) => Promise<T>): Promise<T> {
  let path: string;
  try {
    path = kvKeyPath(kvCollectionPath('owner', applicationId), key);
  } catch (error) {
    if (!(error instanceof KvKeyError)) throw error;
    const document = {
      code: 'invalid_request',
      status: 400,
      detail: error.message,
      errors: [{ field: 'key', code: 'invalid', detail: error.detail }],
    };
    return Promise.reject(new MarqueeProblem(400, document));
  }
  return call(path);
}

export function kvRoutes(t: ClientTransport) {
  return {
    /** Summaries (no values), a page at a time: pass the last page's `next_cursor` as `cursor` for the next. */
    list: (applicationId: string, query: { cursor?: string } = {}) =>
      t.request<KVList>({ method: 'GET', path: kvCollectionPath('owner', applicationId), query: { ...query } }),
    get: (applicationId: string, key: string) =>
      withKeyPath(applicationId, key, (path) => t.request<KVEntry>({ method: 'GET', path })),
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
      return withKeyPath(applicationId, key, (path) =>
        t.request<KVEntry>({ method: 'PUT', path, json: body, idempotent: true, ...call }),
      );
    },
    /** Deletes the key at the revision you read (If-Match is required). */
    delete: (applicationId: string, key: string, ifMatch: Revisioned, options: CallOptions = {}) =>
      withKeyPath(applicationId, key, (path) =>
        t.request<void>({ method: 'DELETE', path, idempotent: true, ifMatch, ...options }),
      ),
    /** An entry's value as bytes. */
    bytes: (entry: Pick<KVEntry, 'value_base64'>) => fromBase64(entry.value_base64),
    /** An entry's value decoded as UTF-8. */
    text: (entry: Pick<KVEntry, 'value_base64'>) => new TextDecoder().decode(fromBase64(entry.value_base64)),
  };
}
