// Durable operations: read, cancel, and wait for a final state.
import { isTerminal, type Operation } from '../contract/operations';
import { MarqueeProblem } from './problem';
import type { CallOptions, ClientTransport } from './transport';

export interface WaitOptions {
  /** First poll interval; it grows by half each time up to maxIntervalMs (default 500 ms → 5 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
  /** Give up after this long with OperationTimeoutError (default 120 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each state seen (progress output). */
  onPoll?: (operation: Operation) => void;
}

export class OperationTimeoutError extends Error {
  constructor(readonly operation: Operation) {
    super(`operation ${operation.id} is still ${operation.state}`);
    this.name = 'OperationTimeoutError';
  }
}

/** The operation ended failed or cancelled; `problem` is its error as a MarqueeProblem. */
export class OperationFailedError extends Error {
  readonly problem: MarqueeProblem;
  constructor(readonly operation: Operation) {
    const problem =
      operation.state === 'failed' && operation.error
        ? new MarqueeProblem(operation.error.status, operation.error)
        : new MarqueeProblem(409, { code: 'operation_cancelled', detail: `operation ${operation.id} was cancelled` });
    super(`operation ${operation.id} ${operation.state}: ${problem.detail}`);
    this.name = 'OperationFailedError';
    this.problem = problem;
  }
}

const DEFAULT_INTERVAL_MS = 500;
const DEFAULT_MAX_INTERVAL_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 120_000;

export function operationRoutes(t: ClientTransport) {
  const get = (id: string) =>
    t.request<Operation>({ method: 'GET', path: `/api/v1/operations/${encodeURIComponent(id)}` });

  /** Polls until the operation is succeeded, failed or cancelled, and returns it. */
  async function wait(id: string, options: WaitOptions = {}): Promise<Operation> {
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    let interval = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    for (;;) {
      const { data } = await get(id);
      options.onPoll?.(data);
      if (isTerminal(data.state)) return data;
      if (Date.now() + interval > deadline) throw new OperationTimeoutError(data);
      if (options.signal?.aborted) throw options.signal.reason;
      await t.sleep(interval);
      interval = Math.min(options.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS, Math.ceil(interval * 1.5));
    }
  }

  return {
    get,
    /** Cancels a non-final operation; a worker that lost the race can no longer finalize it. */
    cancel: (id: string, options: CallOptions = {}) =>
      t.request<Operation>({
        method: 'POST',
        path: `/api/v1/operations/${encodeURIComponent(id)}/cancel`,
        idempotent: true,
        ...options,
      }),
    wait,
    /** Like wait, but a failed or cancelled operation throws OperationFailedError. */
    async waitForSuccess(id: string, options: WaitOptions = {}): Promise<Operation> {
      const operation = await wait(id, options);
      if (operation.state !== 'succeeded') throw new OperationFailedError(operation);
      return operation;
    },
  };
}
