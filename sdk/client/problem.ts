// Errors of the typed client: a problem document from the server as a typed error, and the error
// for a request that never got an answer.

export interface FieldProblem {
  field: string;
  code: string;
  detail: string;
}

/** Credit headers (Model P): whole credits remaining, when the next grant lands, the monthly grant. */
export interface Credits {
  remaining: number;
  reset: string;
  included: number;
}

/** An RFC 9457 problem document as Marquee sends it (open: more members may appear). */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  request_id: string;
  errors: FieldProblem[];
  current_revision?: number;
  [member: string]: unknown;
}

/**
 * The server answered with a problem (or the client refused a request the server would refuse, such
 * as a KV key no URL can carry, with the same problem and no request_id). Branch on `code`, not on
 * the text.
 */
export class MarqueeProblem extends Error {
  readonly code: string;
  readonly status: number;
  readonly detail: string;
  readonly errors: FieldProblem[];
  /** Set on revision_conflict: the revision to send as If-Match after re-reading. */
  readonly current_revision: number | undefined;
  readonly request_id: string | undefined;
  /** Seconds from Retry-After, when the server sent one. */
  readonly retryAfter: number | undefined;
  readonly credits: Credits | undefined;
  readonly document: Partial<ProblemDocument>;

  constructor(
    status: number,
    document: Partial<ProblemDocument>,
    extra: { retryAfter?: number; credits?: Credits; requestId?: string } = {},
  ) {
    const code = typeof document.code === 'string' ? document.code : 'unexpected_response';
    const detail = typeof document.detail === 'string' ? document.detail : `the server answered ${status}`;
    super(`${code}: ${detail}`);
    this.name = 'MarqueeProblem';
    this.code = code;
    this.status = status;
    this.detail = detail;
    this.errors = Array.isArray(document.errors) ? document.errors : [];
    this.current_revision = typeof document.current_revision === 'number' ? document.current_revision : undefined;
    this.request_id = typeof document.request_id === 'string' ? document.request_id : extra.requestId;
    this.retryAfter = extra.retryAfter;
    this.credits = extra.credits;
    this.document = document;
  }
}

/** No answer: the network failed (or every retry did). The request may or may not have run. */
export class MarqueeNetworkError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    cause?: unknown,
  ) {
    super(message, { cause });
    this.name = 'MarqueeNetworkError';
  }
}
