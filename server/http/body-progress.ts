// Request bodies must keep moving. Node's whole-request timeout is off (a 1 GiB upload over a slow
// uplink takes hours); instead a body that sends nothing for BODY_IDLE_TIMEOUT_MS while the server
// waits for it fails with a problem, and the connection is closed.
import { Transform, type Readable } from 'node:stream';
import type { Services } from '../services';

/** A minute without a byte: no uplink that is still moving is that quiet, and a stalled client frees its slot. */
export const BODY_IDLE_TIMEOUT_MS = 60_000;

const overrides = new WeakMap<Services, number>();

/** Tests shorten the idle timeout of one server; every other server keeps BODY_IDLE_TIMEOUT_MS. */
export function setBodyIdleTimeout(services: Services, ms: number): void {
  overrides.set(services, ms);
}

export function bodyIdleTimeoutMs(services: Services): number {
  return overrides.get(services) ?? BODY_IDLE_TIMEOUT_MS;
}

/** The client sent no body bytes for `idleMs` while the server waited for them. */
export class BodyStalled extends Error {
  constructor(readonly idleMs: number) {
    super(`no body bytes arrived for ${idleMs / 1000} s; the request was abandoned`);
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
 * Pipes `req` through a stream that fails with BodyStalled after `idleMs` without a byte. Time
 * the server itself spends behind (bytes already received but not yet read) never counts. A
 * request that ends early (the client went away) fails the stream too, as reading `req` would.
 */
export function guardBodyProgress(req: Readable, idleMs: number): GuardedBody {
  let timer: NodeJS.Timeout | undefined;
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
  const stalled = () => {
    if (guard.writableLength > 0 || guard.readableLength > 0 || req.readableLength > 0) return arm();
    release();
    guard.destroy(new BodyStalled(idleMs));
  };
  const interrupted = () => {
    if (req.readableEnded) return;
    release();
    guard.destroy(new BodyInterrupted());
  };
  const release = () => {
    clearTimeout(timer);
    req.off('close', interrupted);
    req.off('error', interrupted);
    req.unpipe(guard);
  };
  req.on('close', interrupted);
  req.on('error', interrupted);
  guard.once('finish', () => clearTimeout(timer));
  guard.once('close', () => clearTimeout(timer));
  req.pipe(guard);
  arm();
  return Object.assign(guard, { release });
}
