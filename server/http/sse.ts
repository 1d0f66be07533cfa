// Server-sent events framing, written once: headers, the retry preamble, LF-only frames with one-line
// JSON data, heartbeats, ending on drain or disconnect, and dropping a client that stops reading
// rather than buffering for it without bound.
import type { Response } from 'express';
import type { Lifecycle } from '../lifecycle';

export const SSE_RETRY_MS = 3000; // reference contract: `retry: 3000`
export const SSE_HEARTBEAT_MS = 15_000;
/** A client whose unread backlog passes this is dropped (it reconnects with its last cursor). */
export const SSE_MAX_BUFFERED_BYTES = 256 * 1024;

export interface SseFrame {
  id?: string;
  event?: string;
  data?: unknown;
}

export interface SseStream {
  /** Writes one frame; false once the stream is closed (or was just dropped for backpressure). */
  send(frame: SseFrame): boolean;
  /** Writes a frame encoded once by encodeSseFrame (fan-out sends one encoding to many streams). */
  sendEncoded(text: string): boolean;
  comment(text: string): void;
  close(): void;
  readonly closed: boolean;
  /** Runs once when the stream ends, whoever ends it. */
  onClose(fn: () => void): void;
}

export interface SseOptions {
  lifecycle: Lifecycle;
  heartbeatMs?: number;
  maxBufferedBytes?: number;
  headers?: Record<string, string>;
}

/** What every event stream answers with, a HEAD of one included. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-store, no-transform',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * HEAD of an event stream: the headers a GET would get, then the end. A HEAD answer has no body, so
 * holding it open would only hold the connection (and any request pipelined behind it).
 */
/** The response an event stream writes to: named here, so features that stream need not import express. */
export type SseResponse = Response;

export function answerSseHead(res: Response, headers?: Record<string, string>): void {
  res
    .status(200)
    .set({ ...SSE_HEADERS, ...headers })
    .end();
}

const CLOSED: SseStream = {
  send: () => false,
  sendEncoded: () => false,
  comment: () => {},
  close: () => {},
  closed: true,
  onClose: (fn) => fn(),
};

export function openSse(res: Response, options: SseOptions): SseStream {
  // Routes declared with eventStream() never get here for HEAD; this keeps any other caller honest.
  if (res.req.method === 'HEAD') {
    answerSseHead(res, options.headers);
    return CLOSED;
  }
  // The client left while the route was still working (authenticating, reading): its 'close' has
  // already fired and would never end this stream, leaving a heartbeat timer and a drain closer
  // holding the response (and its socket) for the life of the process.
  if (res.destroyed || res.writableEnded || res.socket === null || res.socket.destroyed) return CLOSED;
  const maxBuffered = options.maxBufferedBytes ?? SSE_MAX_BUFFERED_BYTES;
  const closers: (() => void)[] = [];
  let closed = false;

  res.status(200);
  res.set({ ...SSE_HEADERS, Connection: 'keep-alive', ...options.headers });
  res.flushHeaders();
  res.socket?.setNoDelay(true);

  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unregister();
    for (const fn of closers.splice(0)) fn();
    if (!res.writableEnded) res.end();
  };

  const write = (text: string): boolean => {
    if (closed) return false;
    res.write(text);
    if (res.writableLength > maxBuffered) {
      // The client stopped reading: drop it instead of holding its backlog in memory.
      closed = true;
      clearInterval(heartbeat);
      unregister();
      for (const fn of closers.splice(0)) fn();
      res.destroy();
      return false;
    }
    return true;
  };

  const heartbeat = setInterval(() => write(': keep-alive\n\n'), options.heartbeatMs ?? SSE_HEARTBEAT_MS);
  heartbeat.unref();
  const unregister = options.lifecycle.onDrain(close);
  res.once('close', close);

  write(`retry: ${SSE_RETRY_MS}\n\n`);

  return {
    send(frame) {
      return write(encodeSseFrame(frame));
    },
    sendEncoded(text) {
      return write(text);
    },
    comment(text) {
      write(`: ${oneLine(text)}\n\n`);
    },
    close,
    get closed() {
      return closed;
    },
    onClose(fn) {
      if (closed) fn();
      else closers.push(fn);
    },
  };
}

/** A frame as it goes on the wire: LF-only lines, data as one line of JSON. */
export function encodeSseFrame(frame: SseFrame): string {
  let text = '';
  if (frame.id !== undefined) text += `id: ${oneLine(frame.id)}\n`;
  if (frame.event !== undefined) text += `event: ${oneLine(frame.event)}\n`;
  text += `data: ${frame.data === undefined ? '' : JSON.stringify(frame.data)}\n\n`;
  return text;
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]/g, ' ');
}
