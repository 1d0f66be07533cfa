// Request bodies must keep moving. Node's whole-request timeout is off (a 1 GiB upload over a slow
// uplink takes hours); instead a body that sends nothing for BODY_IDLE_TIMEOUT_MS while the server
// waits for it fails with a problem, and the connection is closed. Buffered (JSON) bodies also have
// a total deadline, so a client that drips a byte just before each idle timeout cannot hold a
// connection for days (slowloris); only streamed uploads go without one. Headers have Node's total
// deadline (headersTimeout, app.ts), which holds even with the whole-request timeout off.
import { Transform, type Readable } from 'node:stream';
import type { Services } from '../services';

/** A minute without a byte: no uplink that is still moving is that quiet, and a stalled client frees its slot. */
export const BODY_IDLE_TIMEOUT_MS = 60_000;
/** Any JSON body gets at least this long: a small body over a poor mobile link arrives in seconds. */
export const JSON_BODY_MIN_DEADLINE_MS = 30_000;
/**
 * Beyond that floor a JSON body gets a second per KiB it declares (or, unannounced, per KiB of the
 * route's limit): 8 kbit/s is far below any working uplink, and bounds a 64 KiB body to about a
 * minute and the largest (a 2 MiB playlist) to about half an hour.
 */
export const JSON_BODY_MIN_BYTES_PER_SECOND = 1024;

/** The server's idle limit: BODY_IDLE_TIMEOUT_MS unless tuned (ServerOptions.tuning; tests shorten it). */
export function bodyIdleTimeoutMs(services: Services): number {
  return services.tuning.bodyIdleTimeoutMs;
}

/**
 * How long a JSON body of `bytes` (what it declares, at most the route's limit) may take in all;
 * a tuned server (tests) gives every JSON body one fixed deadline instead.
 */
export function jsonBodyDeadlineMs(services: Services, bytes: number): number {
  return (
    services.tuning.jsonBodyDeadlineMs ??
    Math.max(JSON_BODY_MIN_DEADLINE_MS, Math.ceil((bytes / JSON_BODY_MIN_BYTES_PER_SECOND) * 1000))
  );
}

/** The client sent no body bytes for `idleMs` while the server waited for them. */
export class BodyStalled extends Error {
  constructor(readonly idleMs: number) {
    super(`no body bytes arrived for ${idleMs / 1000} s; the request was abandoned`);
  }
}

/** The client kept sending, but too slowly to finish within the body's deadline. */
export class BodyTooSlow extends Error {
  constructor(readonly deadlineMs: number) {
    super(`the request body did not arrive within ${deadlineMs / 1000} s; the request was abandoned`);
  }
}

/** The request ended before its body did (the client went away). A 400: the client's doing. */
export class BodyInterrupted extends Error {
  readonly status = 400;
  constructor() {
    super('the request body ended before it was complete');
  }
}

/** The request body as a stream of its own, which fails with BodyStalled when the client stalls. */
export interface GuardedBody extends Readable {
  /** Detaches from the request (stops the timer), so the caller may read or drop the rest itself. */
  release(): void;
}

/**
 * Pipes `req` through a stream that fails with BodyStalled after `idleMs` without a byte, and
 * (with a deadline) with BodyTooSlow once `deadlineMs` have passed in all. Time the server itself
 * spends behind (bytes already received but not yet read) never counts as idle. A request that
 * ends early (the client went away) fails the stream too, as reading `req` would.
 */
export function guardBodyProgress(req: Readable, idleMs: number, options: { deadlineMs?: number } = {}): GuardedBody {
  let timer: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      arm();
      done(null, chunk);
    },
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(stalled, idleMs);
  };
  const fail = (error: Error) => {
    release();
    guard.destroy(error);
  };
  const stalled = () => {
    if (guard.writableLength > 0 || guard.readableLength > 0 || req.readableLength > 0) return arm();
    fail(new BodyStalled(idleMs));
  };
  const interrupted = () => {
    if (!req.readableEnded) fail(new BodyInterrupted());
  };
  const stopTimers = () => {
    clearTimeout(timer);
    clearTimeout(deadline);
  };
  const release = () => {
    stopTimers();
    req.off('close', interrupted);
    req.off('error', interrupted);
    req.unpipe(guard);
  };
  req.on('close', interrupted);
  req.on('error', interrupted);
  guard.once('finish', stopTimers);
  guard.once('close', stopTimers);
  req.pipe(guard);
  arm();
  if (options.deadlineMs !== undefined)
    deadline = setTimeout(() => fail(new BodyTooSlow(options.deadlineMs!)), options.deadlineMs);
  return Object.assign(guard, { release });
}
