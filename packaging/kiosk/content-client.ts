// The mirror's downloads from upstream's content routes. Each of a few kept-alive connections
// reads into one static buffer (net's `onread`) instead of a fresh buffer per socket read, the
// answer is framed by http-parser-js, and a body's bytes are copied into pooled 1 MiB buffers that
// go to the file in order, one write (or writev) at a time, then to the hash (D-384) and back to
// the pool. node:http cost the agent most of its CPU per byte here: a buffer allocated for every
// 64 KiB read, each pushed through a Readable (D-383). Anything but a 2xx answer is thrown as a
// MarqueeProblem (a 401 lets the caller mint a session and ask again); no answer at all is a
// MarqueeNetworkError.
import fs from 'node:fs';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { HTTPParser } from 'http-parser-js';
import { MarqueeNetworkError, type MarqueeProblem } from '../../sdk/client/problem';
import { problemOf } from '../../sdk/client/transport';
import type { HashStream } from './file-hash';
import { BodyTooLongError, type ContentFetch, type ContentResponse } from './mirror';

/** A problem body is read up to this much (a content route never sends more for an error). */
const PROBLEM_MAX_BYTES = 64 * 1024;
/** An answer's status line and headers may take this much; more is refused. */
const HEAD_MAX_BYTES = 64 * 1024;
/** One socket read at most; every connection reads into the same buffer (see `received`). */
const READ_BUFFER_BYTES = 1024 * 1024;
/** A body goes to disk in writes of up to this much. */
const CHUNK_BYTES = 1024 * 1024;
/** Chunks a body may hold toward the disk before its socket is paused. */
const CHUNKS_PER_BODY = 3;
/** Written chunks a body may have waiting for the hash before its socket is paused. */
const CHUNKS_IN_HASH = 4;
/** Chunks kept for reuse: three downloads' worth, with those on their way through the hash. */
const POOL_MAX_CHUNKS = 32;

/** The read buffer and the pooled chunks go once no transfer used them for this long. */
const BUFFERS_IDLE_MS = 5_000;

/**
 * The one read buffer. A read's bytes are parsed, and a body's copied out, before its callback
 * returns, and callbacks run one at a time, so connections can share it.
 */
let readBuffer: Buffer | undefined;
const pool: Buffer[] = [];
/** An agent that is only playing holds none of these buffers. */
const drain = setTimeout(() => {
  readBuffer = undefined;
  pool.length = 0;
}, BUFFERS_IDLE_MS);
drain.unref();

function takeReadBuffer(): Buffer {
  drain.refresh();
  readBuffer ??= Buffer.allocUnsafe(READ_BUFFER_BYTES);
  return readBuffer;
}
function takeChunk(): Buffer {
  drain.refresh();
  return pool.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
}
function giveChunk(chunk: Buffer): void {
  if (pool.length < POOL_MAX_CHUNKS) pool.push(chunk);
}

/** Body chunks idle in the pool now (tests: what a body held comes back). */
export function pooledChunks(): number {
  return pool.length;
}

/** The request target may not carry what would end the request line early. */
const TARGET = /^\/[\x21-\x7e]*$/;

export interface ContentClientOptions {
  /** The credential headers of the moment (read for each request). */
  headers: () => Record<string, string>;
  /** Connections kept open to upstream: one per concurrent download. */
  sockets: number;
  /** Until the answer's headers; a body that sends nothing for this long is cut too. */
  timeoutMs: number;
  /** Certificates to trust for an https upstream instead of Node's (a private CA; tests). */
  ca?: string | Buffer;
}

export class ContentClient {
  private readonly url: URL;
  private readonly idle: Connection[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly open = new Set<Connection>();

  constructor(
    readonly origin: string,
    private readonly options: ContentClientOptions,
  ) {
    this.url = new URL(origin);
  }

  /** The ContentFetch the mirror calls. */
  readonly fetch: ContentFetch = async (path, options) => {
    const headers: Record<string, string> = { ...this.options.headers(), accept: '*/*' };
    if (options.range !== undefined) headers.range = options.range;
    if (options.ifRange !== undefined) headers['if-range'] = options.ifRange;
    const request = requestHead(this.url, path, headers);
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      const connection = await this.connection(options.signal);
      try {
        return await connection.exchange(request, path, options.signal);
      } catch (error) {
        // A kept-alive connection the server had just closed: the request never reached it; once more.
        if (error instanceof StaleConnection && attempt === 1) continue;
        throw error instanceof StaleConnection ? error.cause : error;
      }
    }
  };

  /** Closes every connection; a transfer under way fails. */
  close(): void {
    for (const connection of this.open) connection.destroy(new Error('the content client was closed'));
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** An idle connection, a new one while there are fewer than `sockets`, or the next one freed. */
  private async connection(signal?: AbortSignal): Promise<Connection> {
    for (;;) {
      signal?.throwIfAborted();
      const kept = this.idle.pop();
      if (kept) return kept.take();
      if (this.open.size < this.options.sockets) {
        const connection = new Connection(this.url, this.options, {
          idle: (c) => {
            this.idle.push(c);
            this.waiting.shift()?.();
          },
          closed: (c) => {
            this.open.delete(c);
            const at = this.idle.indexOf(c);
            if (at >= 0) this.idle.splice(at, 1);
            this.waiting.shift()?.();
          },
        });
        this.open.add(connection);
        return connection;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }
}

/** The request's bytes: a GET with the given headers, checked so nothing can end a line early. */
function requestHead(origin: URL, path: string, headers: Record<string, string>): string {
  if (!TARGET.test(path)) throw new TypeError('a content path must be an absolute path of visible ASCII');
  let head = `GET ${path} HTTP/1.1\r\nhost: ${origin.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    try {
      // node:http's own checks: a token for the name, no control characters in the value.
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      throw new TypeError(`header ${name} cannot be sent`);
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

interface Owner {
  idle(connection: Connection): void;
  closed(connection: Connection): void;
}

/** What the connection is doing with the answer it reads. */
type Reading =
  | { stage: 'head'; resolve: (r: ContentResponse) => void; reject: (e: unknown) => void; headBytes: number }
  | { stage: 'body'; body: BodyFile }
  | {
      stage: 'problem';
      status: number;
      headers: Headers;
      chunks: Buffer[];
      size: number;
      reject: (e: unknown) => void;
    };

/** One kept-alive HTTP/1.1 connection to upstream, one request at a time. */
class Connection {
  private readonly socket: net.Socket;
  private readonly parser: InstanceType<typeof HTTPParser>;
  private reading: Reading | undefined;
  /** It has carried a whole exchange before (a failure on its next request may be a stale socket). */
  private used = false;
  private path = '';
  /** Nothing of the current answer arrived yet. */
  private silent = true;
  private informational = false;
  private keepAlive = false;
  private closed = false;
  private timedOut = false;
  private unwatch: (() => void) | undefined;

  private readonly timeoutMs: number;

  constructor(
    origin: URL,
    options: Pick<ContentClientOptions, 'timeoutMs' | 'ca'>,
    private readonly owner: Owner,
  ) {
    this.timeoutMs = options.timeoutMs;
    const port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
    const host = origin.hostname.replace(/^\[|\]$/g, '');
    const onread = { buffer: takeReadBuffer, callback: (n: number, buffer: Buffer) => this.received(n, buffer) };
    this.socket =
      origin.protocol === 'https:'
        ? tls.connect({
            host,
            port,
            servername: net.isIP(host) ? undefined : host,
            ca: options.ca,
            onread,
          } as tls.ConnectionOptions)
        : net.connect({ host, port, onread } as net.NetConnectOpts);
    this.socket.setNoDelay(true);
    this.socket.setTimeout(this.timeoutMs, () => {
      this.timedOut = true;
      this.destroy(new Error(`no bytes from upstream for ${this.timeoutMs} ms`));
    });
    this.socket.on('error', (error) => this.destroy(error));
    this.socket.on('end', () => this.ended());
    this.socket.on('close', () => this.destroy(new Error('the connection closed')));
    this.parser = new HTTPParser(HTTPParser.RESPONSE);
    // The parser counts the bytes of a whole message as header bytes when the next one starts in
    // the same read, and puts its limit back for every message: the head is bounded here instead
    // (`received` while it arrives, `head` once it is whole).
    this.parser.maxHeaderSize = Number.MAX_SAFE_INTEGER;
    (this.parser as unknown as { reinitialize: (type: 'RESPONSE') => void }).reinitialize = (type) =>
      this.parser.initialize(type);
    this.parser[HTTPParser.kOnHeadersComplete] = (...args: unknown[]) => this.head(...args);
    this.parser[HTTPParser.kOnBody] = (chunk, offset, length) => this.body(chunk, offset, length);
    this.parser[HTTPParser.kOnMessageComplete] = () => this.complete();
  }

  /** Back in use after idling. */
  take(): this {
    this.socket.ref();
    this.socket.setTimeout(this.timeoutMs);
    return this;
  }

  exchange(request: string, path: string, signal?: AbortSignal): Promise<ContentResponse> {
    this.path = path;
    this.silent = true;
    const answer = new Promise<ContentResponse>((resolve, reject) => {
      this.reading = { stage: 'head', resolve, reject, headBytes: 0 };
    });
    if (signal) {
      const abort = () => this.destroy(signal.reason);
      signal.addEventListener('abort', abort, { once: true });
      this.unwatch = () => signal.removeEventListener('abort', abort);
    }
    this.socket.write(request);
    return answer;
  }

  destroy(error: unknown): void {
    const reading = this.reading;
    const stale =
      this.used && this.silent && !this.timedOut && !(error instanceof Error && error.name === 'AbortError');
    this.reading = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
    if (reading?.stage === 'body') reading.body.fail(error);
    else if (reading) reading.reject(this.failure(error, stale));
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.owner.closed(this);
  }

  /** What a failure before the answer's end is to the caller. */
  private failure(error: unknown, stale: boolean): unknown {
    if (error instanceof Error && error.name === 'AbortError') return error;
    const cause = error instanceof Error ? error : new Error(String(error));
    const failure = new MarqueeNetworkError(`GET ${this.path} got no answer: ${cause.message}`, 1, cause);
    // A kept-alive connection that closed before a byte of the answer: the server had let it go.
    return stale ? new StaleConnection(failure) : failure;
  }

  private received(n: number, buffer: Buffer): boolean {
    const reading = this.reading;
    if (!reading || (reading.stage === 'body' && reading.body.isFailed)) {
      this.destroy(new Error(reading ? 'the body could not be kept' : 'bytes arrived with no request under way'));
      return false;
    }
    this.silent = false;
    if (reading.stage === 'head') reading.headBytes += n;
    let result: number | Error;
    try {
      result = this.parser.execute(buffer, 0, n);
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    if (result instanceof Error) {
      this.destroy(new Error(`upstream sent what is not HTTP/1.1: ${result.message}`));
      return false;
    }
    const now = this.reading;
    if (now?.stage === 'head' && now.headBytes > HEAD_MAX_BYTES) {
      this.destroy(new Error(`the answer's head is larger than ${HEAD_MAX_BYTES} bytes`));
      return false;
    }
    if (now?.stage === 'body' && !now.body.hasRoom()) {
      // The disk is behind: no more reads (and no idle timer) until the body has room again.
      this.socket.setTimeout(0);
      now.body.whenRoom(() => {
        if (this.closed) return;
        this.socket.setTimeout(this.timeoutMs);
        this.socket.resume();
      });
      return false;
    }
    return !this.closed;
  }

  private head(...args: unknown[]): number {
    // The parser passes an object, or (once anything read its kOnExecute) the same fields in order.
    const info = (
      typeof args[0] === 'object' ? args[0] : { headers: args[2], statusCode: args[5], shouldKeepAlive: args[8] }
    ) as { statusCode: number; headers: string[]; shouldKeepAlive: boolean };
    const reading = this.reading;
    if (reading?.stage !== 'head') {
      this.destroy(new Error('an answer arrived with no request under way'));
      return 1;
    }
    const status = info.statusCode;
    // 1xx answers come before the real one; 204 and 304 have no body.
    this.informational = status < 200;
    if (this.informational) return 1;
    this.keepAlive = info.shouldKeepAlive;
    let headBytes = 0;
    for (const field of info.headers) headBytes += field.length + 2;
    if (headBytes > HEAD_MAX_BYTES) {
      this.destroy(new Error(`the answer's head is larger than ${HEAD_MAX_BYTES} bytes`));
      return 1;
    }
    const headers: Record<string, string> = Object.create(null);
    for (let i = 0; i < info.headers.length; i += 2) {
      const name = info.headers[i]!.toLowerCase();
      const value = info.headers[i + 1]!;
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    if (status >= 200 && status < 300) {
      const body = new BodyFile();
      this.reading = { stage: 'body', body };
      reading.resolve({
        status,
        headers,
        saveTo: (file, flags, hash, maxBytes) => body.saveTo(file, flags, hash, maxBytes),
        discard: () => {
          // Its chunks go back to the pool first: the connection's end would keep them for a file.
          const unread = new Error('the body was left unread');
          body.fail(unread, false);
          if (this.reading?.stage === 'body' && this.reading.body === body) this.destroy(unread);
        },
      });
    } else {
      const fields = new Headers();
      for (const [name, value] of Object.entries(headers)) fields.set(name, value);
      this.reading = { stage: 'problem', status, headers: fields, chunks: [], size: 0, reject: reading.reject };
    }
    return status === 204 || status === 304 ? 1 : 0;
  }

  private body(chunk: Buffer, offset: number, length: number): void {
    const reading = this.reading;
    if (reading?.stage === 'body') reading.body.push(chunk, offset, length);
    else if (reading?.stage === 'problem' && reading.size < PROBLEM_MAX_BYTES) {
      const kept = Math.min(length, PROBLEM_MAX_BYTES - reading.size);
      reading.chunks.push(Buffer.from(chunk.subarray(offset, offset + kept)));
      reading.size += kept;
    }
  }

  private complete(): void {
    if (this.informational) {
      this.informational = false;
      return;
    }
    const reading = this.reading;
    this.reading = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
    if (reading?.stage === 'body') reading.body.end();
    else if (reading?.stage === 'problem')
      reading.reject(
        problemOf(reading.status, Buffer.concat(reading.chunks).toString('utf8'), reading.headers) as MarqueeProblem,
      );
    if (!this.keepAlive || this.closed) {
      this.destroy(new Error('the server closes the connection after each answer'));
      return;
    }
    this.used = true;
    this.socket.setTimeout(0);
    this.socket.unref();
    this.owner.idle(this);
  }

  /** The server closed its side: a body sent until the close ends here; anything else was cut. */
  private ended(): void {
    if (this.reading && this.reading.stage !== 'head') this.parser.finish();
    this.destroy(new Error('the server closed the connection'));
  }
}

/**
 * A body on its way to a file: bytes are copied into pooled chunks as they arrive (they may arrive
 * before `saveTo` names the file), and full chunks are written in order, one write at a time, then
 * handed to the hash, which gives them back to the pool. When the transfer fails, what arrived is
 * still written (the file stays a prefix of the content, which a resumed download appends to)
 * before `saveTo` rejects.
 */
class BodyFile {
  private readonly queue: { chunk: Buffer; length: number }[] = [];
  private current: Buffer | undefined;
  private used = 0;
  private fd: number | undefined;
  private writing = false;
  private ended = false;
  private failed: unknown;
  private roomWaiter: (() => void) | undefined;
  private settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  /** `saveTo` settled. */
  private settled = false;
  /** Where written chunks go to be hashed (and come back from to the pool). */
  private hash: HashStream | undefined;
  /** Chunks handed to the hash and not back yet. */
  private hashing = 0;
  /** Body bytes arrived so far, and how many the caller takes at most. */
  private received = 0;
  private maxBytes = Number.POSITIVE_INFINITY;

  push(source: Buffer, offset: number, length: number): void {
    if (this.failed !== undefined) return;
    this.received += length;
    if (this.received > this.maxBytes) return this.fail(new BodyTooLongError(this.maxBytes), false);
    while (length > 0) {
      this.current ??= takeChunk();
      const n = Math.min(length, CHUNK_BYTES - this.used);
      source.copy(this.current, this.used, offset, offset + n);
      this.used += n;
      offset += n;
      length -= n;
      if (this.used === CHUNK_BYTES) this.seal();
    }
    this.pump();
  }

  /** Room for another read's worth of bytes: neither the disk nor the hash is behind. */
  hasRoom(): boolean {
    return this.failed !== undefined || (this.queue.length < CHUNKS_PER_BODY && this.hashing < CHUNKS_IN_HASH);
  }

  get isFailed(): boolean {
    return this.failed !== undefined;
  }

  whenRoom(wake: () => void): void {
    this.roomWaiter = wake;
  }

  saveTo(file: string, flags: 'a' | 'w', hash?: HashStream, maxBytes = Number.POSITIVE_INFINITY): Promise<void> {
    this.hash = hash;
    this.maxBytes = maxBytes;
    // Bytes that came before the file was named count too.
    if (this.received > maxBytes) this.fail(new BodyTooLongError(maxBytes), false);
    return new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
      if (this.failed !== undefined && this.queue.length === 0) return this.finish();
      fs.open(file, flags, (error, fd) => {
        if (error) {
          this.fail(error, false);
          return this.finish();
        }
        this.fd = fd;
        this.pump();
      });
    });
  }

  /** The whole body arrived. */
  end(): void {
    this.ended = true;
    this.seal();
    this.pump();
  }

  /** The transfer failed: what arrived is written (`keep`) or dropped, then `saveTo` rejects. */
  fail(error: unknown, keep = true): void {
    if (this.failed !== undefined || this.settled) return;
    this.failed = error;
    if (keep) this.seal();
    else this.drop();
    this.wakeRoom();
    this.pump();
  }

  private seal(): void {
    if (this.current && this.used > 0) this.queue.push({ chunk: this.current, length: this.used });
    else if (this.current) giveChunk(this.current);
    this.current = undefined;
    this.used = 0;
  }

  private drop(): void {
    for (const { chunk } of this.queue.splice(0)) giveChunk(chunk);
    if (this.current) giveChunk(this.current);
    this.current = undefined;
    this.used = 0;
  }

  /** Writes what is queued, all of it in one call; once the body ended or failed and all is written, settles. */
  private pump(): void {
    if (this.writing || this.fd === undefined) return;
    if (this.queue.length === 0) {
      if (this.ended || this.failed !== undefined) this.finish();
      return;
    }
    const batch = this.queue.splice(0);
    const buffers = batch.map(({ chunk, length }) => (length === chunk.length ? chunk : chunk.subarray(0, length)));
    this.writing = true;
    fs.writev(this.fd, buffers, (error) => {
      this.writing = false;
      for (const { chunk, length } of batch) {
        if (!this.hash || error) giveChunk(chunk);
        else {
          this.hashing++;
          this.hash.give(chunk, length, (back) => {
            this.hashing--;
            giveChunk(back);
            this.wakeRoom();
          });
        }
      }
      if (error) {
        this.failed = error;
        this.drop();
      }
      this.wakeRoom();
      this.pump();
    });
  }

  /** Lets a paused socket read again, once there is room for what it reads. */
  private wakeRoom(): void {
    if (!this.hasRoom()) return;
    const wake = this.roomWaiter;
    this.roomWaiter = undefined;
    wake?.();
  }

  /** Closes the file and settles `saveTo` (once it was called). */
  private finish(): void {
    const settle = this.settle;
    if (!settle || this.settled) return;
    this.settled = true;
    const fd = this.fd;
    this.fd = undefined;
    const done = () => (this.failed === undefined ? settle.resolve() : settle.reject(this.failed));
    if (fd === undefined) return done();
    fs.close(fd, (error) => {
      if (error && this.failed === undefined) this.failed = error;
      done();
    });
  }
}
