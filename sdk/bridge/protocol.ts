// The app bridge protocol "1", shared by the child script inside an application frame and the
// parent bridge in the player: the handshake, the envelope, every payload, and their validation.
// Everything here is dependency-free: it ships inside the script that uploaded apps include.
import { kvContentTypeProblem, kvKeyProblem, KV_LIST_CURSOR_MAX, KV_VALUE_BASE64_MAX } from '../contract/kv';

export const BRIDGE_PROTOCOL = '1';
/** The SDK generation an app was packed with (sent as Marquee-SDK-Version). */
export const SDK_VERSION = '1';
export const HANDSHAKE_PROTOCOL = 'marquee.parent-handshake/1';
/** Objects and JSON strings alike: at most 64 KiB of UTF-8 JSON per message. */
export const MESSAGE_MAX_BYTES = 65_536;
/** A request without an answer after this long fails with ack_timeout. */
export const ACK_TIMEOUT_MS = 10_000;
/** Nesting deeper than any payload needs is refused before it can cost anything. */
export const MESSAGE_MAX_DEPTH = 16;
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

export const MESSAGE_ID_PATTERN = /^[A-Za-z0-9._-]{8,128}$/;
export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{22,128}$/;
export const PLACEMENT_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const ENTITY_ID_PATTERN = /^[A-Za-z0-9._-]{8,128}$/;
export const EVENT_CODE_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{22}$/;
export const KIND_MAX_LENGTH = 64;
export const LOG_MESSAGE_MAX = 2048;
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const DIMENSION_MAX = 100_000;
export const PROBLEM_DETAIL_MAX = 1024;

export type LogLevel = (typeof LOG_LEVELS)[number];
export const CAPABILITY_NAMES = ['page.advance', 'kv.read', 'kv.write'] as const;
export type CapabilityName = (typeof CAPABILITY_NAMES)[number];
export type BridgeCapabilities = Record<CapabilityName, boolean>;

export interface Size {
  width: number;
  height: number;
}

/** Codes the SDK itself raises (a problem from the server keeps the server's code). */
export const BRIDGE_ERROR_CODES = [
  'invalid_handshake',
  'invalid_json',
  'invalid_shape',
  'invalid_message_id',
  'invalid_kind',
  'invalid_placement',
  'invalid_payload',
  'invalid_context',
  'invalid_application',
  'invalid_release',
  'invalid_generation',
  'invalid_nonce',
  'invalid_player_origin',
  'invalid_response',
  'invalid_log',
  'invalid_event',
  'invalid_key',
  'invalid_revision',
  'message_too_large',
  'protocol_mismatch',
  'wildcard_origin',
  'untrusted_origin',
  'inert',
  'destroyed',
  'ack_timeout',
  'capability_denied',
] as const;
export type BridgeErrorCode = (typeof BRIDGE_ERROR_CODES)[number];

// ---- messages ----

export interface ParentHandshake {
  protocol: typeof HANDSHAKE_PROTOCOL;
  kind: 'parent.handshake';
  challenge: string;
}

export interface ChildHandshake {
  protocol: typeof HANDSHAKE_PROTOCOL;
  kind: 'child.handshake';
  challenge: string;
  parent_origin: string;
}

export interface Envelope<K extends string = string, P = Record<string, unknown>> {
  protocol: typeof BRIDGE_PROTOCOL;
  message_id: string;
  kind: K;
  placement_id: string;
  payload: P;
}

/** Every payload after the handshake carries these: stale or foreign answers are dropped. */
export interface Activation {
  generation: number;
  nonce: string;
}

export interface ContextPayload extends Activation {
  application_id: string;
  release_id: string;
  placement_id: string;
  player_origin: string;
  capabilities: BridgeCapabilities;
  viewport: Size;
  placement: Size;
  screen_id?: string;
}

export interface ViewportPayload extends Activation {
  viewport: Size;
  placement: Size;
}

export interface AckPayload extends Activation {
  request_message_id: string;
  result: unknown;
}

export interface BridgeProblem {
  code: string;
  status: number;
  detail: string;
  request_id: string;
  current_revision?: number;
}

export interface ProblemPayload extends Activation {
  request_message_id: string;
  problem: BridgeProblem;
}

export interface ChildPayloads {
  ready: Activation;
  log: Activation & { level: LogLevel; code: string; message: string };
  'event.emit': Activation & { code: string };
  'page.advance': Activation;
  'kv.get': Activation & { key: string };
  /** `cursor`: a page's `next_cursor`, passed unchanged to get the page after it. */
  'kv.list': Activation & { cursor?: string };
  'kv.set': Activation & {
    key: string;
    value_base64: string;
    content_type: string;
    idempotency_key: string;
    expected_revision?: number;
  };
  'kv.delete': Activation & { key: string; expected_revision: number; idempotency_key: string };
}
export type ChildKind = keyof ChildPayloads;
export type ChildMessage = { [K in ChildKind]: Envelope<K, ChildPayloads[K]> }[ChildKind];

export interface ParentPayloads {
  context: ContextPayload;
  'viewport.changed': ViewportPayload;
  'response.ack': AckPayload;
  'response.problem': ProblemPayload;
}
export type ParentKind = keyof ParentPayloads;
export type ParentMessage = { [K in ParentKind]: Envelope<K, ParentPayloads[K]> }[ParentKind];

/** Child requests that the parent answers with response.ack or response.problem. */
export const ACKED_KINDS: ReadonlySet<string> = new Set<ChildKind>([
  'ready',
  'page.advance',
  'kv.get',
  'kv.list',
  'kv.set',
  'kv.delete',
]);

/** An error the bridge hands to app code: an SDK code, or the server's problem code. */
export class BridgeError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly currentRevision: number | undefined;
  constructor(
    code: string,
    detail: string,
    extra: { status?: number; requestId?: string; currentRevision?: number } = {},
  ) {
    super(detail);
    this.name = 'BridgeError';
    this.code = code;
    this.status = extra.status;
    this.requestId = extra.requestId;
    this.currentRevision = extra.currentRevision;
  }
}

// ---- validation ----

export type Checked<T> = { ok: true; value: T } | { ok: false; code: BridgeErrorCode; detail: string };

const fail = (code: BridgeErrorCode, detail: string): { ok: false; code: BridgeErrorCode; detail: string } => ({
  ok: false,
  code,
  detail,
});
const pass = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

// Object.hasOwn is too new for some signage browsers; the bundle targets ES2019.
function hasOwn(value: object, key: string): boolean {
  return Object.hasOwn(value, key);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Walks a structured-clone or JSON value: only JSON data (plain objects, arrays, strings, finite
 * numbers, booleans, null), no forbidden keys, bounded depth, and an early size estimate so a
 * huge object costs little before it is refused.
 */
function checkJsonData(root: unknown): Checked<null> {
  let budget = MESSAGE_MAX_BYTES * 2;
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (depth > MESSAGE_MAX_DEPTH) return fail('invalid_shape', `nesting deeper than ${MESSAGE_MAX_DEPTH}`);
    if (value === null || typeof value === 'boolean') {
      budget -= 4;
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return fail('invalid_shape', 'numbers must be finite');
      budget -= 8;
    } else if (typeof value === 'string') {
      budget -= value.length;
    } else if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype)
        return fail('invalid_shape', 'only plain arrays are allowed');
      budget -= 2 + value.length;
      if (budget < 0) return fail('message_too_large', `message exceeds ${MESSAGE_MAX_BYTES} bytes`);
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
    } else if (isPlainObject(value)) {
      const keys = Object.keys(value);
      if (Object.getOwnPropertySymbols(value).length > 0) return fail('invalid_shape', 'symbol keys are not allowed');
      budget -= 2;
      for (const key of keys) {
        if (FORBIDDEN_KEYS.includes(key)) return fail('invalid_shape', `forbidden key "${key}"`);
        budget -= key.length + 4;
        stack.push({ value: value[key], depth: depth + 1 });
      }
    } else {
      return fail('invalid_shape', `values of type ${typeof value} are not JSON data`);
    }
    if (budget < 0) return fail('message_too_large', `message exceeds ${MESSAGE_MAX_BYTES} bytes`);
  }
  return pass(null);
}

/** A message as received (object or JSON string) → checked JSON data within the size cap. */
export function decodeMessageData(data: unknown): Checked<Record<string, unknown>> {
  let value: unknown = data;
  if (typeof data === 'string') {
    if (data.length > MESSAGE_MAX_BYTES || utf8Length(data) > MESSAGE_MAX_BYTES)
      return fail('message_too_large', `message exceeds ${MESSAGE_MAX_BYTES} bytes`);
    try {
      value = JSON.parse(data);
    } catch {
      return fail('invalid_json', 'message is not valid JSON');
    }
  }
  if (!isPlainObject(value)) return fail('invalid_shape', 'message must be an object');
  const checked = checkJsonData(value);
  if (!checked.ok) return checked;
  if (typeof data !== 'string' && utf8Length(JSON.stringify(value)) > MESSAGE_MAX_BYTES)
    return fail('message_too_large', `message exceeds ${MESSAGE_MAX_BYTES} bytes`);
  return pass(value);
}

/** Exactly `required` keys plus any of `optional`, nothing else. */
function exactKeys(
  value: Record<string, unknown>,
  required: readonly string[],
  optional: readonly string[] = [],
): string | null {
  for (const key of required) if (!hasOwn(value, key)) return `missing "${key}"`;
  for (const key of Object.keys(value))
    if (!required.includes(key) && !optional.includes(key)) return `unexpected "${key}"`;
  return null;
}

const ENVELOPE_KEYS = ['protocol', 'message_id', 'kind', 'placement_id', 'payload'] as const;

/** Decodes and checks the envelope (not yet the payload of its kind). */
export function decodeEnvelope(data: unknown): Checked<Envelope> {
  const decoded = decodeMessageData(data);
  if (!decoded.ok) return decoded;
  const value = decoded.value;
  const keys = exactKeys(value, ENVELOPE_KEYS);
  if (keys) return fail('invalid_shape', `envelope: ${keys}`);
  if (value.protocol !== BRIDGE_PROTOCOL) return fail('protocol_mismatch', `protocol must be "${BRIDGE_PROTOCOL}"`);
  if (typeof value.message_id !== 'string' || !MESSAGE_ID_PATTERN.test(value.message_id))
    return fail('invalid_message_id', 'message_id must be 8 to 128 of A-Z a-z 0-9 . _ -');
  if (typeof value.kind !== 'string' || value.kind.length === 0 || value.kind.length > KIND_MAX_LENGTH)
    return fail('invalid_kind', `kind must be 1 to ${KIND_MAX_LENGTH} characters`);
  if (typeof value.placement_id !== 'string' || !PLACEMENT_ID_PATTERN.test(value.placement_id))
    return fail('invalid_placement', 'placement_id is not a placement id');
  if (!isPlainObject(value.payload)) return fail('invalid_payload', 'payload must be an object');
  return pass(value as unknown as Envelope);
}

export function decodeParentHandshake(data: unknown): Checked<ParentHandshake> {
  const decoded = decodeMessageData(data);
  if (!decoded.ok) return decoded;
  const v = decoded.value;
  if (
    exactKeys(v, ['protocol', 'kind', 'challenge']) ||
    v.protocol !== HANDSHAKE_PROTOCOL ||
    v.kind !== 'parent.handshake'
  ) {
    return fail('invalid_handshake', 'not a parent handshake');
  }
  if (typeof v.challenge !== 'string' || !CHALLENGE_PATTERN.test(v.challenge))
    return fail('invalid_handshake', 'challenge must be 22 to 128 base64url characters');
  return pass(v as unknown as ParentHandshake);
}

export function decodeChildHandshake(data: unknown): Checked<ChildHandshake> {
  const decoded = decodeMessageData(data);
  if (!decoded.ok) return decoded;
  const v = decoded.value;
  if (
    exactKeys(v, ['protocol', 'kind', 'challenge', 'parent_origin']) ||
    v.protocol !== HANDSHAKE_PROTOCOL ||
    v.kind !== 'child.handshake'
  ) {
    return fail('invalid_handshake', 'not a child handshake');
  }
  if (typeof v.challenge !== 'string' || !CHALLENGE_PATTERN.test(v.challenge))
    return fail('invalid_handshake', 'challenge must be 22 to 128 base64url characters');
  if (typeof v.parent_origin !== 'string') return fail('invalid_handshake', 'parent_origin must be a string');
  return pass(v as unknown as ChildHandshake);
}

/** True when `data` looks like a handshake (either direction), so callers can route it. */
export function isHandshakeLike(data: unknown): boolean {
  if (typeof data === 'string') {
    if (data.length > MESSAGE_MAX_BYTES || !data.includes(HANDSHAKE_PROTOCOL)) return false;
    try {
      data = JSON.parse(data);
    } catch {
      return false;
    }
  }
  return isPlainObject(data) && data.protocol === HANDSHAKE_PROTOCOL;
}

// ---- payloads ----

const isGeneration = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isDimension = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= DIMENSION_MAX;
const isRevision = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

function checkActivation(p: Record<string, unknown>): Checked<null> {
  if (!isGeneration(p.generation)) return fail('invalid_generation', 'generation must be a safe integer ≥ 0');
  if (typeof p.nonce !== 'string' || !CHALLENGE_PATTERN.test(p.nonce))
    return fail('invalid_nonce', 'nonce must be the handshake challenge');
  return pass(null);
}

function checkSize(v: unknown, name: string): string | null {
  if (!isPlainObject(v) || exactKeys(v, ['width', 'height']) || !isDimension(v.width) || !isDimension(v.height)) {
    return `${name} must be {width, height} within 0 to ${DIMENSION_MAX}`;
  }
  return null;
}

function checkBase64(v: unknown): boolean {
  return (
    typeof v === 'string' && v.length <= KV_VALUE_BASE64_MAX && v.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(v)
  );
}

const CHILD_PAYLOAD_KEYS: Record<ChildKind, { required: string[]; optional?: string[] }> = {
  ready: { required: ['generation', 'nonce'] },
  log: { required: ['level', 'code', 'message', 'generation', 'nonce'] },
  'event.emit': { required: ['code', 'generation', 'nonce'] },
  'page.advance': { required: ['generation', 'nonce'] },
  'kv.get': { required: ['key', 'generation', 'nonce'] },
  'kv.list': { required: ['generation', 'nonce'], optional: ['cursor'] },
  'kv.set': {
    required: ['key', 'value_base64', 'content_type', 'idempotency_key', 'generation', 'nonce'],
    optional: ['expected_revision'],
  },
  'kv.delete': { required: ['key', 'expected_revision', 'idempotency_key', 'generation', 'nonce'] },
};

export function isChildKind(kind: string): kind is ChildKind {
  return hasOwn(CHILD_PAYLOAD_KEYS, kind);
}

/** Checks the payload of a child → parent message of a known kind. */
export function checkChildPayload<K extends ChildKind>(
  kind: K,
  payload: Record<string, unknown>,
): Checked<ChildPayloads[K]> {
  const shape = CHILD_PAYLOAD_KEYS[kind];
  const keys = exactKeys(payload, shape.required, shape.optional);
  if (keys) return fail('invalid_payload', `${kind}: ${keys}`);
  const activation = checkActivation(payload);
  if (!activation.ok) return activation;
  switch (kind) {
    case 'log':
      if (!LOG_LEVELS.includes(payload.level as LogLevel))
        return fail('invalid_log', 'level must be debug, info, warn or error');
      if (typeof payload.code !== 'string' || !EVENT_CODE_PATTERN.test(payload.code))
        return fail('invalid_log', 'code must be 1 to 64 of A-Z a-z 0-9 . _ -');
      if (typeof payload.message !== 'string' || payload.message.length > LOG_MESSAGE_MAX)
        return fail('invalid_log', `message must be a string of at most ${LOG_MESSAGE_MAX} characters`);
      break;
    case 'event.emit':
      if (typeof payload.code !== 'string' || !EVENT_CODE_PATTERN.test(payload.code))
        return fail('invalid_event', 'code must be 1 to 64 of A-Z a-z 0-9 . _ -');
      break;
    case 'kv.list':
      // The server decides what a cursor means; the bridge only keeps to the bounds its query accepts.
      if (
        payload.cursor !== undefined &&
        (typeof payload.cursor !== 'string' ||
          payload.cursor.length === 0 ||
          payload.cursor.length > KV_LIST_CURSOR_MAX)
      ) {
        return fail(
          'invalid_payload',
          `cursor must be a next_cursor: a string of 1 to ${KV_LIST_CURSOR_MAX} characters`,
        );
      }
      break;
    case 'kv.get':
    case 'kv.set':
    case 'kv.delete': {
      const keyProblem = kvKeyProblem(payload.key);
      if (keyProblem) return fail('invalid_key', `key ${keyProblem}`);
      if (kind === 'kv.set') {
        if (!checkBase64(payload.value_base64)) return fail('invalid_payload', 'value_base64 must be standard base64');
        const typeProblem = kvContentTypeProblem(payload.content_type);
        if (typeProblem) return fail('invalid_payload', `content_type ${typeProblem}`);
        if (payload.expected_revision !== undefined && !isRevision(payload.expected_revision))
          return fail('invalid_revision', 'expected_revision must be a positive integer');
      }
      if (kind === 'kv.delete' && !isRevision(payload.expected_revision))
        return fail('invalid_revision', 'expected_revision must be a positive integer');
      if (
        kind !== 'kv.get' &&
        (typeof payload.idempotency_key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(payload.idempotency_key))
      ) {
        return fail('invalid_payload', 'idempotency_key must be 22 base64url characters');
      }
      break;
    }
  }
  return pass(payload as unknown as ChildPayloads[K]);
}

const PARENT_PAYLOAD_KEYS: Record<ParentKind, { required: string[]; optional?: string[] }> = {
  context: {
    required: [
      'application_id',
      'release_id',
      'placement_id',
      'generation',
      'nonce',
      'player_origin',
      'capabilities',
      'viewport',
      'placement',
    ],
    optional: ['screen_id'],
  },
  'viewport.changed': { required: ['generation', 'nonce', 'viewport', 'placement'] },
  'response.ack': { required: ['request_message_id', 'generation', 'nonce', 'result'] },
  'response.problem': { required: ['request_message_id', 'generation', 'nonce', 'problem'] },
};

export function isParentKind(kind: string): kind is ParentKind {
  return hasOwn(PARENT_PAYLOAD_KEYS, kind);
}

/** Checks the payload of a parent → child message of a known kind. */
export function checkParentPayload<K extends ParentKind>(
  kind: K,
  payload: Record<string, unknown>,
): Checked<ParentPayloads[K]> {
  const shape = PARENT_PAYLOAD_KEYS[kind];
  const keys = exactKeys(payload, shape.required, shape.optional);
  if (keys)
    return fail(
      kind === 'context' ? 'invalid_context' : kind.startsWith('response') ? 'invalid_response' : 'invalid_payload',
      `${kind}: ${keys}`,
    );
  const activation = checkActivation(payload);
  if (!activation.ok) return activation;
  switch (kind) {
    case 'context': {
      if (typeof payload.application_id !== 'string' || !ENTITY_ID_PATTERN.test(payload.application_id))
        return fail('invalid_application', 'application_id is malformed');
      if (typeof payload.release_id !== 'string' || !ENTITY_ID_PATTERN.test(payload.release_id))
        return fail('invalid_release', 'release_id is malformed');
      if (typeof payload.placement_id !== 'string' || !PLACEMENT_ID_PATTERN.test(payload.placement_id))
        return fail('invalid_placement', 'placement_id is malformed');
      if (typeof payload.player_origin !== 'string')
        return fail('invalid_player_origin', 'player_origin must be a string');
      if (
        payload.screen_id !== undefined &&
        (typeof payload.screen_id !== 'string' || !ENTITY_ID_PATTERN.test(payload.screen_id))
      )
        return fail('invalid_context', 'screen_id is malformed');
      const caps = payload.capabilities;
      if (
        !isPlainObject(caps) ||
        exactKeys(caps, CAPABILITY_NAMES) ||
        CAPABILITY_NAMES.some((c) => typeof caps[c] !== 'boolean')
      ) {
        return fail('invalid_context', 'capabilities must be {"page.advance", "kv.read", "kv.write"} booleans');
      }
      const size = checkSize(payload.viewport, 'viewport') ?? checkSize(payload.placement, 'placement');
      if (size) return fail('invalid_context', size);
      break;
    }
    case 'viewport.changed': {
      const size = checkSize(payload.viewport, 'viewport') ?? checkSize(payload.placement, 'placement');
      if (size) return fail('invalid_payload', size);
      break;
    }
    case 'response.ack':
    case 'response.problem': {
      if (typeof payload.request_message_id !== 'string' || !MESSAGE_ID_PATTERN.test(payload.request_message_id))
        return fail('invalid_response', 'request_message_id is malformed');
      if (kind === 'response.problem') {
        const p = payload.problem;
        if (
          !isPlainObject(p) ||
          exactKeys(p, ['code', 'status', 'detail', 'request_id'], ['current_revision']) ||
          typeof p.code !== 'string' ||
          !/^[a-z][a-z0-9_]{0,63}$/.test(p.code) ||
          typeof p.status !== 'number' ||
          !Number.isInteger(p.status) ||
          typeof p.detail !== 'string' ||
          p.detail.length > PROBLEM_DETAIL_MAX ||
          typeof p.request_id !== 'string' ||
          (p.current_revision !== undefined && !isRevision(p.current_revision))
        ) {
          return fail('invalid_response', 'problem must be {code, status, detail, request_id, current_revision?}');
        }
      }
      break;
    }
  }
  return pass(payload as unknown as ParentPayloads[K]);
}

// ---- ids ----

function randomBytes(count: number): Uint8Array {
  const bytes = new Uint8Array(count);
  globalThis.crypto.getRandomValues(bytes);
  return bytes;
}

/** `msg_` + 32 lowercase hex characters. */
export function newMessageId(): string {
  return `msg_${Array.from(randomBytes(16), (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `length` base64url characters from a CSPRNG (challenges, idempotency keys). */
export function randomToken(length: number): string {
  return Array.from(randomBytes(length), (b) => B64URL[b & 63]).join('');
}

/** Byte length of a message as it travels: UTF-8 JSON. */
export function messageBytes(message: unknown): number {
  return utf8Length(JSON.stringify(message));
}
