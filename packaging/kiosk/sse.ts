// Server-sent events towards the renderer: the framing the player's stream client reads (LF-only
// frames, one-line JSON data, `retry:`), heartbeat comments, and an end when either side leaves.
import type { Response } from 'express';

export const SSE_RETRY_MS = 1000;
const HEARTBEAT_MS = 15_000;

export interface SseWriter {
  send(frame: { id?: string; event: string; data?: unknown }): void;
  close(): void;
  onClose(fn: () => void): void;
  readonly closed: boolean;
}

export function openSse(res: Response): SseWriter {
  let closed = false;
  const closers: (() => void)[] = [];
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-store, no-transform',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  res.write(`retry: ${SSE_RETRY_MS}\n\n`);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const fn of closers) fn();
    res.end();
  };
  res.on('close', close);
  return {
    send(frame) {
      if (closed) return;
      let text = '';
      if (frame.id !== undefined) text += `id: ${frame.id}\n`;
      text += `event: ${frame.event}\n`;
      text += `data: ${frame.data === undefined ? '' : JSON.stringify(frame.data)}\n\n`;
      res.write(text);
    },
    close,
    onClose: (fn) => (closed ? fn() : closers.push(fn)),
    get closed() {
      return closed;
    },
  };
}
