// The one way the typed clients talk to the server (control plane and runtime plane): fetch, with
// the credential (a bearer, other headers, browser cookies), a request id, an idempotency key
// generated once per call and reused by its retries, If-Match, bounded retries of safe cases only,
// problems as MarqueeProblem, and the revision and credit headers on every result. Works in Node
// (20+) and browsers; no server code.
import { MarqueeNetworkError, MarqueeProblem, type Credits, type ProblemDocument } from './problem';
import { bodySize, prepareBody, type RawBody, type UploadProgress } from './upload-body';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ClientOptions {
  /** Control-plane origin, e.g. http://localhost:8080 or https://api.example.com. */
  baseUrl: string;
  /** Account or project bearer. */
  token?: string;
  /**
   * Sent with every call and stream (never to a signed URL): a credential of another scheme, such as
   * a kiosk's `Authorization: Marquee-Session …`. A function is read again for each request, so a
   * renewed credential is used at once. A bearer (`token`) wins over an Authorization given here.
   */
  headers?: Record<string, string> | (() => Record<string, string>);
  /**
   * Whether browsers send cookies (the runtime plane's credential is a cookie): `include` sends
   * them to another origin too. Node's fetch keeps no cookies, so there it changes nothing.
   */
  credentials?: RequestCredentials;
  fetch?: typeof fetch;
  /** Attempts per call, the first included (default 3). */
  maxAttempts?: number;
  /** A Retry-After longer than this is not waited for: the problem is thrown instead (default 30 s). */
  maxRetryDelayMs?: number;
  /** Injected for tests; defaults to setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Each answer's Date header and the local instant half way through the request (clock skew). */
  onServerDate?: (serverMs: number, localMs: number) => void;
  /** Told before each retry and its wait (a CLI says "rate limited, retrying in 2 s"). */
  onRetry?: (retry: RetryNotice) => void;
}

/** Why a call is about to be sent again, and after how long. */
export interface RetryNotice {
  /** `METHOD /path` (never a signed URL). */
  label: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  /** A network failure (no answer), or a problem that asked to come back later (429, 503 …). */
  reason: 'network' | 'problem';
  problem?: MarqueeProblem;
}

export interface CallOptions {
  /** Reuse a key you stored (e.g. to retry a call after a crash); otherwise one is generated per call. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A revision, or anything that carries one: a resource (`{revision}`) or a client result. */
export type Revisioned = number | { readonly revision?: number | undefined };

/** Options of calls that change a revisioned resource. */
export interface GuardedCallOptions extends CallOptions {
  /** Sent as If-Match: the write fails with 412 revision_conflict when the resource moved on. */
  ifMatch?: Revisioned;
}

export interface RequestSpec extends CallOptions {
  method: Method;
  /** Path with encoded segments, e.g. `/api/v1/operations/${encodeURIComponent(id)}`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  /** A raw body (archives). Bytes and Blobs are sent again on a retry; a stream function is called again. */
  body?: RawBody;
  headers?: Record<string, string>;
  /** Send an Idempotency-Key (the route records and replays it). */
  idempotent?: boolean;
  /** The revision to guard with If-Match. */
  ifMatch?: Revisioned;
  /** Send the bearer (default true; status routes need none). */
  authenticated?: boolean;
  /** The browser's HTTP cache mode (`no-store`: never answered from, nor kept in, the cache). */
  cache?: RequestCache;
  /** Bytes of `body` sent so far (counted as they go where the platform streams request bodies). */
  onUploadProgress?: (progress: UploadProgress) => void;
}

/** A request to a signed URL: sent exactly as issued, with no bearer and no header of ours. */
export interface SignedRequest {
  url: string;
  method: Method;
  headers: Record<string, string>;
  body: RawBody;
  signal?: AbortSignal;
  onUploadProgress?: (progress: UploadProgress) => void;
  /** Told of each attempt that got no answer (a later refusal may then mean that attempt arrived). */
  onNetworkError?: () => void;
}

/** What the headers of an answer said, beside its body. */
export interface ResultMeta {
  status: number;
  /** From ETag: the resource revision to send back as If-Match. */
  revision: number | undefined;
  /** Model P credit headers; absent on Model A, unauthenticated, stream and binary answers. */
  credits: Credits | undefined;
  requestId: string | undefined;
  /** The idempotency key this call used (reuse it to retry the same call later). */
  idempotencyKey: string | undefined;
  headers: Headers;
}

/** One answer: the body plus what the headers said about it. */
export interface MarqueeResult<T> extends ResultMeta {
  data: T;
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

/** The If-Match value for a revision, or for a resource or result that carries one: `"3"`. */
export function ifMatch(revisioned: Revisioned): string {
  const revision = typeof revisioned === 'number' ? revisioned : revisioned.revision;
  // A resource without a revision would silently drop the guard: refuse it instead.
  if (revision === undefined || !Number.isSafeInteger(revision) || revision < 1)
    throw new RangeError('If-Match needs a positive integer revision');
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
  return {
    remaining: Number(remaining),
    reset: headers.get('marquee-credits-reset') ?? '',
    included: Number(headers.get('marquee-credits-included') ?? 0),
  };
}

function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function problemFrom(response: Response): Promise<MarqueeProblem> {
  return problemOf(response.status, await response.text().catch(() => ''), response.headers);
}

/** The problem an answer's status, body text and headers make (a body that is not a JSON object says nothing). */
export function problemOf(status: number, text: string, headers: Headers): MarqueeProblem {
  let document: Partial<ProblemDocument> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      document = parsed as Partial<ProblemDocument>;
  } catch {
    document = {};
  }
  return new MarqueeProblem(status, document, {
    retryAfter: retryAfterSeconds(headers),
    credits: creditsOf(headers),
    requestId: headers.get('x-request-id') ?? undefined,
  });
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One exchange, ready to send again on a retry. */
interface Exchange {
  url: URL;
  method: Method;
  headers: Record<string, string>;
  body?: RawBody;
  signal?: AbortSignal;
  cache?: RequestCache;
  onUploadProgress?: (progress: UploadProgress) => void;
  /** Whether a network failure after sending may be repeated (reads, keyed writes, signed PUTs). */
  repeatable: boolean;
  /** For error messages: never the URL itself, which may be a credential. */
  label: string;
}

export class ClientTransport {
  readonly baseUrl: string;
  /** The fetch every call uses (also the event stream's), with the configured `credentials`. */
  readonly fetch: typeof fetch;
  private readonly maxAttempts: number;
  private readonly maxRetryDelayMs: number;
  /** Waits between retries and polls (injected in tests). */
  readonly sleep: (ms: number) => Promise<void>;
  private token: string | undefined;
  private readonly headers: ClientOptions['headers'];
  private readonly onServerDate: ClientOptions['onServerDate'];
  private readonly onRetry: ClientOptions['onRetry'];

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const credentials = options.credentials;
    this.fetch = credentials === undefined ? fetchImpl : (input, init) => fetchImpl(input, { ...init, credentials });
    this.maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_ATTEMPTS);
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
    this.sleep = options.sleep ?? defaultSleep;
    this.token = options.token;
    this.headers = options.headers;
    this.onServerDate = options.onServerDate;
    this.onRetry = options.onRetry;
  }

  /** Use another bearer from now on (e.g. the one enrollment just returned). */
  setToken(token: string | undefined): void {
    this.token = token;
  }

  get hasToken(): boolean {
    return this.token !== undefined;
  }

  /** The configured headers and the current bearer (for streams opened outside `request`). */
  credentialHeaders(): Record<string, string> {
    const given = { ...(typeof this.headers === 'function' ? this.headers() : this.headers) };
    if (!this.token) return given;
    for (const name of Object.keys(given)) if (name.toLowerCase() === 'authorization') delete given[name];
    return { ...given, authorization: `Bearer ${this.token}` };
  }

  /** Sends a control-plane request and reads its JSON (or empty) answer. */
  async request<T>(spec: RequestSpec): Promise<MarqueeResult<T>> {
    const { response, meta } = await this.send(spec);
    const text =
      response.status === 204 || response.status === 304 || spec.method === 'HEAD' ? '' : await response.text();
    const type = response.headers.get('content-type') ?? '';
    const data = (text !== '' && type.includes('json') ? JSON.parse(text) : text === '' ? undefined : text) as T;
    return { data, ...meta };
  }

  /**
   * Sends a control-plane request and hands over the successful Response unread (streams, byte
   * exports). 2xx and 304 are answers; anything else is thrown as a MarqueeProblem.
   */
  async send(spec: RequestSpec): Promise<{ response: Response; meta: ResultMeta }> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const idempotencyKey = spec.idempotent ? (spec.idempotencyKey ?? newIdempotencyKey()) : undefined;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-Request-Id': `req_${randomBase64Url(22)}`,
      ...spec.headers,
      ...(spec.authenticated === false ? {} : this.credentialHeaders()),
    };
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    if (spec.ifMatch !== undefined) headers['If-Match'] = ifMatch(spec.ifMatch);
    let body = spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await this.exchange({
      url,
      method: spec.method,
      headers,
      body,
      signal: spec.signal,
      cache: spec.cache,
      onUploadProgress: spec.onUploadProgress,
      // A network failure after sending leaves the outcome unknown: only reads and keyed writes may repeat.
      repeatable: spec.method === 'GET' || spec.method === 'HEAD' || idempotencyKey !== undefined,
      label: `${spec.method} ${spec.path}`,
    });
    return { response, meta: metaOf(response, idempotencyKey) };
  }

  /**
   * Sends a request to a signed URL (a media upload's PUT) with exactly the issued method and
   * headers: never the bearer or a header of ours. A transfer that breaks off stores nothing, so
   * network failures are retried.
   */
  async sendSigned(request: SignedRequest): Promise<Response> {
    return this.exchange(
      {
        url: new URL(request.url),
        method: request.method,
        headers: { ...request.headers },
        body: request.body,
        signal: request.signal,
        onUploadProgress: request.onUploadProgress,
        repeatable: true,
        label: `${request.method} <signed upload URL>`,
      },
      request.onNetworkError,
    );
  }

  private noteServerDate(response: Response, sent: number): void {
    if (!this.onServerDate) return;
    const date = Date.parse(response.headers.get('date') ?? '');
    if (Number.isFinite(date)) this.onServerDate(date, (sent + Date.now()) / 2);
  }

  private async exchange(exchange: Exchange, onNetworkError?: () => void): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      const prepared = prepareBody(exchange.body, exchange.onUploadProgress);
      const headers = { ...exchange.headers };
      // A streamed body would go chunked; say its length when it is known (signed PUTs require it).
      const size = exchange.body === undefined ? undefined : bodySize(exchange.body);
      if (prepared.streamed && size !== undefined && !hasHeader(headers, 'content-length'))
        headers['Content-Length'] = String(size);
      try {
        const init: RequestInit & { duplex?: 'half' } = {
          method: exchange.method,
          headers,
          body: prepared.body,
          signal: exchange.signal,
          redirect: 'error',
        };
        if (exchange.cache !== undefined) init.cache = exchange.cache;
        if (prepared.streamed) init.duplex = 'half';
        const sent = Date.now();
        response = await this.fetch(exchange.url, init);
        this.noteServerDate(response, sent);
      } catch (error) {
        if (exchange.signal?.aborted) throw error;
        onNetworkError?.();
        if (!exchange.repeatable || attempt >= this.maxAttempts) {
          throw new MarqueeNetworkError(`${exchange.label} got no answer: ${(error as Error).message}`, attempt, error);
        }
        const backoff = Math.min(NETWORK_BACKOFF_MAX_MS, NETWORK_BACKOFF_MS * 2 ** (attempt - 1));
        const delayMs = Math.round(backoff / 2 + Math.random() * (backoff / 2));
        this.onRetry?.({ label: exchange.label, attempt, delayMs, reason: 'network' });
        await this.sleep(delayMs);
        continue;
      }
      prepared.finish();
      if (response.ok || response.status === 304) return response;
      const problem = await problemFrom(response);
      const waitable = problem.retryAfter !== undefined && problem.retryAfter * 1000 <= this.maxRetryDelayMs;
      const notProcessed = response.status === 429 || response.status === 503 || RETRYABLE_CODES.has(problem.code);
      if (!notProcessed || !waitable || attempt >= this.maxAttempts) throw problem;
      const delayMs = problem.retryAfter! * 1000;
      this.onRetry?.({ label: exchange.label, attempt, delayMs, reason: 'problem', problem });
      await this.sleep(delayMs);
    }
  }
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

function metaOf(response: Response, idempotencyKey: string | undefined): ResultMeta {
  return {
    status: response.status,
    revision: revisionOf(response.headers.get('etag')),
    credits: creditsOf(response.headers),
    requestId: response.headers.get('x-request-id') ?? undefined,
    idempotencyKey,
    headers: response.headers,
  };
}
