// Test harness: a real Marquee server on 127.0.0.1 with a temporary data dir and a fresh database
// (on the engine MARQUEE_TEST_DATABASE_URL names), a test clock, captured logs, and an HTTP client
// that can set Host (Node's fetch cannot) and keep cookies.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createServer, type MarqueeServer, type ServerOptions } from '../app';
import { TestClock } from '../clock';
import { loadConfig, type Config } from '../config';
import type { Services } from '../services';
import { testDatabase, type TestDatabase } from './test-database';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json<T = any>(): T;
}

export interface RequestOptions {
  /** Host header; defaults to the control origin's host. */
  host?: string;
  token?: string;
  headers?: Record<string, string | string[]>;
  json?: unknown;
  body?: Buffer | string | Readable;
  cookies?: CookieJar;
  idempotencyKey?: string;
  ifMatch?: number | string;
}

/** Cookies per host, as a browser keeps them (host-only, which is all `__Host-` cookies can be). */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  store(host: string, setCookie: string[] | undefined): void {
    if (!setCookie) return;
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    for (const line of setCookie) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.byHost.set(host, jar);
  }

  header(host: string): string | undefined {
    const jar = this.byHost.get(host);
    if (!jar || jar.size === 0) return undefined;
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(host: string, name: string): string | undefined {
    return this.byHost.get(host)?.get(name);
  }

  set(host: string, name: string, value: string): void {
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.byHost.set(host, jar);
  }
}

/** What a test may set besides the configuration: the server's options (implementations, tuning, player build). */
export interface TestServerOptions extends Omit<ServerOptions, 'config' | 'clock' | 'logDestination'> {
  clock?: TestClock;
  config?: Partial<Config>;
  /** Reuse a data dir, and the database that goes with it (restart tests). */
  dataDir?: string;
  /** Runs after the services exist and before the server starts workers and listens. */
  beforeListen?: (services: Services) => void;
}

export class TestServer {
  private constructor(
    /** Log lines the server wrote, as JSON text. */
    readonly logs: string[],
    readonly server: MarqueeServer,
    readonly port: number,
    readonly dataDir: string,
    readonly clock: TestClock,
    private readonly options: TestServerOptions,
    private readonly database: TestDatabase,
  ) {}

  static async start(options: TestServerOptions = {}): Promise<TestServer> {
    const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-test-'));
    const clock = options.clock ?? new TestClock();
    // Origins need the port before it is known: bind first, then build the server on that port.
    const port = options.config?.port || (await freePort());
    const database = await testDatabase(dataDir);
    const config = loadConfig({}, [], {
      port,
      bind: '127.0.0.1',
      dataDir,
      databaseUrl: database.url,
      logLevel: 'info',
      enrollmentsPerIpPerHour: 100_000,
      secret: 'test-secret-test-secret-test-secret-0123456789',
      ...options.config,
    });
    const logs: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const { clock: _clock, config: _config, dataDir: _dataDir, beforeListen, ...serverOptions } = options;
    const server = await createServer({ ...serverOptions, config, clock, logDestination: destination as never });
    beforeListen?.(server.services);
    await server.listen();
    return new TestServer(logs, server, port, dataDir, clock, { ...options, dataDir }, database);
  }

  get services(): Services {
    return this.server.services;
  }

  get config(): Config {
    return this.server.services.config;
  }

  /** `localhost:<port>`: the control and play host. */
  get host(): string {
    return `localhost:${this.port}`;
  }

  get origin(): string {
    return `http://localhost:${this.port}`;
  }

  /** Stops this server and starts another on the same data dir and port. */
  async restart(): Promise<TestServer> {
    await this.server.stop(2000);
    return TestServer.start({
      ...this.options,
      clock: this.clock,
      dataDir: this.dataDir,
      config: { ...this.options.config, port: this.port },
    });
  }

  async stop(options: { keepData?: boolean } = {}): Promise<void> {
    await this.server.stop(2000);
    if (options.keepData) return;
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    await this.database.drop();
  }

  request(method: string, pathname: string, options: RequestOptions = {}): Promise<TestResponse> {
    return new Promise((resolve, reject) => {
      const req = this.rawRequest(method, pathname, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, body, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  }

  /** Starts a request and hands over the response as it arrives (streams, SSE). */
  rawRequest(
    method: string,
    pathname: string,
    options: RequestOptions,
    onResponse: (res: http.IncomingMessage) => void,
  ): http.ClientRequest {
    const host = options.host ?? this.host;
    const headers: Record<string, string | string[]> = { host, ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    if (options.ifMatch !== undefined)
      headers['if-match'] = typeof options.ifMatch === 'number' ? `"${options.ifMatch}"` : options.ifMatch;
    const cookie = options.cookies?.header(host);
    if (cookie) headers.cookie = cookie;
    let body: Buffer | string | Readable | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    if (typeof body === 'string' || Buffer.isBuffer(body)) headers['content-length'] = String(Buffer.byteLength(body));
    const req = http.request(
      { host: '127.0.0.1', port: this.port, method, path: pathname, headers, agent: false },
      (res) => {
        options.cookies?.store(host, res.headers['set-cookie']);
        onResponse(res);
      },
    );
    if (body instanceof Readable) body.pipe(req);
    else req.end(body);
    return req;
  }

  /** Enrolls a Model P project and returns its bearer. */
  async enroll(overrides: Record<string, unknown> = {}): Promise<{ token: string; projectId: string; body: any }> {
    const res = await this.request('POST', '/api/v1/enrollments', {
      json: { client_id: clientId(), email: `owner-${randomKey()}@example.com`, ...overrides },
      idempotencyKey: randomKey(),
    });
    if (res.status !== 201) throw new Error(`enrollment failed: ${res.status} ${res.text}`);
    const body = res.json();
    return { token: body.token, projectId: body.project.id, body };
  }

  /** Creates a Model A account and returns its bearer. */
  async createAccount(
    email = `owner-${randomKey()}@example.com`,
  ): Promise<{ token: string; accountId: string; body: any }> {
    const res = await this.request('POST', '/api/v1/accounts', { json: { email }, idempotencyKey: randomKey() });
    if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${res.text}`);
    const body = res.json();
    return { token: body.token, accountId: body.account.id, body };
  }

  /** Every log line captured so far, as one string (secret-leak checks). */
  logText(): string {
    return this.logs.join('');
  }
}

export function randomKey(): string {
  return crypto.randomBytes(16).toString('base64url');
}

export function clientId(): string {
  return `cli_${crypto.randomBytes(32).toString('base64url')}`;
}

/** A port on 127.0.0.1 free at the moment of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = http.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
