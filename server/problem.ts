// The one error type every server layer throws: a spec problem code with its detail and options.
// Rendering as RFC 9457 lives in http/problem-response.ts; the code catalogue in sdk/contract/problems.ts.
import type { FieldError, ProblemCode } from '../sdk/contract/problems';

export { PROBLEM_CODES, problemTypeUri, retryAfterOf, statusOf } from '../sdk/contract/problems';
export type { FieldError, Generation, ProblemCode } from '../sdk/contract/problems';

export interface ProblemOptions {
  errors?: FieldError[];
  /** Set on revision_conflict. */
  current_revision?: number;
  /** Seconds; overrides the code's default. */
  retryAfter?: number;
  /** Extra response headers (RateLimit, Content-Range, ...). */
  headers?: Record<string, string>;
  /** Extra members of the problem document (never secrets). */
  extensions?: Record<string, unknown>;
  /** What went wrong underneath (a dependency's own error): logged, never sent. */
  cause?: unknown;
}

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly detail: string;
  readonly options: ProblemOptions;
  constructor(code: ProblemCode, detail: string, options: ProblemOptions = {}) {
    super(`${code}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProblemError';
    this.code = code;
    this.detail = detail;
    this.options = options;
  }
}

export function problem(code: ProblemCode, detail: string, options?: ProblemOptions): ProblemError {
  return new ProblemError(code, detail, options);
}

export function invalidField(field: string, detail: string, code = 'invalid'): ProblemError {
  return problem('invalid_request', `${field}: ${detail}`, { errors: [{ field, code, detail }] });
}
