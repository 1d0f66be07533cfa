// The child side of the app bridge: the script an uploaded application includes. It pins the
// player as its parent through a challenge handshake, stays inert until a valid context arrives,
// and turns the app's calls (KV, page.advance, events, logs) into requests the parent answers.
// Messages from any other window or origin are ignored. Dependency-free on purpose.
import { kvKeyProblem, type KVEntry, type KVList } from '../contract/kv';
import {
  ACK_TIMEOUT_MS,
  BRIDGE_PROTOCOL,
  BridgeError,
  checkParentPayload,
  decodeEnvelope,
  decodeParentHandshake,
  EVENT_CODE_PATTERN,
  HANDSHAKE_PROTOCOL,
  isHandshakeLike,
  isParentKind,
  LOG_MESSAGE_MAX,
  MESSAGE_MAX_BYTES,
  messageBytes,
  newMessageId,
  randomToken,
  SDK_VERSION,
  type BridgeCapabilities,
  type BridgeErrorCode,
  type CapabilityName,
  type ChildKind,
  type ChildPayloads,
  type ContextPayload,
  type LogLevel,
  type Size,
} from './protocol';
import { fetchTrustedParentOrigin } from './trusted-parent';

/** What the app learns about where it runs; a new one arrives with every activation. */
export interface BridgeContext {
  readonly applicationId: string;
  readonly releaseId: string;
  readonly placementId: string;
  readonly screenId?: string;
  /** Activation counter: each time the page holding this placement comes on glass. */
  readonly generation: number;
  readonly capabilities: Readonly<BridgeCapabilities>;
  /** The player viewport and this placement's box, in CSS pixels. */
  readonly viewport: Readonly<Size>;
  readonly placement: Readonly<Size>;
}

export interface ViewportChange {
  readonly viewport: Readonly<Size>;
  readonly placement: Readonly<Size>;
}

export interface KvSetOptions {
  /** Defaults to text/plain; charset=utf-8 for strings and application/octet-stream for bytes. */
  contentType?: string;
  /** Required to update an existing key; omit only when creating one. */
  expectedRevision?: number;
}

export interface MarqueeApp {
  readonly sdkVersion: string;
  /** The current context, or null while inert. */
  readonly context: BridgeContext | null;
  /** Waits for the first context, tells the player the app is ready (on every activation from now on), and resolves with it. */
  ready(): Promise<BridgeContext>;
  /** Called with every new context (each activation). Returns an unsubscribe function. */
  onContext(listener: (context: BridgeContext) => void): () => void;
  onViewportChange(listener: (change: ViewportChange) => void): () => void;
  readonly kv: {
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
  };
  readonly page: {
    /** Asks the player to move to the next page. Needs page.advance; once per activation. */
    advance(): Promise<void>;
  };
  readonly event: {
    /** Records an application event (code: 1 to 64 of A-Z a-z 0-9 . _ -). False while inert. */
    emit(code: string): boolean;
  };
  readonly log: Readonly<Record<LogLevel, (message: string, code?: string) => boolean>>;
  /** Stops listening; pending requests reject with code destroyed. */
  destroy(): void;
}

export interface BridgeDiagnostic {
  code: BridgeErrorCode;
  detail: string;
}

export interface ChildOptions {
  /** The frame's window; defaults to the global one. */
  window?: Window;
  ackTimeoutMs?: number;
  /** Why a message was ignored (for debugging; never needed in production). */
  onDiagnostic?: (diagnostic: BridgeDiagnostic) => void;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: BridgeError): void;
  timer: number;
  generation: number;
  nonce: string;
}

const DEFAULT_LOG_CODE = 'app';

function utf8ToBase64(bytes: Uint8Array): string {
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

function freezeContext(p: ContextPayload): BridgeContext {
  const context: BridgeContext = {
    applicationId: p.application_id,
    releaseId: p.release_id,
    placementId: p.placement_id,
    ...(p.screen_id !== undefined ? { screenId: p.screen_id } : {}),
    generation: p.generation,
    capabilities: Object.freeze({ ...p.capabilities }),
    viewport: Object.freeze({ ...p.viewport }),
    placement: Object.freeze({ ...p.placement }),
  };
  return Object.freeze(context);
}

/** A bridge child bound to one window. Apps normally use `connect()` (one per document). */
export function createBridgeChild(options: ChildOptions = {}): MarqueeApp {
  const win = options.window ?? window;
  const ackTimeoutMs = options.ackTimeoutMs ?? ACK_TIMEOUT_MS;
  const diagnose = (code: BridgeErrorCode, detail: string) => options.onDiagnostic?.({ code, detail });
  const hasParent = win.parent !== win;
  // undefined while the release host is asked which player it trusts; null when it named none.
  let trustedOrigin: string | null | undefined = hasParent ? undefined : null;
  // A handshake that arrives before that answer waits for it (the latest only: the parent repeats).
  let heldHandshake: MessageEvent | null = null;

  let pinned: { origin: string; challenge: string } | null = null;
  let wire: ContextPayload | null = null;
  let context: BridgeContext | null = null;
  let destroyed = false;
  let readyPromise: Promise<BridgeContext> | null = null;
  let readyWaiter: { resolve(c: BridgeContext): void; reject(e: BridgeError): void } | null = null;
  const pending = new Map<string, Pending>();
  const contextListeners = new Set<(c: BridgeContext) => void>();
  const viewportListeners = new Set<(v: ViewportChange) => void>();

  function post(message: unknown): void {
    win.parent.postMessage(message, pinned!.origin);
  }

  function envelope<K extends ChildKind>(kind: K, fields: Omit<ChildPayloads[K], 'generation' | 'nonce'>) {
    return {
      protocol: BRIDGE_PROTOCOL,
      message_id: newMessageId(),
      kind,
      placement_id: wire!.placement_id,
      payload: { ...fields, generation: wire!.generation, nonce: wire!.nonce },
    };
  }

  function unavailable(): BridgeError | null {
    if (destroyed) return new BridgeError('destroyed', 'the bridge was destroyed');
    if (!wire || !pinned)
      return new BridgeError('inert', 'no context from the player yet; await marquee.ready() first');
    return null;
  }

  function request<K extends ChildKind>(
    kind: K,
    fields: Omit<ChildPayloads[K], 'generation' | 'nonce'>,
    capability?: CapabilityName,
  ): Promise<unknown> {
    const blocked = unavailable();
    if (blocked) return Promise.reject(blocked);
    if (capability && !wire!.capabilities[capability]) {
      return Promise.reject(
        new BridgeError('capability_denied', `this placement does not have the ${capability} capability`, {
          status: 403,
        }),
      );
    }
    const message = envelope(kind, fields);
    if (messageBytes(message) > MESSAGE_MAX_BYTES) {
      return Promise.reject(
        new BridgeError('message_too_large', `${kind} exceeds ${MESSAGE_MAX_BYTES} bytes`, { status: 413 }),
      );
    }
    return new Promise((resolve, reject) => {
      const id = message.message_id;
      const timer = win.setTimeout(() => {
        pending.delete(id);
        reject(new BridgeError('ack_timeout', `${kind} got no answer within ${ackTimeoutMs} ms`));
      }, ackTimeoutMs);
      pending.set(id, { resolve, reject, timer, generation: wire!.generation, nonce: wire!.nonce });
      post(message);
    });
  }

  function send<K extends 'log' | 'event.emit'>(
    kind: K,
    fields: Omit<ChildPayloads[K], 'generation' | 'nonce'>,
  ): boolean {
    if (unavailable()) return false;
    post(envelope(kind, fields));
    return true;
  }

  function rejectPending(code: BridgeErrorCode, detail: string): void {
    for (const [id, p] of pending) {
      win.clearTimeout(p.timer);
      pending.delete(id);
      p.reject(new BridgeError(code, detail));
    }
  }

  function announceReady(): void {
    const current = context!;
    request('ready', {}).then(
      () => {
        readyWaiter?.resolve(current);
        readyWaiter = null;
      },
      (error: BridgeError) => {
        if (readyWaiter) readyWaiter.reject(error);
        else diagnose('ack_timeout', `ready for generation ${current.generation}: ${error.message}`);
        readyWaiter = null;
      },
    );
  }

  function onHandshake(event: MessageEvent): void {
    const handshake = decodeParentHandshake(event.data);
    if (!handshake.ok) return diagnose(handshake.code, handshake.detail);
    if (event.origin === 'null' || event.origin === '*')
      return diagnose('wildcard_origin', 'a parent with an opaque origin cannot be pinned');
    if (trustedOrigin === undefined) {
      heldHandshake = event;
      return;
    }
    if (trustedOrigin === null || event.origin !== trustedOrigin)
      return diagnose('untrusted_origin', `${event.origin} is not the player of this release host`);
    if (pinned && (pinned.origin !== event.origin || pinned.challenge !== handshake.value.challenge)) {
      return diagnose('invalid_handshake', 'the parent is already pinned; only the first handshake counts');
    }
    pinned = { origin: event.origin, challenge: handshake.value.challenge };
    // Repeats of the winning handshake get the same answer (the parent retries until it hears one).
    post({
      protocol: HANDSHAKE_PROTOCOL,
      kind: 'child.handshake',
      challenge: pinned.challenge,
      parent_origin: pinned.origin,
    });
  }

  function onContextMessage(placementId: string, p: ContextPayload): void {
    if (p.placement_id !== placementId)
      return diagnose('invalid_placement', 'context placement_id differs from the envelope');
    if (p.player_origin !== pinned!.origin)
      return diagnose('invalid_player_origin', 'player_origin is not the pinned parent origin');
    if (wire) {
      if (p.generation < wire.generation) return diagnose('invalid_generation', 'context generation went backwards');
      if (p.application_id !== wire.application_id)
        return diagnose('invalid_application', 'the application of a frame cannot change');
      if (p.release_id !== wire.release_id) return diagnose('invalid_release', 'the release of a frame cannot change');
      if (p.generation !== wire.generation)
        rejectPending(
          'invalid_generation',
          'the placement was reactivated; the request belonged to the previous activation',
        );
    }
    wire = p;
    context = freezeContext(p);
    for (const listener of contextListeners) listener(context);
    if (readyPromise) announceReady();
  }

  function onMessage(event: MessageEvent): void {
    if (destroyed || !hasParent || event.source !== win.parent) return;
    if (isHandshakeLike(event.data)) return onHandshake(event);
    if (!pinned || event.origin !== pinned.origin) return;
    const decoded = decodeEnvelope(event.data);
    if (!decoded.ok) return diagnose(decoded.code, decoded.detail);
    const { kind, payload, placement_id: placementId } = decoded.value;
    if (!isParentKind(kind)) return; // unknown kinds are ignored: newer players may send more
    if (wire && placementId !== wire.placement_id)
      return diagnose('invalid_placement', 'message for another placement');
    const checked = checkParentPayload(kind, payload);
    if (!checked.ok) return diagnose(checked.code, checked.detail);
    if (checked.value.nonce !== pinned.challenge)
      return diagnose('invalid_nonce', 'nonce is not the handshake challenge');
    if (kind === 'context') return onContextMessage(placementId, checked.value as ContextPayload);
    if (!wire) return diagnose('inert', `${kind} before any context`);
    const value = checked.value as { generation: number; request_message_id?: string };
    if (kind === 'viewport.changed') {
      if (value.generation !== wire.generation)
        return diagnose('invalid_generation', 'viewport change for another activation');
      const v = checked.value as { viewport: Size; placement: Size };
      wire = { ...wire, viewport: v.viewport, placement: v.placement };
      context = freezeContext(wire);
      const change: ViewportChange = Object.freeze({ viewport: context.viewport, placement: context.placement });
      for (const listener of viewportListeners) listener(change);
      return;
    }
    const waiting = pending.get(value.request_message_id!);
    if (!waiting) return diagnose('invalid_response', 'answer to no pending request');
    if (waiting.generation !== value.generation || waiting.nonce !== checked.value.nonce)
      return diagnose('invalid_generation', 'answer for another activation');
    pending.delete(value.request_message_id!);
    win.clearTimeout(waiting.timer);
    if (kind === 'response.ack') {
      waiting.resolve((checked.value as { result: unknown }).result);
    } else {
      const problem = (
        checked.value as {
          problem: { code: string; status: number; detail: string; request_id: string; current_revision?: number };
        }
      ).problem;
      waiting.reject(
        new BridgeError(problem.code, problem.detail, {
          status: problem.status,
          requestId: problem.request_id,
          currentRevision: problem.current_revision,
        }),
      );
    }
  }

  win.addEventListener('message', onMessage);
  if (trustedOrigin === undefined) {
    void fetchTrustedParentOrigin(win).then((origin) => {
      trustedOrigin = origin;
      const held = heldHandshake;
      heldHandshake = null;
      if (destroyed) return;
      if (origin === null) {
        diagnose('inert', 'the release host named no player origin; the bridge stays inert');
        readyWaiter?.reject(
          new BridgeError('inert', 'the release host named no player to trust; the bridge stays inert'),
        );
        readyWaiter = null;
        return;
      }
      if (held) onHandshake(held);
    });
  }

  const log = {} as Record<LogLevel, (message: string, code?: string) => boolean>;
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    log[level] = (message: string, code = DEFAULT_LOG_CODE) => {
      if (!EVENT_CODE_PATTERN.test(code))
        throw new BridgeError('invalid_log', 'log code must be 1 to 64 of A-Z a-z 0-9 . _ -');
      return send('log', { level, code, message: String(message).slice(0, LOG_MESSAGE_MAX) });
    };
  }

  const app: MarqueeApp = {
    sdkVersion: SDK_VERSION,
    get context() {
      return context;
    },
    ready() {
      if (destroyed) return Promise.reject(new BridgeError('destroyed', 'the bridge was destroyed'));
      if (!hasParent || trustedOrigin === null) {
        return Promise.reject(
          new BridgeError('inert', 'not inside a Marquee player (no trusted parent); the bridge stays inert'),
        );
      }
      if (!readyPromise) {
        readyPromise = new Promise<BridgeContext>((resolve, reject) => {
          readyWaiter = { resolve, reject };
        });
        if (context) announceReady();
      }
      return readyPromise;
    },
    onContext(listener) {
      contextListeners.add(listener);
      return () => contextListeners.delete(listener);
    },
    onViewportChange(listener) {
      viewportListeners.add(listener);
      return () => viewportListeners.delete(listener);
    },
    kv: Object.freeze({
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
        const fields: Omit<ChildPayloads['kv.set'], 'generation' | 'nonce'> = {
          key,
          value_base64: utf8ToBase64(bytes),
          content_type: setOptions.contentType ?? (text ? 'text/plain; charset=utf-8' : 'application/octet-stream'),
          idempotency_key: randomToken(22),
        };
        if (setOptions.expectedRevision !== undefined) fields.expected_revision = setOptions.expectedRevision;
        return (await request('kv.set', fields, 'kv.write')) as KVEntry;
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
    }),
    page: Object.freeze({
      async advance() {
        await request('page.advance', {}, 'page.advance');
      },
    }),
    event: Object.freeze({
      emit(code: string) {
        if (typeof code !== 'string' || !EVENT_CODE_PATTERN.test(code))
          throw new BridgeError('invalid_event', 'event code must be 1 to 64 of A-Z a-z 0-9 . _ -');
        return send('event.emit', { code });
      },
    }),
    log: Object.freeze(log),
    destroy() {
      if (destroyed) return;
      destroyed = true;
      heldHandshake = null;
      win.removeEventListener('message', onMessage);
      rejectPending('destroyed', 'the bridge was destroyed');
      readyWaiter?.reject(new BridgeError('destroyed', 'the bridge was destroyed'));
      readyWaiter = null;
    },
  };
  return Object.freeze(app);
}

const SINGLETON = Symbol.for('marquee.app-bridge');

/** The document's one bridge (the injected script and an imported module share it). */
export function connect(options?: Omit<ChildOptions, 'window'>): MarqueeApp {
  const holder = globalThis as unknown as Record<symbol, MarqueeApp | undefined>;
  let app = holder[SINGLETON];
  if (!app) {
    app = createBridgeChild(options);
    Object.defineProperty(holder, SINGLETON, { value: app, enumerable: false, writable: false, configurable: false });
  }
  return app;
}

export { BridgeError, SDK_VERSION } from './protocol';
export type { BridgeCapabilities, BridgeErrorCode, Size } from './protocol';
/** A key the player (and the server) would refuse is refused here, before a message is sent. */
function checkKey(key: string): void {
  const why = kvKeyProblem(key);
  if (why) throw new BridgeError('invalid_key', `key ${why}`, { status: 400 });
}

export type { KVEntry, KVList, KVSummary } from '../contract/kv';
