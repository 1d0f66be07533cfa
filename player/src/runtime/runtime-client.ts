// The player's client for the runtime plane: pairing, sessions, the manifest (with its validator and
// URL binding), launch tickets and reports. Every call goes to the configured runtime origin with
// its cookies; an HTTP refusal becomes a RuntimeRefusal carrying the problem's code, a network
// failure stays a TypeError (the server is unreachable: play on from what is cached).
import { parseRuntimeManifest, type ManifestIssue, type RuntimeManifest } from '../../../sdk/contract/manifest';
import { MANIFEST_ACTIVATED, type ReleaseLaunch, type RuntimeReport } from '../../../sdk/contract/runtime';
import type { PairingCompletion, PairingSession, RuntimeSession } from '../../../sdk/contract/screens';

export { MANIFEST_ACTIVATED };

export class RuntimeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly problem?: Record<string, unknown>,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = 'RuntimeRefusal';
  }
}

/** True for a failure to reach the server at all, or in time (as opposed to an answer, or the player stopping). */
export function isUnreachable(error: unknown): boolean {
  return (
    !(error instanceof RuntimeRefusal) &&
    !(error instanceof ManifestRejected) &&
    !(error instanceof DOMException && error.name === 'AbortError')
  );
}

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

export type ManifestFetch =
  | { status: 'fresh'; manifest: RuntimeManifest; etag: string | null }
  | { status: 'unchanged' };

/**
 * Every runtime call (not the event streams) settles within this: a request on a half-open
 * connection (a Wi-Fi roam, a NAT timeout) or a server that never answers must not stall the
 * player until the browser gives up on the socket. A manifest is small; a launch or a report more so.
 */
export const RUNTIME_CALL_TIMEOUT_MS = 30_000;

export interface RuntimeClientOptions {
  runtimeOrigin: string;
  fetch?: typeof fetch;
  /** Per-call deadline (RUNTIME_CALL_TIMEOUT_MS); it covers reading the body too. */
  callTimeoutMs?: number;
  /** Each answer's Date header and the local instant half way through the request, to estimate clock skew. */
  onServerDate?: (serverMs: number, localMs: number) => void;
}

export class RuntimeClient {
  readonly origin: string;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: RuntimeClientOptions) {
    this.origin = new URL(options.runtimeOrigin).origin;
    this.doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  url(path: string): string {
    return this.origin + path;
  }

  /** Same-origin cookies by default; `include` when the runtime is configured on another origin. */
  readonly fetchWithCookies: typeof fetch = (input, init) => this.doFetch(input, { ...init, credentials: 'include' });

  /**
   * One runtime call: the request and `read` (which consumes the answer's body) under one deadline,
   * so neither a silent connection nor a body that stops arriving can hold the caller.
   */
  private async call<T>(
    method: string,
    path: string,
    options: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if (options.json !== undefined) headers['Content-Type'] = 'application/json';
    const deadline = callDeadline(this.options.callTimeoutMs ?? RUNTIME_CALL_TIMEOUT_MS, options.signal);
    try {
      const sent = Date.now();
      const response = await this.doFetch(this.url(path), {
        method,
        headers,
        body: options.json === undefined ? undefined : JSON.stringify(options.json),
        credentials: 'include',
        cache: 'no-store',
        redirect: 'error',
        signal: deadline.signal,
      });
      const date = Date.parse(response.headers.get('date') ?? '');
      if (Number.isFinite(date)) this.options.onServerDate?.(date, (sent + Date.now()) / 2);
      return await read(response);
    } finally {
      deadline.clear();
    }
  }

  private async expect<T>(response: Response, ...ok: number[]): Promise<T> {
    if (!ok.includes(response.status)) throw await refusal(response);
    if (response.status === 202 || response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  startPairing(signal?: AbortSignal): Promise<PairingSession> {
    return this.call('POST', '/runtime/v1/pairing-sessions', { signal }, (r) => this.expect(r, 201));
  }

  completePairing(completionNonce: string, signal?: AbortSignal): Promise<PairingCompletion> {
    return this.call(
      'POST',
      '/runtime/v1/pairing-sessions/complete',
      { json: { completion_nonce: completionNonce }, signal },
      (r) => this.expect(r, 200),
    );
  }

  /** A paired runtime session from the paired-device cookie; names the public id the player was opened at. */
  deviceSession(publicId?: string, signal?: AbortSignal): Promise<RuntimeSession> {
    return this.call(
      'POST',
      '/runtime/v1/device-sessions',
      { json: publicId === undefined ? {} : { public_id: publicId }, signal },
      (r) => this.expect(r, 201),
    );
  }

  /** A read-only session for an anonymous screen opened at its public URL. */
  anonymousSession(publicId: string, signal?: AbortSignal): Promise<RuntimeSession> {
    return this.call('POST', '/runtime/v1/sessions', { json: { public_id: publicId }, signal }, (r) =>
      this.expect(r, 201),
    );
  }

  exchangeProvisioning(
    provisioningToken: string,
    exchangeId: string,
    signal?: AbortSignal,
  ): Promise<PairingCompletion> {
    return this.call(
      'POST',
      '/runtime/v1/browser-provisioning/exchanges',
      { json: { provisioning_token: provisioningToken, exchange_id: exchangeId }, signal },
      (r) => this.expect(r, 201),
    );
  }

  /**
   * The current manifest, validated as a whole against the content origin (shape and URL binding);
   * `unchanged` when the server answers 304 to our validator.
   */
  manifest(etag: string | null, contentOrigin: string, signal?: AbortSignal): Promise<ManifestFetch> {
    return this.call(
      'GET',
      '/runtime/v1/manifest',
      { headers: etag ? { 'If-None-Match': etag } : {}, signal },
      async (response): Promise<ManifestFetch> => {
        if (response.status === 304) return { status: 'unchanged' };
        const body = await this.expect<unknown>(response, 200);
        const parsed = parseRuntimeManifest(body, contentOrigin);
        if (!parsed.ok) throw new ManifestRejected(parsed.issues);
        return { status: 'fresh', manifest: parsed.manifest, etag: response.headers.get('etag') };
      },
    );
  }

  /** Asks for a single-use launch ticket of an application placement (the manifest's launchUrl). */
  launch(launchUrl: string, signal?: AbortSignal): Promise<ReleaseLaunch> {
    const path = new URL(launchUrl, this.origin).pathname;
    return this.call('POST', path, { signal }, (r) => this.expect(r, 201));
  }

  report(report: RuntimeReport, signal?: AbortSignal): Promise<void> {
    return this.call('POST', '/runtime/v1/reports', { json: report, signal }, (r) => this.expect(r, 202, 204));
  }
}

/**
 * A signal that aborts after `ms` (a TimeoutError: the server counts as unreachable) or when
 * `outer` does (the player stopping). Built by hand rather than with AbortSignal.timeout/any, which
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

async function refusal(response: Response): Promise<RuntimeRefusal> {
  let problem: Record<string, unknown> | undefined;
  try {
    problem = (await response.json()) as Record<string, unknown>;
  } catch {
    problem = undefined;
  }
  const code = typeof problem?.code === 'string' ? problem.code : `http_${response.status}`;
  const detail = typeof problem?.detail === 'string' ? problem.detail : response.statusText;
  return new RuntimeRefusal(response.status, code, detail, problem);
}
