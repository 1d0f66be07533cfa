// How a route handler states what it needs. The pipeline (pipeline.ts) does the rest, once:
// authentication and realm, credit meter, capability area, body and query validation, If-Match,
// idempotency records, rate budgets, transactions, and RFC 9457 rendering.
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Services } from '../services';
import type { Work } from '../store/store';
import type { Generation } from '../problem';
import type { RateBudget } from './rate-limit';
import { answerSseHead } from './sse';

import type { CapabilityArea } from '../../sdk/contract/tenants';

export { CAPABILITY_AREAS, type CapabilityArea } from '../../sdk/contract/tenants';

export type Realm =
  | 'none'
  | 'account'
  | 'project'
  | 'pairing'
  | 'device'
  | 'runtime'
  | 'release'
  | 'dashboard'
  | 'signup'
  | 'agent'
  | 'agent-connect'
  | 'operator';

export interface Principal {
  realm: Realm;
  /** Scope of idempotency records and rate budgets: a tenant, a screen, a pairing session. */
  scope: string;
  /** Contract generation whose rules apply to this caller. */
  generation?: Generation;
}

export interface Authenticator<P extends Principal = Principal> {
  realm: Realm;
  /** Resolves the caller or throws unauthorized / forbidden. */
  authenticate(ctx: AnyContext): Promise<P>;
}

export type Mode = 'required' | 'optional' | 'required-in-A' | 'none';

export interface IdempotencyPolicy {
  mode: Mode;
  /** How long an exact retry replays the recorded answer; the spec names 24 h. */
  retentionMs?: number;
  /** Called before a replay; throws to refuse it (an expired credential delivery window). */
  onReplay?: (ctx: AnyContext, recorded: { status: number; body: unknown }) => Promise<void>;
  /** Request headers that belong to the request's identity besides method, path, query and body. */
  fingerprintHeaders?: string[];
  /**
   * Erase the recorded body this long after it was recorded (a one-time credential whose delivery
   * window closed), while the record itself stays for its retention.
   */
  eraseBodyAfterMs?: number;
  /**
   * Scope of the records of an unauthenticated route (default `anon`): what besides the key a
   * retry must share with the first request to be answered from its record.
   */
  anonymousScope?: (ctx: AnyContext) => string;
}

export interface RoutePolicy<B, Q, P extends Principal | undefined> {
  /** Omit for unauthenticated routes. */
  auth?: Authenticator<Exclude<P, undefined>>;
  /**
   * Throws not_found when what the path names is not the caller's. Run only before a refusal of the
   * request itself (the 400s read before the handler), so those never tell another tenant anything;
   * the handler still resolves the resource itself. Set from the route table (server/ownership.ts).
   */
  resource?: (ctx: RequestContext<B, Q, P>) => Promise<void>;
  /** Capability area a project credential needs for this route. */
  area?: CapabilityArea;
  /** Whether the credit meter debits this request (Model P, /api/v1). Default true. */
  meter?: boolean;
  /** JSON body schema; 'raw' leaves the stream to the handler. Omitted: no body (or `{}`) accepted. */
  body?: z.ZodType<B> | 'raw';
  /** JSON body limit in bytes (default 64 KiB). */
  bodyLimit?: number;
  query?: z.ZodType<Q>;
  idempotency?: Mode | IdempotencyPolicy;
  ifMatch?: Mode;
  rateLimits?: (ctx: RequestContext<B, Q, P>) => RateBudget[];
}

export interface RequestContext<B = unknown, Q = unknown, P extends Principal | undefined = Principal | undefined> {
  readonly req: Request;
  readonly res: Response;
  readonly services: Services;
  readonly requestId: string;
  /** The request clock, read once at arrival. */
  readonly now: number;
  readonly params: Record<string, string>;
  /** The request target as a URL, parsed when first read (an absolute-form target that is no URL: invalid_request). */
  readonly url: URL;
  readonly query: Q;
  body: B;
  principal: P;
  /** Parsed If-Match revision, when sent. */
  ifMatch: number | undefined;
  idempotencyKey: string | undefined;
  /** Headers added to the JSON or problem answer (credits, rate limits). */
  readonly answerHeaders: Record<string, string>;
  /** The caller's generation: its credential's, else the server's model. */
  readonly generation: Generation;
  /** Throws revision_conflict (412, current_revision) when If-Match was sent and is stale. */
  checkRevision(current: number): void;
  /**
   * Runs fn in one transaction and, when the route is idempotent, records the reply in the same
   * transaction, so the effect and its record commit together or not at all.
   */
  commitReply(fn: (work: Work) => Promise<Reply>): Promise<Reply>;
  /**
   * Authenticates the request again as its route did on arrival: false once its credential no
   * longer stands (revoked, its project suspended). A long-lived answer asks after subscribing to
   * its end, so an end that committed in between is not missed.
   */
  stillAuthenticated(): Promise<boolean>;
}

export type AnyContext = RequestContext<unknown, unknown, Principal | undefined>;

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sets `ETag: "<revision>"`. */
  revision?: number;
}

export type Handler<B, Q, P extends Principal | undefined> =
  | { kind: 'query'; run: (ctx: RequestContext<B, Q, P>) => Promise<Reply | void> }
  | { kind: 'mutation'; run: (ctx: RequestContext<B, Q, P>, work: Work) => Promise<Reply> }
  | { kind: 'endpoint'; run: (ctx: RequestContext<B, Q, P>) => Promise<Reply | void> };

export interface RouteHandler<B = any, Q = any, P extends Principal | undefined = any> {
  policy: RoutePolicy<B, Q, P>;
  handler: Handler<B, Q, P>;
}

type Ctx<B, Q, P extends Principal | undefined> = RequestContext<B, Q, P>;

/** A read: runs outside a transaction; may stream its own answer and return nothing. */
export function query<B = undefined, Q = Record<string, never>, P extends Principal | undefined = undefined>(
  policy: RoutePolicy<B, Q, P>,
  run: (ctx: Ctx<B, Q, P>) => Promise<Reply | void>,
): RouteHandler<B, Q, P> {
  return { policy, handler: { kind: 'query', run } };
}

/**
 * An event stream: a read that streams its answer. HEAD gets the stream's headers and the end once
 * the policy has passed (authentication, query), without the handler: no stream is ever opened.
 */
export function eventStream<Q = Record<string, never>, P extends Principal | undefined = undefined>(
  policy: RoutePolicy<undefined, Q, P>,
  run: (ctx: Ctx<undefined, Q, P>) => Promise<void>,
): RouteHandler<undefined, Q, P> {
  return query(policy, async (ctx) => (ctx.req.method === 'HEAD' ? answerSseHead(ctx.res) : run(ctx)));
}

/** A write: the whole handler runs in one transaction with its idempotency record. */
export function mutation<B = undefined, Q = Record<string, never>, P extends Principal | undefined = undefined>(
  policy: RoutePolicy<B, Q, P>,
  run: (ctx: Ctx<B, Q, P>, work: Work) => Promise<Reply>,
): RouteHandler<B, Q, P> {
  return { policy, handler: { kind: 'mutation', run } };
}

/** A write with slow I/O first (streamed uploads): the handler calls ctx.commitReply itself. */
export function endpoint<B = undefined, Q = Record<string, never>, P extends Principal | undefined = undefined>(
  policy: RoutePolicy<B, Q, P>,
  run: (ctx: Ctx<B, Q, P>) => Promise<Reply | void>,
): RouteHandler<B, Q, P> {
  return { policy, handler: { kind: 'endpoint', run } };
}

export const reply = {
  ok: (body: unknown, extra: Omit<Reply, 'status' | 'body'> = {}): Reply => ({ status: 200, body, ...extra }),
  created: (body: unknown, extra: Omit<Reply, 'status' | 'body'> = {}): Reply => ({ status: 201, body, ...extra }),
  accepted: (body?: unknown, extra: Omit<Reply, 'status' | 'body'> = {}): Reply => ({ status: 202, body, ...extra }),
  noContent: (extra: Omit<Reply, 'status' | 'body'> = {}): Reply => ({ status: 204, ...extra }),
};
