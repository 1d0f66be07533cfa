// Test support: a loopback HTTP proxy between the CLI and a real server that records every
// exchange and, on cue, loses a connection (before the server sees the request, or after it
// answered), slows an upload down, cuts an event stream after some frames, or shifts the Date header.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';

export interface Exchange {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The server's status, once it answered (also for an answer the proxy then lost). */
  status?: number;
  /** The answer's body for small JSON answers (to find ids the CLI saw). */
  body?: string;
  /** Request body bytes forwarded so far. */
  sent: number;
  /** The `id:` of every event-stream frame passed to the client. */
  frameIds: string[];
  at: number;
}

type Match = (exchange: Exchange) => boolean;

interface Rule {
  when: Match;
  action:
    | { kind: 'drop'; where: 'before' | 'after' }
    | { kind: 'throttle'; bytesPerSecond: number }
    | { kind: 'cut-stream'; afterFrames: number };
  /** Applies this many more times (Infinity: always). */
  times: number;
}

/** JSON answers up to this size are kept in `body`. */
const KEEP_BODY_BYTES = 64 * 1024;
/** A throttled body moves in chunks this big. */
const THROTTLE_CHUNK = 8 * 1024;

export class FaultProxy {
  readonly exchanges: Exchange[] = [];
  /** The server's port, set once it is known. */
  target = 0;
  /** Added to every Date header the server sends (clock-skew checks). */
  dateOffsetMs = 0;
  private rules: Rule[] = [];
  private listeners: (() => void)[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FaultProxy> {
    let proxy!: FaultProxy;
    const server = http.createServer((req, res) => proxy.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new FaultProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The next `times` requests matching `when` lose their connection. */
  drop(when: Match, where: 'before' | 'after', times = 1): void {
    this.rules.push({ when, action: { kind: 'drop', where }, times });
  }

  /** Request bodies matching `when` reach the server at this rate. */
  throttle(when: Match, bytesPerSecond: number): void {
    this.rules.push({ when, action: { kind: 'throttle', bytesPerSecond }, times: Infinity });
  }

  /** The next response matching `when` is cut off after this many SSE frames that carry an id. */
  cutStream(when: Match, afterFrames: number): void {
    this.rules.push({ when, action: { kind: 'cut-stream', afterFrames }, times: 1 });
  }

  reset(): void {
    this.rules = [];
    this.dateOffsetMs = 0;
  }

  /** Resolves with the first exchange, past or future, that satisfies `predicate`. */
  waitFor(predicate: Match, timeoutMs = 15_000): Promise<Exchange> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the proxy never saw the awaited exchange')), timeoutMs);
      const check = () => {
        const found = this.exchanges.find(predicate);
        if (!found) return false;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
        resolve(found);
        return true;
      };
      const listener = () => void check();
      if (!check()) this.listeners.push(listener);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private take(exchange: Exchange, kind: Rule['action']['kind']): Rule['action'] | undefined {
    const rule = this.rules.find((r) => r.action.kind === kind && r.times > 0 && r.when(exchange));
    if (!rule) return undefined;
    rule.times--;
    return rule.action;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const exchange: Exchange = {
      method: req.method!,
      path: req.url!,
      headers: req.headers,
      sent: 0,
      frameIds: [],
      at: Date.now(),
    };
    this.exchanges.push(exchange);
    this.changed();
    const drop = this.take(exchange, 'drop');
    if (drop?.kind === 'drop' && drop.where === 'before') {
      req.socket.destroy();
      return;
    }
    const throttle = this.take(exchange, 'throttle');
    const cut = this.take(exchange, 'cut-stream');
    const upstream = http.request(
      { host: '127.0.0.1', port: this.target, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        exchange.status = answer.statusCode;
        this.changed();
        const headers = { ...answer.headers };
        if (this.dateOffsetMs !== 0 && headers.date)
          headers.date = new Date(Date.parse(headers.date) + this.dateOffsetMs).toUTCString();
        const chunks: Buffer[] = [];
        let kept = 0;
        const json = String(headers['content-type'] ?? '').includes('json');
        if (drop?.kind === 'drop') {
          // The server did the work; its answer never reaches the client.
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode!, headers);
        let frames = 0;
        answer.on('data', (chunk: Buffer) => {
          if (json && kept + chunk.length <= KEEP_BODY_BYTES) {
            chunks.push(chunk);
            kept += chunk.length;
          }
          const ids = [...chunk.toString('utf8').matchAll(/^id: (.*)$/gm)].map((m) => m[1]!);
          exchange.frameIds.push(...ids);
          if (cut?.kind === 'cut-stream' && frames < cut.afterFrames) {
            frames += ids.length;
            // The frame reaches the client, then the connection breaks without an end.
            if (frames >= cut.afterFrames) {
              res.write(chunk, () => {
                res.destroy();
                answer.destroy();
              });
              return;
            }
          }
          res.write(chunk);
        });
        answer.on('end', () => {
          if (json) exchange.body = Buffer.concat(chunks).toString('utf8');
          this.changed();
          res.end();
        });
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    req.on('close', () => {
      if (!req.complete) upstream.destroy();
    });
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (throttle?.kind !== 'throttle') {
          exchange.sent += chunk.length;
          this.changed();
          return done(null, chunk);
        }
        // Forward in small pieces at the configured rate.
        const pieces: Buffer[] = [];
        for (let i = 0; i < chunk.length; i += THROTTLE_CHUNK) pieces.push(chunk.subarray(i, i + THROTTLE_CHUNK));
        const next = () => {
          const piece = pieces.shift();
          if (!piece) return done();
          setTimeout(
            () => {
              exchange.sent += piece.length;
              this.changed();
              counter.push(piece);
              next();
            },
            (piece.length / throttle.bytesPerSecond) * 1000,
          );
        };
        next();
      },
    });
    req.pipe(counter).pipe(upstream);
  }
}
