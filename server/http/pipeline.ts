// Runs one route: the cross-cutting steps in their one order, then the handler, then the answer.
// Order: authenticate → credit meter → capability area → query → body read → If-Match →
// idempotency (replay or mismatch) → rate budgets → body validation → handler → answer. A refusal
// of the request itself (query, body, If-Match, Idempotency-Key, or a path value or header the
// handler refuses) first runs the route's `resource` check, so a caller who does not own what the
// path names gets not_found, never a 400 (D-322, D-404).
import { z } from 'zod';
import type { Request, Response } from 'express';
import type { Services } from '../services';
import type { Work } from '../store/store';
import { isTenantPrincipal, type TenantPrincipal } from './auth';
import { canonicalPath } from './dispatch';
import { bodyIdleTimeoutMs, jsonBodyDeadlineMs } from './body-progress';
import {
  IdempotencyRecords,
  ReplayInstead,
  IDEMPOTENCY_RETENTION_MS,
  type RecordedAnswer,
  type RecordId,
} from './idempotency';
import { problem, ProblemError, type Generation } from '../problem';
import { sendProblem } from './problem-response';
import { admit } from './rate-limit';
import type { Authenticator, IdempotencyPolicy, Mode, Principal, Reply, RequestContext, RouteHandler } from './route';
import {
  DEFAULT_JSON_BODY_LIMIT,
  parseJson,
  queryObject,
  readBody,
  refuseContentEncoding,
  refuseNulPathIds,
  validate,
} from './validation';

export interface RouteMatch {
  route: RouteHandler;
  params: Record<string, string>;
  /** The table's path pattern that matched (paths match whatever their case; the pattern does not vary). */
  pattern: string;
}

class Context implements RequestContext<unknown, unknown, Principal | undefined> {
  body: unknown = undefined;
  query: unknown = {};
  principal: Principal | undefined = undefined;
  ifMatch: number | undefined = undefined;
  idempotencyKey: string | undefined = undefined;
  readonly answerHeaders: Record<string, string> = {};
  readonly now: number;
  /** What authenticated the request (the route's policy), to ask again. */
  authenticator: Authenticator | undefined;
  /** Set when the route is idempotent and a key was sent. */
  record: { id: RecordId; fingerprint: string; policy: IdempotencyPolicy } | undefined;
  private parsedUrl: URL | undefined;
  private idempotencyRecords: IdempotencyRecords | undefined;

  constructor(
    readonly req: Request,
    readonly res: Response,
    readonly services: Services,
    readonly requestId: string,
    readonly params: Record<string, string>,
  ) {
    this.now = services.clock.now();
  }

  /** The request's URL, parsed when first asked for (most requests never need it). */
  get url(): URL {
    this.parsedUrl ??= requestUrl(this.req.originalUrl);
    return this.parsedUrl;
  }

  /** The path a problem names as its instance, also for a target that is no URL. */
  get instance(): string {
    try {
      return this.url.pathname;
    } catch {
      return '/';
    }
  }

  get records(): IdempotencyRecords {
    this.idempotencyRecords ??= new IdempotencyRecords(this.services.keys, this.services.locks);
    return this.idempotencyRecords;
  }

  get generation(): Generation {
    return this.principal?.generation ?? this.services.config.model;
  }

  checkRevision(current: number): void {
    if (this.ifMatch !== undefined && this.ifMatch !== current) {
      throw problem('revision_conflict', `If-Match "${this.ifMatch}" is stale; the current revision is ${current}`, {
        current_revision: current,
      });
    }
  }

  async stillAuthenticated(): Promise<boolean> {
    if (!this.authenticator) return true;
    try {
      await this.authenticator.authenticate(this);
      return true;
    } catch {
      return false;
    }
  }

  async commitReply(fn: (work: Work) => Promise<Reply>): Promise<Reply> {
    const record = this.record;
    const records = this.records;
    return this.services.store.transaction(async (work) => {
      if (record) {
        const existing = await records.find(work.db, record.id, this.now);
        if (existing) throw new ReplayInstead(existing);
      }
      const answer = await fn(work);
      if (record && answer.status >= 200 && answer.status < 300) {
        await records.record(
          work.db,
          record.id,
          record.fingerprint,
          answer,
          this.now,
          record.policy.retentionMs ?? IDEMPOTENCY_RETENTION_MS,
          record.policy.eraseBodyAfterMs,
        );
      }
      return answer;
    });
  }
}

const URL_BASE = 'http://request.invalid';

/**
 * The request target as a URL. An origin-form target is read as a path, also when it begins with
 * "//", which a URL parser would read as a host (and refuse: `//[` would throw); an absolute-form
 * target that is no URL is refused.
 */
export function requestUrl(target: string): URL {
  if (target.startsWith('/')) return new URL(URL_BASE + target);
  try {
    return new URL(target, URL_BASE);
  } catch {
    throw problem('invalid_request', 'the request target is not a valid URL');
  }
}

function resolveMode(mode: Mode | undefined, generation: Generation): 'required' | 'optional' | 'none' {
  if (mode === 'required-in-A') return generation === 'A' ? 'required' : 'optional';
  return mode ?? 'none';
}

function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*"([1-9][0-9]{0,14})"\s*$/.exec(header);
  if (!match) {
    throw problem('invalid_request', 'If-Match must be a quoted positive revision such as "3"', {
      errors: [{ field: 'If-Match', code: 'invalid', detail: 'expected a quoted positive integer' }],
    });
  }
  return Number(match[1]);
}

export async function runRoute(
  match: RouteMatch,
  req: Request,
  res: Response,
  services: Services,
  requestId: string,
): Promise<void> {
  const { policy } = match.route;
  const ctx = new Context(req, res, services, requestId, match.params);
  try {
    ctx.authenticator = policy.auth;
    if (policy.auth) ctx.principal = await policy.auth.authenticate(ctx);
    const tenant = isTenantPrincipal(ctx.principal) ? ctx.principal : undefined;
    // By the route's pattern, not the request's path: paths match whatever their case. Metered before
    // the capability area is checked: an area refusal is an authenticated request like any other
    // refusal, and its problem carries the credit headers (spec Authentication rule 6).
    if (tenant?.generation === 'P' && match.pattern.startsWith('/api/')) {
      const metered = await services.meter.charge({
        tenantId: tenant.tenantId,
        plan: tenant.plan,
        credits: tenant.credits,
        debits: policy.meter !== false,
        now: ctx.now,
      });
      Object.assign(ctx.answerHeaders, metered.headers);
      if ('error' in metered) throw metered.error;
    }
    if (tenant && policy.area) checkArea(tenant, policy.area, req.method);
    // Who is asking comes first (D-322); then an id no store could hold is not found, before any lookup.
    refuseNulPathIds(match.params);
    try {
      await readRequest(ctx, match);
    } catch (error) {
      await ownedFirst(ctx, policy, error);
    }
    await (ctx.record
      ? ctx.records.exclusive(ctx.record.id, () => runHandler(ctx, match.route))
      : runHandler(ctx, match.route));
  } catch (error) {
    sendProblem(res, error, {
      controlOrigin: services.config.controlOrigin,
      generation: ctx.generation,
      requestId,
      instance: ctx.instance,
      headers: ctx.answerHeaders,
      logger: services.logger,
    });
  }
}

/** Refusals of the request itself wait until the caller is known to own what the path names. */
async function ownedFirst(ctx: Context, policy: RouteHandler['policy'], error: unknown): Promise<never> {
  if (policy.resource && isRequestRefusal(error)) await policy.resource(ctx);
  throw error;
}

/** A JSON API route that names no query takes none: an unknown parameter is refused, as on the others. */
const NO_QUERY = z.strictObject({});
const takesNoQuery = (pattern: string) => /^\/(api\/v[12]|dashboard\/v1|operator\/v1)\//.test(pattern);

/** The query, the body (read, not yet validated), If-Match and the idempotency record's id. */
async function readRequest(ctx: Context, match: RouteMatch): Promise<void> {
  const { req, services } = ctx;
  const { policy } = match.route;
  // Only a query that is there is judged on a route that takes none (not the hot byte routes' every request).
  const query = policy.query ?? (ctx.url.search !== '' && takesNoQuery(match.pattern) ? NO_QUERY : undefined);
  ctx.query = query ? validate(query, queryObject(ctx.url), 'query') : {};

  // A request that declares no body has none (what readBody would find, without its promise).
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  if (hasBody) refuseContentEncoding(req);
  if (policy.body !== 'raw' && hasBody) {
    const rawBody = await readBody(req, policy.bodyLimit ?? DEFAULT_JSON_BODY_LIMIT, {
      idleMs: bodyIdleTimeoutMs(services),
      deadlineMs: (bytes) => jsonBodyDeadlineMs(services, bytes),
    });
    ctx.body = parseJson(req, rawBody);
  }

  const ifMatchMode = resolveMode(policy.ifMatch, ctx.generation);
  ctx.ifMatch = ifMatchMode === 'none' ? undefined : parseIfMatch(req.headers['if-match']);
  if (ifMatchMode === 'required' && ctx.ifMatch === undefined) {
    throw problem('invalid_request', 'this request needs If-Match with the current revision', {
      errors: [{ field: 'If-Match', code: 'required', detail: 'is required' }],
    });
  }

  const idem: IdempotencyPolicy | undefined =
    typeof policy.idempotency === 'string' ? { mode: policy.idempotency } : policy.idempotency;
  const idemMode = resolveMode(idem?.mode, ctx.generation);
  const key = req.headers['idempotency-key'];
  if (idem && idemMode !== 'none' && typeof key === 'string') {
    IdempotencyRecords.validateKey(key);
    ctx.idempotencyKey = key;
    const headers = (idem.fingerprintHeaders ?? []).map((h) => [h.toLowerCase(), req.headers[h.toLowerCase()] ?? null]);
    const url = ctx.url;
    const path = canonicalPath(match.pattern, match.params) ?? url.pathname;
    ctx.record = {
      id: {
        scope: ctx.principal?.scope ?? idem.anonymousScope?.(ctx) ?? 'anon',
        route: `${req.method} ${path}`,
        key,
      },
      fingerprint: IdempotencyRecords.fingerprint([
        req.method,
        path,
        url.search,
        ctx.body ?? null,
        ctx.ifMatch ?? null,
        headers,
      ]),
      policy: idem,
    };
  } else if (idemMode === 'required') {
    throw problem('invalid_request', 'this request needs an Idempotency-Key header (8 to 200 characters)', {
      errors: [{ field: 'Idempotency-Key', code: 'required', detail: 'is required' }],
    });
  }
}

/** A recorded answer replayed, or: rate budgets, body validation, the handler and its answer. */
async function runHandler(ctx: Context, route: RouteHandler): Promise<void> {
  const { policy, handler } = route;
  const { services, res } = ctx;
  if (ctx.record) {
    const existing = await ctx.records.find(services.store.db, ctx.record.id, ctx.now);
    if (existing) return replay(ctx, existing);
  }
  if (policy.rateLimits)
    Object.assign(ctx.answerHeaders, await admit(services.rateLimiter, policy.rateLimits(ctx as never), ctx.now));
  try {
    if (policy.body !== undefined && policy.body !== 'raw') ctx.body = validate(policy.body, ctx.body, 'body');
    else if (policy.body === undefined && ctx.body !== undefined && !isEmptyObject(ctx.body)) {
      throw problem('invalid_request', 'this route takes no request body', {
        errors: [{ field: 'body', code: 'unexpected', detail: 'send no body' }],
      });
    }
  } catch (error) {
    await ownedFirst(ctx, policy, error);
  }
  let answer: Reply | void;
  try {
    answer =
      handler.kind === 'mutation'
        ? await ctx.commitReply((work) => handler.run(ctx as never, work))
        : await handler.run(ctx as never);
  } catch (error) {
    if (error instanceof ReplayInstead) return replay(ctx, error.answer);
    // A handler's own refusal of the request (a path value, a header it reads) waits for ownership too.
    return ownedFirst(ctx, policy, error);
  }
  if (answer) send(res, answer, ctx.answerHeaders);
  else if (!res.headersSent) throw new Error(`route ${ctx.req.method} ${ctx.url.pathname} returned no answer`);
}

async function replay(ctx: Context, recorded: RecordedAnswer): Promise<void> {
  if (recorded.fingerprint !== ctx.record!.fingerprint) {
    throw problem(
      'idempotency_mismatch',
      'this Idempotency-Key was used with a different request; use a new key for a new request',
    );
  }
  await ctx.record!.policy.onReplay?.(ctx, recorded);
  send(ctx.res, { status: recorded.status, headers: recorded.headers, body: recorded.body }, ctx.answerHeaders);
}

function send(res: Response, answer: Reply, extra: Record<string, string>): void {
  res.status(answer.status);
  res.set({ ...extra, ...answer.headers });
  if (answer.revision !== undefined) res.setHeader('ETag', `"${answer.revision}"`);
  if (answer.body === undefined) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(answer.body));
}

function checkArea(
  principal: TenantPrincipal,
  area: NonNullable<RouteHandler['policy']['area']>,
  method: string,
): void {
  if (principal.realm !== 'project') return;
  if (principal.areas.has(area)) return;
  // spec: a credential with the reports area also reads any area.
  if ((method === 'GET' || method === 'HEAD') && principal.areas.has('reports')) return;
  if (principal.areas.size === 0)
    throw problem('forbidden', `the project's plan "${principal.plan}" is not in the plan catalog; nothing is allowed`);
  throw problem(
    'forbidden',
    `this credential lacks the "${area}" capability area; connect a new agent installation with the ${area} capability`,
    {
      extensions: { missing_capability: area },
    },
  );
}

/**
 * A refusal of the request's own content (its query, body, headers and path values, by the pipeline
 * or the handler), as opposed to of its caller: what the ownership check must come before.
 */
function isRequestRefusal(error: unknown): boolean {
  if (!(error instanceof ProblemError)) return (error as { status?: number } | null)?.status === 400;
  return error.code === 'invalid_request';
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
