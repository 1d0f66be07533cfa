import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MarqueeNetworkError, MarqueeProblem, OperationFailedError } from '../client/marquee-client';
import { CliFailure, EXIT, exitCodeOfProblem, failureOf } from './exit-codes';

describe('exit codes by class', () => {
  it.each([
    [401, 'unauthorized', EXIT.auth],
    [403, 'forbidden', EXIT.auth],
    [404, 'not_found', EXIT.notFound],
    [409, 'idempotency_mismatch', EXIT.conflict],
    [412, 'revision_conflict', EXIT.precondition],
    [429, 'rate_limited', EXIT.rateLimited],
    [400, 'invalid_request', EXIT.clientError],
    [413, 'quota_exceeded', EXIT.clientError],
    [504, 'gateway_timeout', EXIT.timeout],
    [500, 'internal_error', EXIT.server],
    [500, 'not_ready', EXIT.server],
    [421, 'server_draining', EXIT.server],
  ])('%i %s exits %i', (status, code, exit) => {
    expect(exitCodeOfProblem(status, code)).toBe(exit);
  });

  it('keeps the problem code and the facts a caller acts on: current_revision, retry_after, request_id', () => {
    const problem = new MarqueeProblem(
      412,
      { code: 'revision_conflict', detail: 'stale', current_revision: 4, request_id: 'req_abc' },
      { retryAfter: 3 },
    );
    expect(failureOf(problem, false)).toEqual({
      exitCode: EXIT.precondition,
      error: {
        code: 'revision_conflict',
        detail: 'stale',
        status: 412,
        current_revision: 4,
        retry_after: 3,
        request_id: 'req_abc',
      },
    });
  });

  it('names the system error of a network failure', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const error = new MarqueeNetworkError(
      'GET /x got no answer: fetch failed',
      3,
      new TypeError('fetch failed', { cause }),
    );
    expect(failureOf(error, false)).toEqual({
      exitCode: EXIT.network,
      error: { code: 'network_error', detail: 'GET /x got no answer: fetch failed (ECONNREFUSED), after 3 attempts' },
    });
  });

  it('calls a local file that cannot be written a usage problem (exit 2), not a bug', async () => {
    const missing = path.join(os.tmpdir(), `marquee-no-such-folder-${process.pid}`, 'shot.webp');
    const error = await fs.writeFile(missing, 'x').catch((e: unknown) => e);
    expect(failureOf(error, false)).toEqual({
      exitCode: EXIT.usage,
      error: { code: 'invalid_input', detail: expect.stringContaining(missing) },
    });
    // A connection reset carries a system code too, but names no path: still not the caller's file.
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
    expect(failureOf(reset, false).exitCode).toBe(EXIT.unexpected);
  });

  it('reports a failed operation with its problem code and id (exit 13)', () => {
    const error = new OperationFailedError({
      id: 'op_1',
      kind: 'application.upload',
      state: 'failed',
      created_at: '',
      updated_at: '',
      error: { code: 'index_missing', status: 400, detail: 'no index.html' },
    });
    expect(failureOf(error, false)).toMatchObject({
      exitCode: EXIT.operationFailed,
      error: { code: 'index_missing', operation_id: 'op_1' },
    });
  });

  it('calls anything that fails after Ctrl-C an interruption (130), but keeps a local failure as it is', () => {
    expect(failureOf(new DOMException('stopped', 'AbortError'), true).exitCode).toBe(EXIT.interrupted);
    expect(failureOf(new MarqueeProblem(500, { code: 'internal_error' }), true).exitCode).toBe(EXIT.interrupted);
    expect(failureOf(new CliFailure(EXIT.usage, 'usage', 'bad'), true).exitCode).toBe(EXIT.usage);
  });
});
