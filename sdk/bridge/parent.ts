// The parent side of the app bridge, used by the player to host one application frame: it sends
// the handshake challenge to the frame's exact release origin, checks every message from the frame
// (source window, origin, placement, activation, shape, size), enforces the placement's
// capabilities, and turns KV requests into runtime KV calls. The placement capability is added by
// the injected call and never enters the frame.
import {
  BRIDGE_PROTOCOL,
  checkChildPayload,
  decodeChildHandshake,
  decodeEnvelope,
  HANDSHAKE_PROTOCOL,
  isChildKind,
  isHandshakeLike,
  MESSAGE_MAX_BYTES,
  messageBytes,
  newMessageId,
  PROBLEM_DETAIL_MAX,
  randomToken,
  type BridgeCapabilities,
  type BridgeErrorCode,
  type BridgeProblem,
  type ChildKind,
  type ChildPayloads,
  type LogLevel,
  type ParentKind,
  type ParentPayloads,
  type Size,
} from './protocol';
import { kvCollectionPath, KvKeyError, kvKeyPath } from '../contract/kv';

/** The frame gets this long to answer the handshake; it is re-sent until then. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
export const HANDSHAKE_RETRY_MS = 250;
/** A KV call answers before the child's 10 s ack timeout, so the app hears why. */
export const KV_CALL_TIMEOUT_MS = 8_000;
/** Concurrent KV calls per frame; more is rate_limited rather than queued without bound. */
export const KV_MAX_IN_FLIGHT = 8;
/** Per-frame budgets per minute: events become durable account events, logs reach the player log. */
export const EVENTS_PER_MINUTE = 30;
export const LOGS_PER_MINUTE = 120;
/** Message ids remembered per document to drop replays. */
const SEEN_IDS_MAX = 2048;

/**
 * Recommended frame attributes: scripts run on the release's own origin (so its release-grant
 * cookie works), but the frame cannot navigate the player, open popups or submit forms, sends no
 * referrer, and gets no powerful features.
 */
export const APPLICATION_FRAME_SANDBOX = 'allow-scripts allow-same-origin';

export function prepareApplicationFrame(frame: HTMLIFrameElement): void {
  frame.setAttribute('sandbox', APPLICATION_FRAME_SANDBOX);
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.setAttribute('allow', '');
}

export interface RuntimeKvRequest {
  method: 'GET' | 'PUT' | 'DELETE';
  /** Path on the runtime origin: /runtime/v1/apps/{application_id}/kv[/{key}], or the list with `?cursor=`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** Performs one runtime KV call; the player's implementation adds Marquee-Placement-Capability. */
export type RuntimeKvCall = (request: RuntimeKvRequest) => Promise<Response>;

export const PLACEMENT_CAPABILITY_HEADER = 'Marquee-Placement-Capability';

/**
 * The usual RuntimeKvCall: fetch on the runtime origin with the runtime cookie and the current
 * placement capability (read at call time, so a manifest refresh takes effect at once).
 */
export function runtimeKvFetch(options: {
  runtimeOrigin: string;
  capabilityHandle: () => string;
  fetch?: typeof fetch;
}): RuntimeKvCall {
  const origin = new URL(options.runtimeOrigin).origin;
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  return (request) =>
    doFetch(origin + request.path, {
      method: request.method,
      headers: { ...request.headers, [PLACEMENT_CAPABILITY_HEADER]: options.capabilityHandle() },
      body: request.body,
      credentials: 'include',
      cache: 'no-store',
      redirect: 'error',
      signal: request.signal,
    });
}

export interface ApplicationLog {
  level: LogLevel;
  code: string;
  message: string;
  generation: number;
}

export interface BridgeDiagnostic {
  code: BridgeErrorCode | 'duplicate_message' | 'rate_limited' | 'handshake_timeout';
  detail: string;
}

export interface ApplicationFrameOptions {
  frame: HTMLIFrameElement;
  /** The release host origin (manifest `content.origin`): the only origin the frame may speak from. */
  releaseOrigin: string;
  placementId: string;
  applicationId: string;
  releaseId: string;
  screenId?: string;
  capabilities: BridgeCapabilities;
  viewport: Size;
  placement: Size;
  runtimeKv: RuntimeKvCall;
  onReady?(generation: number): void;
  /** The controlling application asked for the next page (at most once per activation). */
  onAdvance?(generation: number): void;
  onEvent?(code: string, generation: number): void;
  onLog?(entry: ApplicationLog): void;
  /** Why a message was ignored or refused. */
  onDiagnostic?(diagnostic: BridgeDiagnostic): void;
  /** The player's window; defaults to the global one. */
  window?: Window;
  now?: () => number;
  handshakeTimeoutMs?: number;
  kvTimeoutMs?: number;
}

/**
 * `smaller`: what to send instead when `result` exceeds the message limit. A stored write's entry
 * echoes the value the frame sent, which the child fills back in; without it the frame would hear
 * "too large" for a write that was stored.
 */
type Answer = { ok: true; result: unknown; smaller?: unknown } | { ok: false; problem: BridgeProblem };

class MinuteBudget {
  private windowStart = 0;
  private used = 0;
  constructor(
    private readonly limit: number,
    private readonly now: () => number,
  ) {}
  take(): boolean {
    const t = this.now();
    if (t - this.windowStart >= 60_000) {
      this.windowStart = t;
      this.used = 0;
    }
    return this.used++ < this.limit;
  }
}

/** Hosts one application frame. Create it before setting the frame's src; each load handshakes anew. */
export class ApplicationFrameBridge {
  private readonly win: Window;
  private readonly ownOrigin: string;
  private readonly releaseOrigin: string;
  private readonly now: () => number;
  private capabilities: BridgeCapabilities;
  private viewport: Size;
  private placement: Size;
  private challenge = '';
  /** A document of the launch answered the challenge: messages carrying it are the release's. */
  private connected = false;
  /** The frame's current document answered (each load asks again). */
  private answered = false;
  private destroyed = false;
  private active = false;
  private advanced = false;
  private currentGeneration = 0;
  private inFlight = 0;
  private seen = new Set<string>();
  private retryTimer: ReturnType<typeof setInterval> | undefined;
  private giveUpTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly events: MinuteBudget;
  private readonly logs: MinuteBudget;

  constructor(private readonly options: ApplicationFrameOptions) {
    this.win = options.window ?? window;
    this.ownOrigin = this.win.location.origin;
    this.releaseOrigin = new URL(options.releaseOrigin).origin;
    if (this.releaseOrigin === this.ownOrigin) throw new Error('an application frame must not share the player origin');
    this.now = options.now ?? (() => Date.now());
    this.capabilities = { ...options.capabilities };
    this.viewport = { ...options.viewport };
    this.placement = { ...options.placement };
    this.events = new MinuteBudget(EVENTS_PER_MINUTE, this.now);
    this.logs = new MinuteBudget(LOGS_PER_MINUTE, this.now);
    this.win.addEventListener('message', this.onMessage);
    options.frame.addEventListener('load', this.onLoad);
  }

  /** True once a document of the launch answered the handshake (it stays so across the frame's loads). */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Whether a document that may be the release has loaded (a handshake round was begun for it). */
  get handshakeBegun(): boolean {
    return this.challenge !== '';
  }

  get generation(): number {
    return this.currentGeneration;
  }

  /** The placement comes on glass: a new activation (generation), page.advance rearmed, context sent. */
  activate(): number {
    this.currentGeneration++;
    this.active = true;
    this.advanced = false;
    if (this.connected) this.sendContext();
    return this.currentGeneration;
  }

  /** The placement left the glass: page.advance is refused until the next activation. */
  deactivate(): void {
    this.active = false;
  }

  /** The player's viewport or the placement's box changed; the frame hears it only when a size did change. */
  setViewport(viewport: Size, placement: Size): void {
    const unchanged = sameSize(viewport, this.viewport) && sameSize(placement, this.placement);
    this.viewport = { ...viewport };
    this.placement = { ...placement };
    if (!unchanged && this.connected && this.currentGeneration > 0) {
      this.send('viewport.changed', {
        generation: this.currentGeneration,
        nonce: this.challenge,
        viewport: this.viewport,
        placement: this.placement,
      });
    }
  }

  /** New capabilities (a refreshed manifest): the frame hears them in a context of the same generation. */
  setCapabilities(capabilities: BridgeCapabilities): void {
    this.capabilities = { ...capabilities };
    if (this.connected && this.currentGeneration > 0) this.sendContext();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.stopHandshake();
    this.win.removeEventListener('message', this.onMessage);
    this.options.frame.removeEventListener('load', this.onLoad);
  }

  private diagnose(code: BridgeDiagnostic['code'], detail: string): void {
    this.options.onDiagnostic?.({ code, detail });
  }

  private readonly onLoad = () => {
    // The frame's initial about:blank is never the release: no round for it (D-399).
    if (this.holdsNoRelease()) return this.stopHandshake();
    this.handshake();
  };

  /** The frame has no page of ours yet (no src), or holds a document of the player's own origin (about:blank). */
  private holdsNoRelease(): boolean {
    const src = this.options.frame.getAttribute('src');
    if (src === null || src === '' || src === 'about:blank') return true;
    try {
      // Readable only for a document of the player's own origin, which a release never has.
      return this.options.frame.contentWindow?.location.href !== undefined;
    } catch {
      return false;
    }
  }

  /**
   * Handshakes with the frame's current document (done on every load). Call it yourself only when
   * the bridge is attached to a frame that already loaded.
   *
   * The challenge is the launch's: made for the first round, and sent again in each round after
   * (D-403). The retries of a round go to the frame's window, whatever document it holds, so a
   * document can hear the round of the document before it (a loader page, a page that navigated)
   * before its own load begins a new one. It pins the first challenge it hears and answers no
   * other; a new challenge per load would then never be answered.
   */
  handshake(): void {
    if (this.destroyed) return;
    // A new document: it hears the challenge again and, once it answers, the context. Its requests
    // count meanwhile: carrying the challenge, they come from a document that pinned it, which may
    // have happened before this load (a retry of the round before reached it), and may be made
    // from this very load's handlers.
    this.stopHandshake();
    this.answered = false;
    this.seen = new Set();
    if (this.challenge === '') this.challenge = randomToken(32);
    const handshake = { protocol: HANDSHAKE_PROTOCOL, kind: 'parent.handshake', challenge: this.challenge };
    const post = () => this.options.frame.contentWindow?.postMessage(handshake, this.releaseOrigin);
    post();
    this.retryTimer = setInterval(post, HANDSHAKE_RETRY_MS);
    this.giveUpTimer = setTimeout(() => {
      this.stopHandshake();
      this.diagnose(
        'handshake_timeout',
        `the frame did not answer the handshake within ${this.options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS} ms`,
      );
    }, this.options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS);
  }

  private stopHandshake(): void {
    clearInterval(this.retryTimer);
    clearTimeout(this.giveUpTimer);
    this.retryTimer = undefined;
    this.giveUpTimer = undefined;
  }

  private send<K extends ParentKind>(kind: K, payload: ParentPayloads[K]): boolean {
    const message = {
      protocol: BRIDGE_PROTOCOL,
      message_id: newMessageId(),
      kind,
      placement_id: this.options.placementId,
      payload,
    };
    if (messageBytes(message) > MESSAGE_MAX_BYTES) return false;
    this.options.frame.contentWindow?.postMessage(message, this.releaseOrigin);
    return true;
  }

  private sendContext(): void {
    const payload: ParentPayloads['context'] = {
      application_id: this.options.applicationId,
      release_id: this.options.releaseId,
      placement_id: this.options.placementId,
      generation: this.currentGeneration,
      nonce: this.challenge,
      player_origin: this.ownOrigin,
      capabilities: { ...this.capabilities },
      viewport: this.viewport,
      placement: this.placement,
    };
    if (this.options.screenId !== undefined) payload.screen_id = this.options.screenId;
    this.send('context', payload);
  }

  private answer(requestId: string, generation: number, answer: Answer): void {
    const base = { request_message_id: requestId, generation, nonce: this.challenge };
    if (answer.ok) {
      if (this.send('response.ack', { ...base, result: answer.result })) return;
      if (answer.smaller !== undefined && this.send('response.ack', { ...base, result: answer.smaller })) return;
      answer = {
        ok: false,
        problem: localProblem(
          'message_too_large',
          413,
          `the answer exceeds the bridge's ${MESSAGE_MAX_BYTES} byte message limit`,
          requestId,
        ),
      };
    }
    this.send('response.problem', { ...base, problem: answer.problem });
  }

  private readonly onMessage = (event: MessageEvent) => {
    if (this.destroyed) return;
    const frameWindow = this.options.frame.contentWindow;
    if (!frameWindow || event.source !== frameWindow) return; // other windows: not ours
    if (event.origin !== this.releaseOrigin)
      return this.diagnose('untrusted_origin', `message from ${event.origin}, not the release origin`);
    if (isHandshakeLike(event.data)) return this.onChildHandshake(event.data);
    if (!this.connected) return this.diagnose('inert', 'message before the handshake');
    const decoded = decodeEnvelope(event.data);
    if (!decoded.ok) return this.diagnose(decoded.code, decoded.detail);
    const { kind, payload, message_id: messageId, placement_id: placementId } = decoded.value;
    if (placementId !== this.options.placementId)
      return this.diagnose('invalid_placement', `message for placement ${placementId}`);
    if (!isChildKind(kind)) return; // unknown kinds are ignored
    if (this.seen.has(messageId)) return this.diagnose('duplicate_message', `message ${messageId} was already handled`);
    if (this.seen.size >= SEEN_IDS_MAX) this.seen.clear();
    this.seen.add(messageId);
    const current = payload.generation === this.currentGeneration && payload.nonce === this.challenge;
    const checked = checkChildPayload(kind, payload);
    if (!checked.ok) {
      // Refuse a malformed request out loud when the child can match the answer; else drop it.
      if (current && kind !== 'log' && kind !== 'event.emit')
        this.answer(messageId, this.currentGeneration, {
          ok: false,
          problem: localProblem(checked.code, 400, checked.detail, messageId),
        });
      return this.diagnose(checked.code, checked.detail);
    }
    if (!current) return this.diagnose('invalid_generation', `${kind} for another activation or document`);
    void this.handle(kind, checked.value, messageId);
  };

  private onChildHandshake(data: unknown): void {
    const handshake = decodeChildHandshake(data);
    if (!handshake.ok) return this.diagnose(handshake.code, handshake.detail);
    if (handshake.value.challenge !== this.challenge || this.challenge === '')
      return this.diagnose('invalid_handshake', 'child handshake with another challenge');
    if (handshake.value.parent_origin !== this.ownOrigin)
      return this.diagnose('invalid_player_origin', 'the child pinned another parent origin');
    // Repeats of this load's answer (the child answers every retry that reached it) change nothing.
    if (this.answered) return;
    this.answered = true;
    this.connected = true;
    this.stopHandshake();
    if (this.active) this.sendContext();
  }

  private async handle(kind: ChildKind, payload: ChildPayloads[ChildKind], messageId: string): Promise<void> {
    const generation = this.currentGeneration;
    const deny = (detail: string) =>
      this.answer(messageId, generation, {
        ok: false,
        problem: localProblem('capability_denied', 403, detail, messageId),
      });
    switch (kind) {
      case 'ready':
        this.answer(messageId, generation, { ok: true, result: null });
        this.options.onReady?.(generation);
        return;
      case 'log': {
        if (!this.logs.take()) return this.diagnose('rate_limited', `more than ${LOGS_PER_MINUTE} logs in a minute`);
        const p = payload as ChildPayloads['log'];
        this.options.onLog?.({ level: p.level, code: p.code, message: p.message, generation });
        return;
      }
      case 'event.emit':
        if (!this.events.take())
          return this.diagnose('rate_limited', `more than ${EVENTS_PER_MINUTE} events in a minute`);
        this.options.onEvent?.((payload as ChildPayloads['event.emit']).code, generation);
        return;
      case 'page.advance':
        if (!this.capabilities['page.advance']) return deny('this placement does not have the page.advance capability');
        if (!this.active) return deny('the placement is not on glass');
        if (this.advanced) return deny('page.advance was already used in this activation');
        this.advanced = true;
        this.answer(messageId, generation, { ok: true, result: null });
        this.options.onAdvance?.(generation);
        return;
      default: {
        const needed = kind === 'kv.get' || kind === 'kv.list' ? 'kv.read' : 'kv.write';
        if (!this.capabilities[needed]) return deny(`this placement does not have the ${needed} capability`);
        if (this.inFlight >= KV_MAX_IN_FLIGHT) {
          return this.answer(messageId, generation, {
            ok: false,
            problem: localProblem('rate_limited', 429, `at most ${KV_MAX_IN_FLIGHT} KV requests at a time`, messageId),
          });
        }
        this.inFlight++;
        try {
          const answer = await this.callKv(
            kind,
            payload as ChildPayloads['kv.get' | 'kv.list' | 'kv.set' | 'kv.delete'],
            messageId,
          );
          // The frame may have reloaded or been reactivated meanwhile; the child would drop it anyway.
          if (!this.destroyed && generation === this.currentGeneration) this.answer(messageId, generation, answer);
        } finally {
          this.inFlight--;
        }
      }
    }
  }

  private async callKv(
    kind: ChildKind,
    payload: Partial<ChildPayloads['kv.set'] & ChildPayloads['kv.delete'] & ChildPayloads['kv.list']>,
    messageId: string,
  ): Promise<Answer> {
    const base = kvCollectionPath('runtime', this.options.applicationId);
    let keyPath = base;
    try {
      if (payload.key !== undefined) keyPath = kvKeyPath(base, payload.key);
    } catch (error) {
      // checkChildPayload refused such keys already; the frame hears why all the same, never silence.
      if (error instanceof KvKeyError)
        return { ok: false, problem: localProblem('invalid_key', 400, error.message, messageId) };
      throw error;
    }
    const headers: Record<string, string> = { Accept: 'application/json' };
    let request: Omit<RuntimeKvRequest, 'signal'>;
    if (kind === 'kv.get') request = { method: 'GET', path: keyPath, headers };
    else if (kind === 'kv.list')
      request = {
        method: 'GET',
        path: payload.cursor === undefined ? base : `${base}?cursor=${encodeURIComponent(payload.cursor)}`,
        headers,
      };
    else {
      headers['Idempotency-Key'] = payload.idempotency_key!;
      if (payload.expected_revision !== undefined) headers['If-Match'] = `"${payload.expected_revision}"`;
      if (kind === 'kv.set') {
        headers['Content-Type'] = 'application/json';
        request = {
          method: 'PUT',
          path: keyPath,
          headers,
          body: JSON.stringify({ value_base64: payload.value_base64, content_type: payload.content_type }),
        };
      } else {
        request = { method: 'DELETE', path: keyPath, headers };
      }
    }
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), this.options.kvTimeoutMs ?? KV_CALL_TIMEOUT_MS);
    try {
      const response = await this.options.runtimeKv({ ...request, signal: controller.signal });
      const answer = await answerFromResponse(response, messageId);
      if (kind === 'kv.set' && answer.ok && typeof answer.result === 'object' && answer.result !== null) {
        const { value_base64: _echo, ...entry } = answer.result as Record<string, unknown>;
        answer.smaller = entry;
      }
      return answer;
    } catch {
      const detail = controller.signal.aborted
        ? 'the runtime did not answer in time'
        : 'the runtime could not be reached';
      return { ok: false, problem: localProblem('dependency_unavailable', 503, detail, messageId) };
    } finally {
      clearTimeout(timeout);
    }
  }
}

function sameSize(a: Size, b: Size): boolean {
  return a.width === b.width && a.height === b.height;
}

function localProblem(code: string, status: number, detail: string, requestId: string): BridgeProblem {
  return { code, status, detail: detail.slice(0, PROBLEM_DETAIL_MAX), request_id: requestId };
}

/** A runtime KV response as the child hears it: the body on success, the server's problem otherwise. */
async function answerFromResponse(response: Response, messageId: string): Promise<Answer> {
  if (response.status === 204) return { ok: true, result: null };
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (response.ok) {
    if (body === undefined)
      return {
        ok: false,
        problem: localProblem('invalid_response', 502, 'the runtime answered with no JSON body', messageId),
      };
    return { ok: true, result: body };
  }
  const p = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const code =
    typeof p.code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(p.code) ? p.code : statusCode(response.status);
  const requestId =
    typeof p.request_id === 'string' ? p.request_id.slice(0, 128) : (response.headers.get('x-request-id') ?? messageId);
  const problem: BridgeProblem = {
    code,
    status: response.status,
    detail: (typeof p.detail === 'string' ? p.detail : `the runtime answered ${response.status}`).slice(
      0,
      PROBLEM_DETAIL_MAX,
    ),
    request_id: requestId,
  };
  if (typeof p.current_revision === 'number' && Number.isSafeInteger(p.current_revision) && p.current_revision >= 1)
    problem.current_revision = p.current_revision;
  return { ok: false, problem };
}

function statusCode(status: number): string {
  if (status === 404) return 'not_found';
  if (status === 412) return 'revision_conflict';
  if (status === 429) return 'rate_limited';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status >= 400 && status < 500) return 'invalid_request';
  return 'internal_error';
}

export type { BridgeCapabilities, Size } from './protocol';
