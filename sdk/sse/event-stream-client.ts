// A resuming client for Marquee's event streams (the control-plane account stream, the runtime
// screen stream), for browsers and Node alike: fetch + eventsource-parser, so it can send a bearer
// and use any fetch. It resumes at its cursor after every disconnect, backs off with jitter, hands
// `stream.resync_required` to the caller and continues at the head cursor that frame carries.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { abortableSleep } from '../abortable-sleep';
import type { ResyncRequired } from '../contract/events';
import { STREAM_CURSOR, STREAM_RESYNC_REQUIRED } from '../contract/stream-control';

/** First reconnect delay when neither the caller nor the server's `retry:` says otherwise. */
export const DEFAULT_INITIAL_DELAY_MS = 1000;
/** Reconnect delays double up to this. */
export const DEFAULT_MAX_DELAY_MS = 30_000;
/** No byte for this long (the server sends a heartbeat every 15 s) means the connection is dead. */
export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/** Statuses that another attempt cannot fix: the client must change something first. */
const FATAL_STATUSES = new Set([400, 401, 402, 403, 404, 405, 406, 410]);

export interface StreamMessage<T = unknown> {
  /** The frame's `id:`, the cursor to resume after it. */
  cursor: string | undefined;
  /** The frame's `event:` (`message` when absent). */
  type: string;
  /** Parsed JSON data; undefined for a payload-free frame. */
  data: T;
}

export interface EventStreamOptions {
  /** The stream's URL, such as `https://marquee.example/api/v1/events/stream`. */
  url: string | URL;
  /** Resume after this cursor; without it the server starts at its oldest retained event. */
  cursor?: string;
  /** How the cursor is sent: the `after` query parameter (default) or the Last-Event-ID header. */
  cursorIn?: 'query' | 'header';
  /** Sent on every attempt (a bearer, say); a function is called again before each one. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /** Any fetch: the global one by default. */
  fetch?: typeof fetch;
  /** Aborting it ends the stream for good. */
  signal?: AbortSignal;
  /** Each event in order; the cursor moves past it only once this returns (or its promise resolves). */
  onEvent: (message: StreamMessage) => void | Promise<void>;
  /** The cursor could not be resumed: refetch authoritative state here; the stream then resumes at `resync.cursor`. */
  onResync?: (resync: ResyncRequired) => void | Promise<void>;
  /** Each time the cursor moves (persist it to resume across restarts). */
  onCursor?: (cursor: string) => void;
  /** Each time a connection is established. */
  onOpen?: () => void;
  /** Each time a connection is lost or refused and another attempt is scheduled. */
  onRetry?: (retry: { attempt: number; delayMs: number; error: unknown }) => void;
  initialDelayMs?: number;
  maxDelayMs?: number;
  idleTimeoutMs?: number;
  /** Jitter source in [0, 1); tests pass a fixed one. */
  random?: () => number;
}

export interface EventStream {
  /** The cursor to resume after the last event handled. */
  readonly cursor: string | undefined;
  /** Resolves when closed or aborted; rejects on a refusal no retry can fix, or when a callback throws. */
  readonly done: Promise<void>;
  close(): void;
}

export class EventStreamError extends Error {
  constructor(
    message: string,
    /** HTTP status of a refused connection. */
    readonly status?: number,
    /** The problem document the server answered with, if any. */
    readonly problem?: unknown,
  ) {
    super(message);
    this.name = 'EventStreamError';
  }
}

/** Exponential backoff with jitter: the nth delay lies between half and all of initial × 2ⁿ, capped. */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** Carries an error a caller's callback threw, so it ends the stream instead of being retried. */
class CallbackFailure {
  constructor(readonly error: unknown) {}
}

async function call<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new CallbackFailure(error);
  }
}

class Retryable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Opens the stream and keeps it open until closed, aborted or refused for good. */
export function followEventStream(options: EventStreamOptions): EventStream {
  const outer = new AbortController();
  const abortOuter = () => outer.abort();
  if (options.signal?.aborted) outer.abort();
  else options.signal?.addEventListener('abort', abortOuter, { once: true });

  let cursor = options.cursor;
  let serverRetryMs: number | undefined;
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const random = options.random ?? Math.random;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;

  const moveCursor = (next: string | undefined) => {
    if (next === undefined || next === cursor) return;
    cursor = next;
    try {
      options.onCursor?.(next);
    } catch (error) {
      throw new CallbackFailure(error);
    }
  };

  /** One connection; resolves when the server ends it, true when it ended for a resync. */
  const connect = async (onHealthy: () => void): Promise<boolean> => {
    const attempt = new AbortController();
    const abortAttempt = () => attempt.abort();
    outer.signal.addEventListener('abort', abortAttempt, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const resetIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => attempt.abort(), idleTimeoutMs);
    };
    try {
      const url = new URL(options.url, (globalThis as { location?: { href: string } }).location?.href);
      const given = typeof options.headers === 'function' ? await options.headers() : (options.headers ?? {});
      const headers: Record<string, string> = { ...given, accept: 'text/event-stream' };
      if (cursor !== undefined) {
        if (options.cursorIn === 'header') headers['last-event-id'] = cursor;
        else url.searchParams.set('after', cursor);
      }
      resetIdle();
      const res = await fetchImpl(url, { headers, signal: attempt.signal });
      if (!res.ok) throw await refusal(res);
      const type = res.headers.get('content-type') ?? '';
      if (!type.startsWith('text/event-stream'))
        throw new EventStreamError(`expected text/event-stream, got ${type || 'no content type'}`, res.status);
      if (!res.body) throw new Retryable('the response has no body');
      await call(() => options.onOpen?.());

      const queue: EventSourceMessage[] = [];
      const parser = createParser({
        onEvent: (message) => queue.push(message),
        onRetry: (ms) => (serverRetryMs = ms),
        onComment: () => onHealthy(),
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return false;
          resetIdle();
          parser.feed(value);
          // An abort stops the hand-over of a read already parsed (a replay parses many frames at once).
          while (queue.length > 0 && !outer.signal.aborted) {
            const message = queue.shift()!;
            onHealthy();
            if (await handle(message)) return true;
          }
        }
      } finally {
        void reader.cancel().catch(() => undefined);
      }
    } finally {
      clearTimeout(idle);
      outer.signal.removeEventListener('abort', abortAttempt);
      attempt.abort();
    }
  };

  /** Handles one frame; true when it asked for a resync. */
  const handle = async (message: EventSourceMessage): Promise<boolean> => {
    const type = message.event ?? 'message';
    if (type === STREAM_CURSOR) {
      moveCursor(message.id);
      return false;
    }
    let data: unknown;
    try {
      data = message.data === '' ? undefined : JSON.parse(message.data);
    } catch {
      throw new EventStreamError(`the ${type} frame's data is not JSON`);
    }
    if (type === STREAM_RESYNC_REQUIRED) {
      const resync = data as ResyncRequired;
      await call(() => options.onResync?.(resync));
      moveCursor(resync.cursor ?? message.id);
      return true;
    }
    await call(() => options.onEvent({ cursor: message.id, type, data }));
    moveCursor(message.id);
    return false;
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!outer.signal.aborted) {
      let error: unknown;
      let retryAfterMs: number | undefined;
      let immediately = false;
      try {
        immediately = await connect(() => (failures = 0));
        error = new Retryable('the server ended the stream');
      } catch (caught) {
        if (caught instanceof CallbackFailure) throw caught.error;
        if (outer.signal.aborted) return;
        if (caught instanceof EventStreamError) throw caught;
        // Anything else is the transport: refused connections, resets, aborted (idle) attempts.
        error = caught;
        retryAfterMs = caught instanceof Retryable ? caught.retryAfterMs : undefined;
      }
      if (outer.signal.aborted) return;
      if (immediately) continue; // resync: resume at the head right away
      const initial = options.initialDelayMs ?? serverRetryMs ?? DEFAULT_INITIAL_DELAY_MS;
      const delayMs = Math.max(
        backoffDelay(failures, initial, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, random),
        retryAfterMs ?? 0,
      );
      failures++;
      await call(() => options.onRetry?.({ attempt: failures, delayMs, error }));
      await abortableSleep(delayMs, outer.signal);
    }
  };

  const done = run().finally(() => options.signal?.removeEventListener('abort', abortOuter));
  return {
    get cursor() {
      return cursor;
    },
    done,
    close: () => outer.abort(),
  };
}

async function refusal(res: Response): Promise<Error> {
  let problem: unknown;
  try {
    problem = await res.json();
  } catch {
    problem = undefined;
  }
  const code = (problem as { code?: string } | undefined)?.code;
  const message = `the event stream was refused: ${res.status}${code ? ` ${code}` : ''}`;
  if (FATAL_STATUSES.has(res.status)) return new EventStreamError(message, res.status, problem);
  const retryAfter = Number(res.headers.get('retry-after'));
  return new Retryable(message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined);
}
