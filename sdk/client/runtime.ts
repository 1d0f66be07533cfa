// The runtime-plane client: pairing, sessions, the manifest (with its validator and URL binding),
// launch tickets, reports and the runtime event streams. The web player uses it in the browser with
// its cookies; a kiosk agent or a CLI uses it in Node with an injected fetch and a credential
// header. Each call has a deadline and is tried once (the caller owns backoff: a player must keep
// playing, not wait in a retry loop). A refusal is a MarqueeProblem; a failure to get an answer at
// all (or in time) is anything else but a stop, see isUnreachable.
import {
  CAPTURE_ID_HEADER,
  CAPTURE_METHOD_HEADER,
  PLAYER_HEADER,
  type CaptureMethod,
  type ScreenObservation,
} from '../contract/screen-health';
import { kvCollectionPath, kvKeyPath, PLACEMENT_CAPABILITY_HEADER } from '../contract/kv';
import {
  MANIFEST_FEATURE_UPCOMING,
  MANIFEST_FEATURES_HEADER,
  parseRuntimeManifest,
  type ManifestIssue,
  type RuntimeManifest,
} from '../contract/manifest';
import type { PlaybackAck, PlaybackReport } from '../contract/playback';
import type {
  ReleaseLaunch,
  RuntimeReport,
  RuntimeTime,
  SyncAdvance,
  SyncAdvanceAccepted,
  SyncBarrier,
  SyncLanKey,
} from '../contract/runtime';
import {
  NATIVE_PAIRING_SCHEME,
  type NativeIdentityChallenge,
  type NativeIdentityChallengeRequest,
  type NativeIdentityProof,
  type NativePairingComplete,
  type NativePairingSession,
  type NativePairingStart,
  type NativeRuntimeSession,
} from '../contract/native';
import type { PairingCompletion, PairingSession, RuntimeSession } from '../contract/screens';
import { followEventStream, type EventStream, type EventStreamOptions } from '../sse/event-stream-client';
import { MarqueeProblem } from './problem';
import { ClientTransport, type Method } from './transport';

/**
 * Every runtime call (not the event streams) settles within this: a request on a half-open
 * connection (a Wi-Fi roam, a NAT timeout) or a server that never answers must not stall the
 * player until the browser gives up on the socket. A manifest is small; a launch or a report more so.
 */
export const RUNTIME_CALL_TIMEOUT_MS = 30_000;

export interface RuntimeClientOptions {
  /** Origin of the runtime plane: a player's own origin, a kiosk agent's upstream play origin. */
  runtimeOrigin: string;
  /** Any fetch (Node's, a test's); the global one by default. */
  fetch?: typeof fetch;
  /**
   * Sent with every call and stream: the credential of a client without cookies, such as a kiosk's
   * `Authorization: Marquee-Session …`. A function is read again for each request. Browsers need
   * none: their credential is the runtime cookie, sent with `credentials: 'include'`.
   */
  headers?: Record<string, string> | (() => Record<string, string>);
  /** Per-call deadline (RUNTIME_CALL_TIMEOUT_MS); it covers reading the body too. */
  callTimeoutMs?: number;
  /** Each answer's Date header and the local instant half way through the request, to estimate clock skew. */
  onServerDate?: (serverMs: number, localMs: number) => void;
}

/** The manifest validated against the content origin, or `unchanged` when the validator still holds. */
export type ManifestFetch =
  | { status: 'fresh'; manifest: RuntimeManifest; etag: string | null }
  | { status: 'unchanged' };

/** What a runtime stream takes beyond what the client fills in (its URL, credential and fetch). */
export type RuntimeStreamOptions = Omit<EventStreamOptions, 'url' | 'headers' | 'fetch'>;

/** The server answered with a manifest the player must not play (shape or URL binding). */
export class ManifestRejected extends Error {
  constructor(readonly issues: ManifestIssue[]) {
    super(
      `the manifest was rejected: ${issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
    );
    this.name = 'ManifestRejected';
  }
}

/** True for a failure to reach the server at all, or in time (as opposed to an answer, or the caller stopping). */
export function isUnreachable(error: unknown): boolean {
  return (
    !(error instanceof MarqueeProblem) &&
    !(error instanceof ManifestRejected) &&
    !(error instanceof DOMException && error.name === 'AbortError')
  );
}

export class RuntimeClient {
  readonly origin: string;
  private readonly transport: ClientTransport;
  private readonly callTimeoutMs: number;

  constructor(options: RuntimeClientOptions) {
    this.origin = new URL(options.runtimeOrigin).origin;
    this.callTimeoutMs = options.callTimeoutMs ?? RUNTIME_CALL_TIMEOUT_MS;
    this.transport = new ClientTransport({
      baseUrl: this.origin,
      fetch: options.fetch,
      headers: options.headers,
      // Same-origin cookies by default; `include` when the runtime is configured on another origin.
      credentials: 'include',
      maxAttempts: 1,
      onServerDate: options.onServerDate,
    });
  }

  url(path: string): string {
    return this.origin + path;
  }

  /**
   * One runtime call: the request and reading its answer under one deadline, so neither a silent
   * connection nor a body that stops arriving can hold the caller.
   */
  private async call<T>(
    method: Method,
    path: string,
    options: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal; authenticated?: boolean } = {},
  ): Promise<{ data: T; status: number; headers: Headers }> {
    const deadline = callDeadline(this.callTimeoutMs, options.signal);
    try {
      return await this.transport.request<T>({
        method,
        path,
        json: options.json,
        headers: options.headers,
        authenticated: options.authenticated,
        signal: deadline.signal,
        cache: 'no-store',
      });
    } finally {
      deadline.clear();
    }
  }

  private async data<T>(method: Method, path: string, json?: unknown, signal?: AbortSignal): Promise<T> {
    return (await this.call<T>(method, path, { json, signal })).data;
  }

  startPairing(signal?: AbortSignal): Promise<PairingSession> {
    return this.data('POST', '/runtime/v1/pairing-sessions', undefined, signal);
  }

  /** The pairing stream of the current pairing session: `pairing.claimed` carries the completion nonce. */
  pairingEvents(options: RuntimeStreamOptions): EventStream {
    return this.follow('/runtime/v1/pairing-events', options);
  }

  completePairing(completionNonce: string, signal?: AbortSignal): Promise<PairingCompletion> {
    return this.data('POST', '/runtime/v1/pairing-sessions/complete', { completion_nonce: completionNonce }, signal);
  }

  /** A paired runtime session from the paired-device cookie; names the public id the player was opened at. */
  deviceSession(publicId?: string, signal?: AbortSignal): Promise<RuntimeSession> {
    return this.data(
      'POST',
      '/runtime/v1/device-sessions',
      publicId === undefined ? {} : { public_id: publicId },
      signal,
    );
  }

  /** A read-only session for an anonymous screen opened at its public URL. */
  anonymousSession(publicId: string, signal?: AbortSignal): Promise<RuntimeSession> {
    return this.data('POST', '/runtime/v1/sessions', { public_id: publicId }, signal);
  }

  exchangeProvisioning(
    provisioningToken: string,
    exchangeId: string,
    signal?: AbortSignal,
  ): Promise<PairingCompletion> {
    return this.data(
      'POST',
      '/runtime/v1/browser-provisioning/exchanges',
      { provisioning_token: provisioningToken, exchange_id: exchangeId },
      signal,
    );
  }

  /**
   * The current manifest, validated as a whole against the content origin (shape and URL binding);
   * `unchanged` when the server answers 304 to our validator.
   */
  async manifest(etag: string | null, contentOrigin: string, signal?: AbortSignal): Promise<ManifestFetch> {
    const answer = await this.call<unknown>('GET', '/runtime/v1/manifest', {
      // This build plays `upcoming` (an offline switch at a boundary).
      headers: {
        [MANIFEST_FEATURES_HEADER]: MANIFEST_FEATURE_UPCOMING,
        ...(etag ? { 'If-None-Match': etag } : {}),
      },
      signal,
    });
    if (answer.status === 304) return { status: 'unchanged' };
    const parsed = parseRuntimeManifest(answer.data, contentOrigin);
    if (!parsed.ok) throw new ManifestRejected(parsed.issues);
    return { status: 'fresh', manifest: parsed.manifest, etag: answer.headers.get('etag') };
  }

  /** The session's runtime stream, resumed after `cursor` (the session's `event_cursor`). */
  events(options: RuntimeStreamOptions): EventStream {
    return this.follow('/runtime/v1/events', options);
  }

  /** Asks for a single-use launch ticket of an application placement (the manifest's launchUrl). */
  launch(launchUrl: string, signal?: AbortSignal): Promise<ReleaseLaunch> {
    return this.data('POST', new URL(launchUrl, this.origin).pathname, undefined, signal);
  }

  async report(report: RuntimeReport, signal?: AbortSignal): Promise<void> {
    await this.call('POST', '/runtime/v1/reports', { json: report, signal });
  }

  /**
   * Uploads a batch of proof-of-play reports (each with its own id). The answer acknowledges every
   * report in it, counted, duplicate or refused: the caller may forget them all then.
   */
  reportPlayback(reports: PlaybackReport[], signal?: AbortSignal): Promise<PlaybackAck> {
    return this.data('POST', '/runtime/v1/playback', { reports }, signal);
  }

  /** Answers a screenshot request (screen.screenshot_requested) with a still WebP; 409 once it is stale. */
  async screenshot(
    capture: { captureId: string; method: CaptureMethod; image: Uint8Array | Blob },
    signal?: AbortSignal,
  ): Promise<void> {
    const deadline = callDeadline(this.callTimeoutMs, signal);
    try {
      await this.transport.request({
        method: 'PUT',
        path: '/runtime/v1/screenshot',
        body: capture.image,
        headers: {
          'content-type': 'image/webp',
          [CAPTURE_ID_HEADER]: capture.captureId,
          [CAPTURE_METHOD_HEADER]: capture.method,
        },
        signal: deadline.signal,
        cache: 'no-store',
      });
    } finally {
      deadline.clear();
    }
  }

  /** The surface the player lays its canvas out on, and its build (`<kind>/<version>`). */
  async observation(observation: ScreenObservation, player: string, signal?: AbortSignal): Promise<void> {
    await this.call('PUT', '/runtime/v1/observation', {
      json: observation,
      headers: { [PLAYER_HEADER]: player },
      signal,
    });
  }

  // ---- Native players (a kiosk agent): key-based pairing and identity, no cookies.

  /** Starts native pairing from the device's public key and host facts; the answer holds the `Marquee-Pairing` credential. */
  async startNativePairing(start: NativePairingStart, signal?: AbortSignal): Promise<NativePairingSession> {
    return (
      await this.call<NativePairingSession>('POST', '/runtime/v1/native/pairing-sessions', anonymous(start, signal))
    ).data;
  }

  /** The native pairing stream: `pairing.claimed` carries the completion nonce. */
  nativePairingEvents(pairingCredential: string, options: RuntimeStreamOptions): EventStream {
    return this.follow('/runtime/v1/native/pairing-events', options, {
      authorization: `${NATIVE_PAIRING_SCHEME} ${pairingCredential}`,
    });
  }

  async completeNativePairing(
    pairingCredential: string,
    completion: NativePairingComplete,
    signal?: AbortSignal,
  ): Promise<PairingCompletion> {
    const answer = await this.call<PairingCompletion>('POST', '/runtime/v1/native/pairing-sessions/complete', {
      json: completion,
      headers: { authorization: `${NATIVE_PAIRING_SCHEME} ${pairingCredential}` },
      authenticated: false,
      signal,
    });
    return answer.data;
  }

  async nativeChallenge(
    request: NativeIdentityChallengeRequest,
    signal?: AbortSignal,
  ): Promise<NativeIdentityChallenge> {
    return (
      await this.call<NativeIdentityChallenge>(
        'POST',
        '/runtime/v1/native/identity/challenges',
        anonymous(request, signal),
      )
    ).data;
  }

  /** Mints a `Marquee-Session` from a session.mint proof. */
  async nativeSession(proof: NativeIdentityProof, signal?: AbortSignal): Promise<NativeRuntimeSession> {
    return (
      await this.call<NativeRuntimeSession>('POST', '/runtime/v1/native/identity/sessions', anonymous(proof, signal))
    ).data;
  }

  /** Unbinds the key and tombstones its screen (an identity.reset proof). */
  async nativeReset(proof: NativeIdentityProof, signal?: AbortSignal): Promise<void> {
    await this.call('POST', '/runtime/v1/native/identity/reset', anonymous(proof, signal));
  }

  /**
   * A protected content route (media or package) as a Response whose body is unread, so a mirror
   * can stream it to disk; `range` asks for the rest of a partial download. No deadline: the
   * caller's signal bounds a long transfer.
   */
  async content(
    path: string,
    options: { range?: string; ifRange?: string; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (options.range !== undefined) headers.Range = options.range;
    if (options.ifRange !== undefined) headers['If-Range'] = options.ifRange;
    const { response } = await this.transport.send({
      method: 'GET',
      path,
      headers,
      signal: options.signal,
      cache: 'no-store',
    });
    return response;
  }

  /**
   * A runtime key/value call of an application placement (GET list or entry, PUT, DELETE) with its
   * placement capability; what the parent bridge does for a frame, and a kiosk agent upstream.
   */
  async kv<T>(
    method: 'GET' | 'PUT' | 'DELETE',
    applicationId: string,
    key: string | undefined,
    options: { capability: string; json?: unknown; ifMatch?: number; idempotencyKey?: string; signal?: AbortSignal },
  ): Promise<T> {
    const collection = kvCollectionPath('runtime', applicationId);
    const headers: Record<string, string> = { [PLACEMENT_CAPABILITY_HEADER]: options.capability };
    if (options.ifMatch !== undefined) headers['If-Match'] = `"${options.ifMatch}"`;
    if (options.idempotencyKey !== undefined) headers['Idempotency-Key'] = options.idempotencyKey;
    const answer = await this.call<T>(method, key === undefined ? collection : kvKeyPath(collection, key), {
      json: options.json,
      headers,
      signal: options.signal,
    });
    return answer.data;
  }

  /** One timed exchange with the server clock (lockstep): its stamps of arrival and answer. */
  time(signal?: AbortSignal): Promise<RuntimeTime> {
    return this.data('GET', '/runtime/v1/time', undefined, signal);
  }

  /** Lockstep: the page's controlling application asked for the next page; the group's barrier comes back (and on the stream). */
  syncAdvance(advance: SyncAdvance, signal?: AbortSignal): Promise<SyncAdvanceAccepted> {
    return this.data('POST', '/runtime/v1/sync/advance', advance, signal);
  }

  /** Lockstep: the group's last barrier, for a member that (re)starts after it. */
  syncBarrier(signal?: AbortSignal): Promise<SyncBarrier> {
    return this.data('GET', '/runtime/v1/sync/barrier', undefined, signal);
  }

  /** Lockstep, kiosks: the key of the sync group's LAN messages. */
  syncLanKey(signal?: AbortSignal): Promise<SyncLanKey> {
    return this.data('GET', '/runtime/v1/sync/lan-key', undefined, signal);
  }

  private follow(path: string, options: RuntimeStreamOptions, headers?: Record<string, string>): EventStream {
    return followEventStream({
      ...options,
      url: this.url(path),
      headers: () => headers ?? this.transport.credentialHeaders(),
      fetch: this.transport.fetch,
    });
  }
}

/** A native route that takes no credential (the body carries the proof): never the session header. */
function anonymous(json: unknown, signal?: AbortSignal) {
  return { json, signal, authenticated: false };
}

/**
 * A signal that aborts after `ms` (a TimeoutError: the server counts as unreachable) or when
 * `outer` does (the caller stopping). Built by hand rather than with AbortSignal.timeout/any, which
 * older signage browsers lack; `clear` drops the timer and the listener once the call is over.
 */
function callDeadline(ms: number, outer?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`the runtime did not answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  const onAbort = () => controller.abort(outer!.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
