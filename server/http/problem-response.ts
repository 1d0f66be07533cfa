// Renders RFC 9457 problem documents. Unexpected errors become internal_error without internals.
import type { Response } from 'express';
import { echo } from '../../sdk/contract/untrusted-text';
import { redactPath, type Logger } from '../logger';
import {
  PROBLEM_CODES,
  ProblemError,
  problem,
  problemTypeUri,
  retryAfterOf,
  statusOf,
  type Generation,
} from '../problem';

/**
 * The most of one text (detail, instance, a field error) a problem carries. Echoes of request text
 * inside it are cut shorter where they are made (ECHO_MAX_CHARACTERS); this bounds the whole text.
 * Unsafe characters in any of them are escaped here, once, whatever code wrote the text.
 */
export const PROBLEM_TEXT_MAX_CHARACTERS = 1000;

export interface ProblemContext {
  controlOrigin: string;
  generation: Generation;
  requestId: string;
  /** Request path without its query (queries can carry tickets); credential segments are redacted here. */
  instance: string;
  headers?: Record<string, string>;
  logger: Logger;
}

export function toProblem(error: unknown, logger: Logger, requestId: string): ProblemError {
  if (error instanceof ProblemError) {
    if (error.options.cause !== undefined)
      logger.warn({ request_id: requestId, err: error.options.cause }, `answered ${error.code}`);
    return error;
  }
  const status = (error as { status?: number; statusCode?: number } | null)?.status;
  // Errors raised by Node/Express body handling (aborted or malformed requests) are the client's.
  if (status === 400 || status === 413) return problem('invalid_request', 'the request could not be read');
  logger.error({ request_id: requestId, err: error }, 'unexpected error');
  return problem('internal_error', `an unexpected error occurred; quote request_id ${requestId} when reporting it`);
}

/** The problem document; `requestId` is omitted for one recorded on an operation rather than answered. */
export function problemBody(
  p: ProblemError,
  ctx: Omit<ProblemContext, 'logger' | 'headers' | 'requestId'> & { requestId?: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...p.options.extensions,
    type: problemTypeUri(ctx.controlOrigin, p.code),
    title: PROBLEM_CODES[p.code].title,
    status: statusOf(p.code, ctx.generation),
    detail: echo(p.detail, PROBLEM_TEXT_MAX_CHARACTERS),
    instance: echo(redactPath(ctx.instance), PROBLEM_TEXT_MAX_CHARACTERS),
    code: p.code,
    ...(ctx.requestId !== undefined ? { request_id: ctx.requestId } : {}),
    errors: (p.options.errors ?? []).map((e) => ({
      ...e,
      field: echo(e.field, PROBLEM_TEXT_MAX_CHARACTERS),
      detail: echo(e.detail, PROBLEM_TEXT_MAX_CHARACTERS),
    })),
  };
  if (p.options.current_revision !== undefined) body.current_revision = p.options.current_revision;
  return body;
}

/** Headers that describe a body the handler meant to send, not the problem sent instead. */
const REPRESENTATION_HEADERS = [
  'Content-Length',
  'Content-Range',
  'Content-Disposition',
  'Content-Encoding',
  'Accept-Ranges',
  'ETag',
  'Last-Modified',
];

export function sendProblem(res: Response, error: unknown, ctx: ProblemContext): void {
  const p = toProblem(error, ctx.logger, ctx.requestId);
  const body = problemBody(p, ctx);
  if (res.headersSent) {
    // A streamed answer already started: the connection is all that is left to end.
    res.destroy();
    return;
  }
  // A handler that failed after describing its body (a blob read that failed at once) leaves that
  // description behind: the problem is another representation.
  for (const name of REPRESENTATION_HEADERS) res.removeHeader(name);
  const headers: Record<string, string> = { ...ctx.headers, ...p.options.headers };
  const retryAfter = p.options.retryAfter ?? retryAfterOf(p.code);
  if (retryAfter !== undefined) headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfter)));
  headers['Cache-Control'] ??= 'no-store';
  res.status(body.status as number);
  res.set(headers);
  res.setHeader('Content-Type', 'application/problem+json');
  const text = JSON.stringify(body);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
