// The `marquee` command's exit codes, one per class of outcome, so a script or an agent can branch
// on the class without parsing text (the hosted peer's convention, kept number for number).
import {
  MarqueeNetworkError,
  MarqueeProblem,
  OperationFailedError,
  OperationTimeoutError,
} from '../client/marquee-client';
import { EventStreamError } from '../sse/event-stream-client';

export const EXIT = {
  ok: 0,
  /** A bug or an error nobody foresaw. */
  unexpected: 1,
  /** The command line, or a local file it names, cannot be used as given. */
  usage: 2,
  /** 401 or 403: the credential is missing, refused, or lacks the capability. */
  auth: 3,
  /** 404: no such resource in this project. */
  notFound: 4,
  /** 409: the resource's state forbids it (in use, archived, idempotency key reused …). */
  conflict: 5,
  /** 412: the If-Match revision is stale; the error carries current_revision. */
  precondition: 6,
  /** 429: over a rate budget; the error carries retry_after (seconds). */
  rateLimited: 7,
  /** Any other 4xx (invalid_request, quota_exceeded …). */
  clientError: 8,
  /** 5xx, or the server is draining or not ready. */
  server: 9,
  /** No answer: the server could not be reached, or the connection broke every time. */
  network: 10,
  /** 408/504, or a durable operation still running when the wait ended. */
  timeout: 11,
  /** The local configuration: the config file, a missing credential, a tool not found on the PATH. */
  config: 12,
  /** A durable operation ended failed or cancelled; the error is its problem. */
  operationFailed: 13,
  /** Ctrl-C (SIGINT) or SIGTERM: stopped, and whatever the command had started was cleaned up. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Problem codes that mean "the server, not you" whatever their status (Model P sends 500 or 421). */
const SERVER_SIDE_CODES = new Set(['server_draining', 'not_ready', 'dependency_unavailable', 'schema_incompatible']);

/** The exit code of an HTTP status and problem code. */
export function exitCodeOfProblem(status: number, code: string): ExitCode {
  if (SERVER_SIDE_CODES.has(code)) return EXIT.server;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status === 412) return EXIT.precondition;
  if (status === 429) return EXIT.rateLimited;
  if (status === 408 || status === 504) return EXIT.timeout;
  if (status >= 500) return EXIT.server;
  if (status >= 400) return EXIT.clientError;
  return EXIT.unexpected;
}

/** What the envelope's `error` holds: the problem's code and facts, never a credential. */
export interface ErrorReport {
  code: string;
  detail: string;
  status?: number;
  errors?: { field: string; code: string; detail: string }[];
  /** On revision_conflict: the revision to read and send as --if-match. */
  current_revision?: number;
  /** On rate_limited and other "come back later" problems: seconds from Retry-After. */
  retry_after?: number;
  /** The request the server answered (quote it when asking for help). */
  request_id?: string;
  /** A durable operation the failure belongs to. */
  operation_id?: string;
  /** What to do next, in words. */
  hint?: string;
  [member: string]: unknown;
}

/** A failure the CLI itself decided on (bad arguments, a file it cannot read, no credential). */
export class CliFailure extends Error {
  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    readonly detail: string,
    readonly extra: Partial<ErrorReport> = {},
  ) {
    super(`${code}: ${detail}`);
    this.name = 'CliFailure';
  }
}

export const usage = (detail: string, extra?: Partial<ErrorReport>) =>
  new CliFailure(EXIT.usage, 'usage', detail, extra);
export const invalidInput = (detail: string, extra?: Partial<ErrorReport>) =>
  new CliFailure(EXIT.usage, 'invalid_input', detail, extra);
export const configProblem = (code: string, detail: string, extra?: Partial<ErrorReport>) =>
  new CliFailure(EXIT.config, code, detail, extra);

/** ECONNREFUSED and friends from fetch's error or the errors it wraps, else the innermost message. */
function systemErrorCode(error: unknown): string | undefined {
  let innermost: string | undefined;
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    innermost = e.message;
  }
  return innermost === 'fetch failed' ? undefined : innermost;
}

/**
 * A local file the command could not read or write (a missing folder, no permission, a directory):
 * Node's file-system errors name the path, which a network error (ECONNRESET …) never has.
 */
function isLocalFileError(error: unknown): error is NodeJS.ErrnoException & { path: string } {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).path === 'string';
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** Any thrown value as an exit code and the envelope's error. */
export function failureOf(error: unknown, interrupted: boolean): { exitCode: ExitCode; error: ErrorReport } {
  if (interrupted && (isAbort(error) || !(error instanceof CliFailure))) {
    return {
      exitCode: EXIT.interrupted,
      error: { code: 'interrupted', detail: 'stopped by a signal; what this command had started was undone' },
    };
  }
  if (error instanceof CliFailure) {
    return { exitCode: error.exitCode, error: { code: error.code, detail: error.detail, ...error.extra } };
  }
  if (isLocalFileError(error)) return { exitCode: EXIT.usage, error: { code: 'invalid_input', detail: error.message } };
  if (error instanceof MarqueeProblem) {
    const report: ErrorReport = { code: error.code, detail: error.detail, status: error.status };
    if (error.errors.length > 0) report.errors = error.errors;
    if (error.current_revision !== undefined) report.current_revision = error.current_revision;
    if (error.retryAfter !== undefined) report.retry_after = error.retryAfter;
    if (error.request_id !== undefined) report.request_id = error.request_id;
    for (const member of ['head_cursor', 'next'] as const)
      if (error.document[member] !== undefined) report[member] = error.document[member];
    return { exitCode: exitCodeOfProblem(error.status, error.code), error: report };
  }
  if (error instanceof OperationFailedError) {
    const { problem, operation } = error;
    return {
      exitCode: EXIT.operationFailed,
      error: {
        code: problem.code,
        detail: `operation ${operation.id} ${operation.state}: ${problem.detail}`,
        status: problem.status,
        ...(problem.errors.length > 0 ? { errors: problem.errors } : {}),
        operation_id: operation.id,
      },
    };
  }
  if (error instanceof OperationTimeoutError) {
    return {
      exitCode: EXIT.timeout,
      error: {
        code: 'operation_timeout',
        detail: `operation ${error.operation.id} is still ${error.operation.state}`,
        operation_id: error.operation.id,
        hint: `wait for it with: marquee operation wait ${error.operation.id}`,
      },
    };
  }
  if (error instanceof MarqueeNetworkError) {
    const reason = systemErrorCode(error.cause);
    const attempts = error.attempts === 1 ? '1 attempt' : `${error.attempts} attempts`;
    return {
      exitCode: EXIT.network,
      error: { code: 'network_error', detail: `${error.message}${reason ? ` (${reason})` : ''}, after ${attempts}` },
    };
  }
  if (error instanceof EventStreamError) {
    const code =
      typeof (error.problem as { code?: unknown } | undefined)?.code === 'string'
        ? (error.problem as { code: string }).code
        : 'stream_refused';
    return {
      exitCode: error.status ? exitCodeOfProblem(error.status, code) : EXIT.network,
      error: { code, detail: error.message, ...(error.status ? { status: error.status } : {}) },
    };
  }
  if (isAbort(error)) return { exitCode: EXIT.timeout, error: { code: 'timeout', detail: String(error) } };
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT.unexpected, error: { code: 'unexpected', detail: message } };
}
