// The calls an application makes through its bridge (KV, page.advance, events, logs), turned into
// requests the parent answers or messages it only hears. Keys and codes the player would refuse are
// refused here, before anything is sent.
import { kvKeyProblem, type KVEntry, type KVList } from '../contract/kv';
import {
  BridgeError,
  EVENT_CODE_PATTERN,
  LOG_LEVELS,
  LOG_MESSAGE_MAX,
  randomToken,
  type CapabilityName,
  type ChildKind,
  type ChildPayloads,
  type LogLevel,
} from './protocol';

/** The payload fields a call supplies; the bridge adds the activation (generation, nonce). */
export type CallFields<K extends ChildKind> = Omit<ChildPayloads[K], 'generation' | 'nonce'>;
/** Sends a request and resolves with the parent's answer; `capability` is checked first. */
export type Request = <K extends ChildKind>(
  kind: K,
  fields: CallFields<K>,
  capability?: CapabilityName,
) => Promise<unknown>;
/** Sends a message that has no answer; false while the bridge is inert. */
export type Send = <K extends 'log' | 'event.emit'>(kind: K, fields: CallFields<K>) => boolean;

export interface KvSetOptions {
  /** Defaults to text/plain; charset=utf-8 for strings and application/octet-stream for bytes. */
  contentType?: string;
  /** Required to update an existing key; omit only when creating one. */
  expectedRevision?: number;
}

export interface KvCalls {
  /** The entry, or null when the key does not exist. Needs kv.read. */
  get(key: string): Promise<KVEntry | null>;
  /**
   * One page of summaries (no values) in key order. For the next page pass the previous page's
   * next_cursor unchanged as `cursor`; it is null on the last page. Needs kv.read.
   */
  list(options?: { cursor?: string }): Promise<KVList>;
  /** Needs kv.write. A stale expectedRevision rejects with code revision_conflict. */
  set(key: string, value: string | Uint8Array, options?: KvSetOptions): Promise<KVEntry>;
  delete(key: string, expectedRevision: number): Promise<void>;
  /** The entry's value as UTF-8 text. */
  text(entry: Pick<KVEntry, 'value_base64'>): string;
}

export interface PageCalls {
  /** Asks the player to move to the next page. Needs page.advance; once per activation. */
  advance(): Promise<void>;
}

export interface EventCalls {
  /** Records an application event (code: 1 to 64 of A-Z a-z 0-9 . _ -). False while inert. */
  emit(code: string): boolean;
}

export type LogCalls = Readonly<Record<LogLevel, (message: string, code?: string) => boolean>>;

const DEFAULT_LOG_CODE = 'app';

export function kvCalls(request: Request): KvCalls {
  return Object.freeze({
    async get(key: string) {
      checkKey(key);
      try {
        return (await request('kv.get', { key }, 'kv.read')) as KVEntry;
      } catch (error) {
        if (error instanceof BridgeError && error.code === 'not_found') return null;
        throw error;
      }
    },
    async list(listOptions: { cursor?: string } = {}) {
      return (await request(
        'kv.list',
        listOptions.cursor === undefined ? {} : { cursor: listOptions.cursor },
        'kv.read',
      )) as KVList;
    },
    async set(key: string, value: string | Uint8Array, setOptions: KvSetOptions = {}) {
      checkKey(key);
      const text = typeof value === 'string';
      if (!text && !(value instanceof Uint8Array))
        throw new BridgeError('invalid_payload', 'a KV value is a string or a Uint8Array');
      const bytes = text ? new TextEncoder().encode(value) : value;
      const fields: CallFields<'kv.set'> = {
        key,
        value_base64: bytesToBase64(bytes),
        content_type: setOptions.contentType ?? (text ? 'text/plain; charset=utf-8' : 'application/octet-stream'),
        idempotency_key: randomToken(22),
      };
      if (setOptions.expectedRevision !== undefined) fields.expected_revision = setOptions.expectedRevision;
      const entry = (await request('kv.set', fields, 'kv.write')) as KVEntry;
      // Near the message limit the parent leaves out the value it would echo: it is the one sent.
      return entry.value_base64 === undefined ? { ...entry, value_base64: fields.value_base64 } : entry;
    },
    async delete(key: string, expectedRevision: number) {
      checkKey(key);
      await request(
        'kv.delete',
        { key, expected_revision: expectedRevision, idempotency_key: randomToken(22) },
        'kv.write',
      );
    },
    text(entry: Pick<KVEntry, 'value_base64'>) {
      return base64ToText(entry.value_base64);
    },
  });
}

export function pageCalls(request: Request): PageCalls {
  return Object.freeze({
    async advance() {
      await request('page.advance', {}, 'page.advance');
    },
  });
}

export function eventCalls(send: Send): EventCalls {
  return Object.freeze({
    emit(code: string) {
      if (typeof code !== 'string' || !EVENT_CODE_PATTERN.test(code))
        throw new BridgeError('invalid_event', 'event code must be 1 to 64 of A-Z a-z 0-9 . _ -');
      return send('event.emit', { code });
    },
  });
}

export function logCalls(send: Send): LogCalls {
  const log = {} as Record<LogLevel, (message: string, code?: string) => boolean>;
  for (const level of LOG_LEVELS) {
    log[level] = (message: string, code = DEFAULT_LOG_CODE) => {
      if (!EVENT_CODE_PATTERN.test(code))
        throw new BridgeError('invalid_log', 'log code must be 1 to 64 of A-Z a-z 0-9 . _ -');
      return send('log', { level, code, message: String(message).slice(0, LOG_MESSAGE_MAX) });
    };
  }
  return Object.freeze(log);
}

/** A key the player (and the server) would refuse is refused here, before a message is sent. */
function checkKey(key: string): void {
  const why = kvKeyProblem(key);
  if (why) throw new BridgeError('invalid_key', `key ${why}`, { status: 400 });
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk)
    binary += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + chunk)));
  return btoa(binary);
}

function base64ToText(value: string): string {
  const binary = atob(value);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}
