// A raw SSE reader for server tests: every frame and comment exactly as sent, with waits by count.
// (The reconnecting client that applications use is sdk/sse; these tests look beneath it.)
import type http from 'node:http';
import { createParser } from 'eventsource-parser';
import type { RequestOptions, TestServer } from '../testing/harness';

export interface Frame {
  id: string | undefined;
  event: string | undefined;
  /** The data line as sent; '' for payload-free frames. */
  data: string;
  json<T = any>(): T;
}

export class StreamReader {
  readonly frames: Frame[] = [];
  readonly comments: string[] = [];
  /** The raw text received, to check framing byte for byte. */
  raw = '';
  ended = false;
  private waiters: (() => void)[] = [];

  private constructor(
    readonly req: http.ClientRequest,
    readonly res: http.IncomingMessage,
  ) {
    const parser = createParser({
      onEvent: (e) => {
        this.frames.push({ id: e.id, event: e.event, data: e.data, json: () => JSON.parse(e.data) });
        this.notify();
      },
      onComment: (c) => {
        this.comments.push(c);
        this.notify();
      },
    });
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.raw += chunk;
      parser.feed(chunk);
    });
    const end = () => {
      this.ended = true;
      this.notify();
    };
    res.on('end', end);
    res.on('close', end);
    res.on('error', end);
    req.on('error', end);
  }

  static open(server: TestServer, path: string, options: RequestOptions = {}): Promise<StreamReader> {
    return new Promise((resolve, reject) => {
      const req = server.rawRequest(
        'GET',
        path,
        { ...options, headers: { accept: 'text/event-stream', ...options.headers } },
        (res) => resolve(new StreamReader(req, res)),
      );
      req.on('error', reject);
    });
  }

  get status(): number {
    return this.res.statusCode!;
  }

  get headers(): http.IncomingHttpHeaders {
    return this.res.headers;
  }

  /** Frames other than stream.cursor, in order. */
  get events(): Frame[] {
    return this.frames.filter((f) => f.event !== 'stream.cursor');
  }

  /** Resolves once `count` frames arrived (or the stream ended), failing after `timeoutMs`. */
  async waitForFrames(count: number, timeoutMs = 5000): Promise<Frame[]> {
    await this.waitUntil(
      () => this.frames.length >= count || this.ended,
      `${count} frames (have ${this.frames.length})`,
      timeoutMs,
    );
    if (this.frames.length < count) throw new Error(`the stream ended after ${this.frames.length} of ${count} frames`);
    return this.frames.slice(0, count);
  }

  async waitForEnd(timeoutMs = 5000): Promise<void> {
    await this.waitUntil(() => this.ended, 'the end of the stream', timeoutMs);
  }

  waitUntil(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve();
      };
      this.waiters.push(check);
    });
  }

  close(): void {
    this.req.destroy();
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
