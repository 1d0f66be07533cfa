// The one way the typed client talks to the control plane: fetch, with the bearer, a request id,
// an idempotency key generated once per call and reused by its retries, If-Match, bounded retries
// of safe cases only, problems as MarqueeProblem, and the revision and credit headers on every
// result. Works in Node (20+) and browsers; no server code.
import { MarqueeNetworkError, MarqueeProblem, type Credits, type ProblemDocument } from './problem';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ClientOptions {
  /** Control-plane origin, e.g. http://localhost:8080 or https://api.example.com. */
  baseUrl: string;
  /** Account or project bearer. */
  token?: string;
  fetch?: typeof fetch;
  /** Attempts per call, the first included (default 3). */
  maxAttempts?: number;
  /** A Retry-After longer than this is not waited for: the problem is thrown instead (default 30 s). */
  maxRetryDelayMs?: number;
  /** Injected for tests; defaults to setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

export interface CallOptions {
  /** Reuse a key you stored (e.g. to retry a call after a crash); otherwise one is generated per call. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface RequestSpec extends CallOptions {
  method: Method;
  /** Path with encoded segments, e.g. `/api/v1/operations/${encodeURIComponent(id)}`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  /** A raw body (archives): bytes, so retries can send it again. */
  body?: Uint8Array | Blob | string;
  headers?: Record<string, string>;
  /** Send an Idempotency-Key (the route records and replays it). */
  idempotent?: boolean;
  /** The revision to guard with If-Match. */
  ifMatch?: number;
  /** Send the bearer (default true; status routes need none). */
  authenticated?: boolean;
}

/** One answer: the body plus what the headers said about it. */
export interface MarqueeResult<T> {
  data: T;
  status: number;
  /** From ETag: the resource revision to send back as If-Match. */
  revision: number | undefined;
  credits: Credits | undefined;
  requestId: string | undefined;
  /** The idempotency key this call used (reuse it to retry the same call later). */
  idempotencyKey: string | undefined;
  headers: Headers;
}

const DEFAULT_ATTEMPTS = 3;
const DEFAULT_MAX_RETRY_DELAY_MS = 30_000;
/** Backoff after a network error: 250 ms, 500 ms, 1 s … with jitter, at most 5 s. */
const NETWORK_BACKOFF_MS = 250;
const NETWORK_BACKOFF_MAX_MS = 5_000;
/** Problems that mean "not processed, come back later" whatever their status (Model A 503, Model P 500/421). */
const RETRYABLE_CODES = new Set(['rate_limited', 'server_draining', 'not_ready', 'dependency_unavailable']);

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function randomBase64Url(length: number): string {
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => B64URL[b & 63]).join('');
}

/** A fresh idempotency key: 22 base64url characters (128 bits). */
export function newIdempotencyKey(): string {
  return randomBase64Url(22);
}

/** The If-Match value for a revision: `"3"`. */
export function ifMatch(revision: number): string {
  if (!Number.isSafeInteger(revision) || revision < 1) throw new RangeError('a revision is a positive integer');
  return `"${revision}"`;
}

/** The revision an ETag carries (`"3"` → 3), or undefined. */
export function revisionOf(etag: string | null | undefined): number | undefined {
  const match = etag ? /^(?:W\/)?"([1-9][0-9]{0,15})"$/.exec(etag.trim()) : null;
  return match ? Number(match[1]) : undefined;
}

export function creditsOf(headers: Headers): Credits | undefined {
  const remaining = headers.get('marquee-credits-remaining');
  if (remaining === null) return undefined;
  return { remaining: Number(remaining), reset: headers.get('marquee-credits-reset') ?? '', included: Number(headers.get('marquee-credits-included') ?? 0) };
}

function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function problemFrom(response: Response): Promise<MarqueeProblem> {
  let document: Partial<ProblemDocument> = {};
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) document = parsed as Partial<ProblemDocument>;
  } catch {
    document = {};
  }
  return new MarqueeProblem(response.status, document, {
    retryAfter: retryAfterSeconds(response.headers),
    credits: creditsOf(response.headers),
    requestId: response.headers.get('x-request-id') ?? undefined,
  });
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ClientTransport {
  private readonly baseUrl: string;
  private readonly doFetch: typeof fetch;
  private readonly maxAttempts: number;
  private readonly maxRetryDelayMs: number;
  /** Waits between retries and polls (injected in tests). */
  readonly sleep: (ms: number) => Promise<void>;
  private token: string | undefined;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_ATTEMPTS);
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
    this.sleep = options.sleep ?? defaultSleep;
    this.token = options.token;
  }

  /** Use another bearer from now on (e.g. the one enrollment just returned). */
  setToken(token: string | undefined): void {
    this.token = token;
  }

  get hasToken(): boolean {
    return this.token !== undefined;
  }

  async request<T>(spec: RequestSpec): Promise<MarqueeResult<T>> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const idempotencyKey = spec.idempotent ? (spec.idempotencyKey ?? newIdempotencyKey()) : undefined;
    const requestId = `req_${randomBase64Url(22)}`;
    const headers: Record<string, string> = { Accept: 'application/json', 'X-Request-Id': requestId, ...spec.headers };
    if (spec.authenticated !== false && this.token) headers.Authorization = `Bearer ${this.token}`;
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    if (spec.ifMatch !== undefined) headers['If-Match'] = ifMatch(spec.ifMatch);
    let body: Uint8Array | Blob | string | undefined = spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['Content-Type'] ??= 'application/json';
    }
    // A network failure after sending leaves the outcome unknown: only reads and keyed writes may repeat.
    const repeatable = spec.method === 'GET' || spec.method === 'HEAD' || idempotencyKey !== undefined;

    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await this.doFetch(url, { method: spec.method, headers, body: body as BodyInit | undefined, signal: spec.signal, redirect: 'error' });
      } catch (error) {
        if (spec.signal?.aborted) throw error;
        if (!repeatable || attempt >= this.maxAttempts) {
          throw new MarqueeNetworkError(`${spec.method} ${spec.path} got no answer: ${(error as Error).message}`, attempt, error);
        }
        const backoff = Math.min(NETWORK_BACKOFF_MAX_MS, NETWORK_BACKOFF_MS * 2 ** (attempt - 1));
        await this.sleep(backoff / 2 + Math.random() * (backoff / 2));
        continue;
      }
      if (response.ok) return this.result<T>(response, idempotencyKey);
      const problem = await problemFrom(response);
      const waitable = problem.retryAfter !== undefined && problem.retryAfter * 1000 <= this.maxRetryDelayMs;
      const notProcessed = response.status === 429 || response.status === 503 || RETRYABLE_CODES.has(problem.code);
      if (!notProcessed || !waitable || attempt >= this.maxAttempts) throw problem;
      await this.sleep(problem.retryAfter! * 1000);
    }
  }

  private async result<T>(response: Response, idempotencyKey: string | undefined): Promise<MarqueeResult<T>> {
    const text = response.status === 204 ? '' : await response.text();
    const type = response.headers.get('content-type') ?? '';
    const data = (text !== '' && type.includes('json') ? JSON.parse(text) : text === '' ? undefined : text) as T;
    return {
      data,
      status: response.status,
      revision: revisionOf(response.headers.get('etag')),
      credits: creditsOf(response.headers),
      requestId: response.headers.get('x-request-id') ?? undefined,
      idempotencyKey,
      headers: response.headers,
    };
  }
}
