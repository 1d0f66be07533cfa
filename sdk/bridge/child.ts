// The child side of the app bridge: the script an uploaded application includes. It pins the
// player as its parent through a challenge handshake, stays inert until a valid context arrives,
// and turns the app's calls (KV, page.advance, events, logs) into requests the parent answers.
// Messages from any other window or origin are ignored. Dependency-free on purpose. The parts live
// beside it: trust and handshake (child-trust), the activation's context (child-context),
// request/response correlation (child-requests), the app's calls (child-calls), ready (child-ready).
import {
  eventCalls,
  kvCalls,
  logCalls,
  pageCalls,
  type CallFields,
  type EventCalls,
  type KvCalls,
  type LogCalls,
  type PageCalls,
  type Request,
  type Send,
} from './child-calls';
import { CurrentContext, type BridgeContext, type ViewportChange } from './child-context';
import { Readiness } from './child-ready';
import { PendingRequests } from './child-requests';
import { ParentTrust, type Diagnose } from './child-trust';
import {
  ACK_TIMEOUT_MS,
  BRIDGE_PROTOCOL,
  BridgeError,
  checkParentPayload,
  decodeEnvelope,
  isHandshakeLike,
  isParentKind,
  MESSAGE_MAX_BYTES,
  messageBytes,
  newMessageId,
  SDK_VERSION,
  type AckPayload,
  type BridgeErrorCode,
  type ChildKind,
  type ContextPayload,
  type ProblemPayload,
  type ViewportPayload,
} from './protocol';
import { fetchTrustedParentOrigin } from './trusted-parent';

export interface MarqueeApp {
  readonly sdkVersion: string;
  /** The current context, or null while inert. */
  readonly context: BridgeContext | null;
  /** Waits for the first context, tells the player the app is ready (on every activation from now on), and resolves with it. */
  ready(): Promise<BridgeContext>;
  /** Called with every new context (each activation). Returns an unsubscribe function. */
  onContext(listener: (context: BridgeContext) => void): () => void;
  onViewportChange(listener: (change: ViewportChange) => void): () => void;
  readonly kv: KvCalls;
  readonly page: PageCalls;
  readonly event: EventCalls;
  readonly log: LogCalls;
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

/** A bridge child bound to one window. Apps normally use `connect()` (one per document). */
export function createBridgeChild(options: ChildOptions = {}): MarqueeApp {
  const win = options.window ?? window;
  const diagnose: Diagnose = (code, detail) => options.onDiagnostic?.({ code, detail });
  const hasParent = win.parent !== win;
  const trust = new ParentTrust(hasParent, diagnose);
  const current = new CurrentContext();
  const pending = new PendingRequests(win, options.ackTimeoutMs ?? ACK_TIMEOUT_MS);
  const contextListeners = new Set<(c: BridgeContext) => void>();
  const viewportListeners = new Set<(v: ViewportChange) => void>();
  let destroyed = false;

  // ---- sending: to the pinned parent, stamped with the current activation

  const post = (message: unknown) => win.parent.postMessage(message, trust.pinned!.origin);

  function envelope<K extends ChildKind>(kind: K, fields: CallFields<K>) {
    const wire = current.wire!;
    return {
      protocol: BRIDGE_PROTOCOL,
      message_id: newMessageId(),
      kind,
      placement_id: wire.placement_id,
      payload: { ...fields, generation: wire.generation, nonce: wire.nonce },
    };
  }

  function unavailable(): BridgeError | null {
    if (destroyed) return new BridgeError('destroyed', 'the bridge was destroyed');
    if (!current.wire || !trust.pinned)
      return new BridgeError('inert', 'no context from the player yet; await marquee.ready() first');
    return null;
  }

  const request: Request = (kind, fields, capability) => {
    const blocked = unavailable();
    if (blocked) return Promise.reject(blocked);
    const wire = current.wire!;
    if (capability && !wire.capabilities[capability]) {
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
    const answer = pending.wait(message.message_id, kind, wire);
    post(message);
    return answer;
  };

  const send: Send = (kind, fields) => {
    if (unavailable()) return false;
    post(envelope(kind, fields));
    return true;
  };

  const readiness = new Readiness(() => request('ready', {}), diagnose);

  // ---- receiving: handshakes, then the pinned parent's messages

  function onHandshake(event: MessageEvent): void {
    const reply = trust.onHandshake(event);
    if (reply) post(reply);
  }

  function onContext(placementId: string, payload: ContextPayload): void {
    const accepted = current.accept(placementId, trust.pinned!.origin, payload);
    if (!accepted.ok) return diagnose(accepted.code, accepted.detail);
    if (accepted.reactivated)
      pending.rejectAll(
        'invalid_generation',
        'the placement was reactivated; the request belonged to the previous activation',
      );
    for (const listener of contextListeners) listener(accepted.context);
    readiness.activated(accepted.context);
  }

  function onViewport(payload: ViewportPayload): void {
    const resized = current.resize(payload.generation, payload.viewport, payload.placement);
    if (!resized.ok) return diagnose(resized.code, resized.detail);
    for (const listener of viewportListeners) listener(resized.change);
  }

  function onMessage(event: MessageEvent): void {
    if (destroyed || !hasParent || event.source !== win.parent) return;
    if (isHandshakeLike(event.data)) return onHandshake(event);
    const pinned = trust.pinned;
    if (!pinned || event.origin !== pinned.origin) return;
    const decoded = decodeEnvelope(event.data);
    if (!decoded.ok) return diagnose(decoded.code, decoded.detail);
    const { kind, payload, placement_id: placementId } = decoded.value;
    if (!isParentKind(kind)) return; // unknown kinds are ignored: newer players may send more
    if (current.wire && placementId !== current.wire.placement_id)
      return diagnose('invalid_placement', 'message for another placement');
    const checked = checkParentPayload(kind, payload);
    if (!checked.ok) return diagnose(checked.code, checked.detail);
    if (checked.value.nonce !== pinned.challenge)
      return diagnose('invalid_nonce', 'nonce is not the handshake challenge');
    if (kind === 'context') return onContext(placementId, checked.value as ContextPayload);
    if (!current.wire) return diagnose('inert', `${kind} before any context`);
    if (kind === 'viewport.changed') return onViewport(checked.value as ViewportPayload);
    const wrong =
      kind === 'response.ack'
        ? pending.answer({ kind, value: checked.value as AckPayload })
        : pending.answer({ kind: 'response.problem', value: checked.value as ProblemPayload });
    if (wrong) diagnose(wrong.code, wrong.detail);
  }

  // ---- lifecycle

  win.addEventListener('message', onMessage);
  if (trust.asking) {
    void fetchTrustedParentOrigin(win).then((origin) => {
      const held = trust.settle(origin);
      if (destroyed) return;
      if (origin === null) {
        diagnose('inert', 'the release host named no player origin; the bridge stays inert');
        readiness.fail(new BridgeError('inert', 'the release host named no player to trust; the bridge stays inert'));
        return;
      }
      if (held) onHandshake(held);
    });
  }

  const app: MarqueeApp = {
    sdkVersion: SDK_VERSION,
    get context() {
      return current.app;
    },
    ready() {
      if (destroyed) return Promise.reject(new BridgeError('destroyed', 'the bridge was destroyed'));
      if (!hasParent || trust.refused) {
        return Promise.reject(
          new BridgeError('inert', 'not inside a Marquee player (no trusted parent); the bridge stays inert'),
        );
      }
      return readiness.start(current.app);
    },
    onContext(listener) {
      contextListeners.add(listener);
      return () => contextListeners.delete(listener);
    },
    onViewportChange(listener) {
      viewportListeners.add(listener);
      return () => viewportListeners.delete(listener);
    },
    kv: kvCalls(request),
    page: pageCalls(request),
    event: eventCalls(send),
    log: logCalls(send),
    destroy() {
      if (destroyed) return;
      destroyed = true;
      trust.forget();
      win.removeEventListener('message', onMessage);
      pending.rejectAll('destroyed', 'the bridge was destroyed');
      readiness.fail(new BridgeError('destroyed', 'the bridge was destroyed'));
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
export type { BridgeContext, ViewportChange } from './child-context';
export type { KvSetOptions } from './child-calls';
export type { KVEntry, KVList, KVSummary } from '../contract/kv';
