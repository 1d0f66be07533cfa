// Test fixture for the app bridge in a real browser: one HTTP server on 127.0.0.1 that answers as
// three origins by Host (the player, a release host, and an unrelated "evil" site), serves the
// freshly built bridge bundles, and fakes the runtime KV routes (checking the placement capability)
// or hands them on to a real server.
import http from 'node:http';
import path from 'node:path';
import { build } from 'vite';
import { PLAYER_ORIGIN_PATH } from '../contract/archive-paths';

export const RELEASE_LABEL = '0123456789abcdef0123456789abcdef01234567';
export const CAPABILITY_HANDLE = 'cap_test_handle_that_must_never_reach_the_frame_0123456789';
export const RUNTIME_COOKIE = 'marquee-runtime=runtime-session-for-tests';
/** How long /slow-load.html's image holds the frame's load event. */
const SLOW_LOAD_MS = 1500;

const sdkDir = path.resolve(import.meta.dirname, '..');

interface Output {
  output: { type: string; code?: string }[];
}

async function bundle(config: Parameters<typeof build>[0]): Promise<string> {
  const result = (await build({ ...config, logLevel: 'silent' })) as Output | Output[];
  const outputs = Array.isArray(result) ? result : [result];
  const chunk = outputs[0]!.output.find((o) => o.type === 'chunk');
  if (!chunk?.code) throw new Error('bundle produced no chunk');
  return chunk.code;
}

/** The three bundles the pages load, built from source with the SDK's own build config. */
export async function buildBridgeBundles(): Promise<{ classic: string; module: string; parent: string }> {
  const configFile = path.join(sdkDir, 'vite.config.ts');
  const [classic, module, parent] = await Promise.all([
    bundle({ configFile, mode: 'classic', build: { write: false } }),
    bundle({ configFile, mode: 'module', build: { write: false } }),
    bundle({
      configFile: false,
      root: sdkDir,
      publicDir: false,
      build: {
        write: false,
        minify: false,
        target: 'es2022',
        lib: { entry: path.join(sdkDir, 'bridge/parent.ts'), formats: ['es'], fileName: () => 'parent.mjs' },
      },
    }),
  ]);
  return { classic, module, parent };
}

export interface KvRecord {
  method: string;
  path: string;
  /** The query as sent, with its leading `?` (empty when there is none). */
  search: string;
  capability: string | undefined;
  cookie: string | undefined;
  idempotencyKey: string | undefined;
  ifMatch: string | undefined;
}

/** A runtime KV call the fixture hands on, with only the headers the parent bridge sets. */
export interface UpstreamKvRequest {
  method: string;
  /** Path and query as the parent bridge sent them. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface UpstreamKvResponse {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

interface StoredValue {
  value_base64: string;
  content_type: string;
  revision: number;
}

const RECORDER = `<script>window.received = []; addEventListener('message', (e) => received.push(typeof e.data === 'string' ? e.data : JSON.stringify(e.data)));</script>`;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** What a release host answers at /.marquee/player-origin, when a test wants something else than the server's answer. */
export interface PlayerOriginAnswer {
  status: number;
  body: string;
  type: string;
  /** Further headers (a redirect's Location). */
  headers?: Record<string, string>;
}

export class BridgeFixture {
  readonly kvRecords: KvRecord[] = [];
  /** Requests for /.marquee/player-origin, with the headers the server's authorization reads. */
  readonly playerOriginRequests: {
    cookie: string | undefined;
    site: string | undefined;
    mode: string | undefined;
    cacheControl: string | undefined;
  }[] = [];
  /** Replaces the server's answer (for a failing or lying release host). */
  playerOriginAnswer: PlayerOriginAnswer | null = null;
  /** Holds the answer this long (handshakes arrive meanwhile). */
  playerOriginDelayMs = 0;
  /** Transient failures the next requests meet, one each, before the answer: a 503 or a reset connection. */
  readonly playerOriginFailures: (503 | 'reset')[] = [];
  /** Files of a packed application, served from the release origin by path. */
  readonly releaseFiles = new Map<string, Buffer>();
  /** When set, runtime KV calls go here (a real server) instead of the fake store. */
  runtimeUpstream: ((request: UpstreamKvRequest) => Promise<UpstreamKvResponse>) | undefined;
  private readonly kv = new Map<string, StoredValue>();
  private readonly hanging: http.ServerResponse[] = [];
  private server!: http.Server;
  port = 0;

  constructor(private readonly bundles: { classic: string; module: string; parent: string }) {}

  get playerOrigin(): string {
    return `http://localhost:${this.port}`;
  }

  get releaseOrigin(): string {
    return `http://${RELEASE_LABEL}.release.localhost:${this.port}`;
  }

  get evilOrigin(): string {
    return `http://evil.localhost:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.route(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  resetKv(): void {
    this.kv.clear();
    this.kvRecords.length = 0;
  }

  private send(
    res: http.ServerResponse,
    status: number,
    body: string,
    type = 'text/html; charset=utf-8',
    headers: Record<string, string> = {},
  ): void {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
    res.end(body);
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', 'http://fixture.invalid');
    const js = 'text/javascript; charset=utf-8';
    if (host === 'localhost') {
      if (url.pathname === '/player.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><head><title>player</title></head><body><script type="module">import * as bridge from '/parent.mjs'; window.bridge = bridge; window.records = { diagnostics: [], advances: [], events: [], logs: [], ready: [] }; window.bridgeLoaded = true;</script></body></html>`,
          undefined,
          { 'set-cookie': `${RUNTIME_COOKIE}; Path=/; HttpOnly; SameSite=Strict` },
        );
      }
      if (url.pathname === '/parent.mjs') return this.send(res, 200, this.bundles.parent, js);
      if (url.pathname === '/sibling.html')
        return this.send(res, 200, `<!doctype html><html><body>${RECORDER}</body></html>`);
      if (url.pathname.startsWith('/runtime/v1/apps/')) return this.runtimeKv(req, res, url);
    } else if (host === `${RELEASE_LABEL}.release.localhost`) {
      if (url.pathname === PLAYER_ORIGIN_PATH) return this.answerPlayerOrigin(req, res);
      const packed = this.releaseFiles.get(decodeURIComponent(url.pathname.slice(1)));
      if (packed) {
        res.writeHead(200, {
          'content-type': CONTENT_TYPES[path.extname(url.pathname)] ?? 'application/octet-stream',
          'cache-control': 'no-store',
        });
        return void res.end(packed);
      }
      if (url.pathname === '/app.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><head>${RECORDER}<script src="./_marquee/runtime.js" data-marquee-sdk="1"></script></head><body>app</body></html>`,
        );
      }
      // An application whose load event waits for a slow image: its SDK runs, and asks which
      // player to trust, well before the frame's load event tells the parent to handshake.
      if (url.pathname === '/slow-load.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><head>${RECORDER}<script src="./_marquee/runtime.js" data-marquee-sdk="1"></script></head><body>app<img src="/slow.svg"></body></html>`,
        );
      }
      // A loader page without the SDK that sends the frame on to a slowly loading release page
      // (?to=, /slow-load.html by default) once it has loaded: the parent has begun a round of
      // handshakes for it by then.
      if (url.pathname === '/loader.html') {
        const to = JSON.stringify(url.searchParams.get('to') ?? '/slow-load.html');
        return this.send(
          res,
          200,
          `<!doctype html><html><body>loading<script>addEventListener('load', () => setTimeout(() => location.replace(${to}), 50));</script></body></html>`,
        );
      }
      // A slowly loading release page that makes a KV write from its own load handler.
      if (url.pathname === '/onload-kv.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><head>${RECORDER}<script src="./_marquee/runtime.js" data-marquee-sdk="1"></script><script>addEventListener('load', () => { window.onloadResult = 'pending'; window.marquee.kv.set('onload', 'ok').then((e) => { window.onloadResult = 'ok:' + e.revision; }, (e) => { window.onloadResult = 'err:' + e.code; }); });</script></head><body>app<img src="/slow.svg"></body></html>`,
        );
      }
      if (url.pathname === '/slow.svg') {
        const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';
        return void setTimeout(() => this.send(res, 200, svg, 'image/svg+xml'), SLOW_LOAD_MS);
      }
      if (url.pathname === '/_marquee/runtime.js') return this.send(res, 200, this.bundles.classic, js);
      if (url.pathname === '/marquee-app.mjs') return this.send(res, 200, this.bundles.module, js);
      if (url.pathname === '/app-module.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><head>${RECORDER}<script type="module">import { createBridgeChild } from '/marquee-app.mjs'; const timeout = Number(new URLSearchParams(location.search).get('timeout') || 10000); window.diagnostics = []; window.app = createBridgeChild({ ackTimeoutMs: timeout, onDiagnostic: (d) => diagnostics.push(d) }); window.appLoaded = true;</script></head><body>module app</body></html>`,
        );
      }
      // A child that speaks the protocol by hand, to send what the SDK never would.
      if (url.pathname === '/raw.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><body>${RECORDER}<script>addEventListener('message', (e) => { const d = e.data; if (d && d.kind === 'parent.handshake' && !window.challenge) { window.challenge = d.challenge; parent.postMessage({ protocol: d.protocol, kind: 'child.handshake', challenge: d.challenge, parent_origin: e.origin }, e.origin); } if (d && d.kind === 'context') window.ctx = d; });</script></body></html>`,
        );
      }
      if (url.pathname === '/plain.html')
        return this.send(res, 200, '<!doctype html><html><body>no bridge here</body></html>');
    } else if (host === 'evil.localhost') {
      if (url.pathname === '/evil.html')
        return this.send(res, 200, `<!doctype html><html><body>${RECORDER}</body></html>`);
    }
    this.send(res, 404, 'not found', 'text/plain');
  }

  /** As the server answers it (server/release-host/release-host.routes.ts), unless a test says otherwise. */
  private answerPlayerOrigin(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.playerOriginRequests.push({
      cookie: req.headers.cookie,
      site: req.headers['sec-fetch-site'] as string | undefined,
      mode: req.headers['sec-fetch-mode'] as string | undefined,
      cacheControl: req.headers['cache-control'],
    });
    const failure = this.playerOriginFailures.shift();
    if (failure === 'reset') return void req.socket.destroy();
    if (failure === 503) return this.send(res, 503, '{"code":"unavailable"}', 'application/problem+json');
    const answer = this.playerOriginAnswer ?? {
      status: 200,
      body: JSON.stringify({ player_origin: this.playerOrigin }),
      type: 'application/json',
    };
    const send = () =>
      this.send(res, answer.status, answer.body, answer.type, {
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        ...answer.headers,
      });
    if (this.playerOriginDelayMs > 0) setTimeout(send, this.playerOriginDelayMs);
    else send();
  }

  private problem(
    res: http.ServerResponse,
    status: number,
    code: string,
    detail: string,
    extra: Record<string, unknown> = {},
  ): void {
    this.send(
      res,
      status,
      JSON.stringify({
        type: `about:${code}`,
        title: code,
        status,
        code,
        detail,
        request_id: 'req_fixture000000000000',
        errors: [],
        ...extra,
      }),
      'application/problem+json',
    );
  }

  private forwardKv(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    upstream: (request: UpstreamKvRequest) => Promise<UpstreamKvResponse>,
  ): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['accept', 'content-type', 'idempotency-key', 'if-match', 'marquee-placement-capability']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      upstream({ method: req.method!, path: req.url!, headers, ...(body ? { body } : {}) }).then(
        (answer) => {
          res.writeHead(answer.status, {
            'cache-control': 'no-store',
            ...(answer.contentType ? { 'content-type': answer.contentType } : {}),
          });
          res.end(answer.body);
        },
        () => this.problem(res, 502, 'dependency_unavailable', 'the upstream runtime failed'),
      );
    });
  }

  /** Just enough of the runtime KV routes to exercise the parent bridge: revisions, 404, 412, and a key that never answers. */
  private runtimeKv(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    const header = (name: string) => (req.headers[name] as string | undefined) ?? undefined;
    this.kvRecords.push({
      method: req.method!,
      path: url.pathname,
      search: url.search,
      capability: header('marquee-placement-capability'),
      cookie: header('cookie'),
      idempotencyKey: header('idempotency-key'),
      ifMatch: header('if-match'),
    });
    if (this.runtimeUpstream) return this.forwardKv(req, res, this.runtimeUpstream);
    if (header('marquee-placement-capability') !== CAPABILITY_HANDLE)
      return this.problem(res, 403, 'forbidden', 'missing or wrong placement capability');
    const match = /^\/runtime\/v1\/apps\/([^/]+)\/kv(?:\/(.+))?$/.exec(url.pathname);
    if (!match) return this.problem(res, 404, 'not_found', 'no such route');
    const applicationId = decodeURIComponent(match[1]!);
    const key = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    const entry = (k: string, v: StoredValue) => ({
      application_id: applicationId,
      key: k,
      value_base64: v.value_base64,
      content_type: v.content_type,
      bytes: Buffer.from(v.value_base64, 'base64').length,
      sha256: '0'.repeat(64),
      revision: v.revision,
    });
    if (key === 'slow') {
      this.hanging.push(res);
      return;
    }
    if (req.method === 'GET' && key === undefined) {
      const items = [...this.kv].map(([k, v]) => {
        const { value_base64: _value, ...summary } = entry(k, v);
        return summary;
      });
      return this.send(res, 200, JSON.stringify({ items, next_cursor: null }), 'application/json'); // one page: the fake holds few keys
    }
    const current = key === undefined ? undefined : this.kv.get(key);
    const ifMatch = header('if-match');
    const expected = ifMatch === undefined ? undefined : Number(/^"(\d+)"$/.exec(ifMatch)?.[1]);
    if (req.method === 'GET') {
      if (!current) return this.problem(res, 404, 'not_found', 'no such key');
      return this.send(res, 200, JSON.stringify(entry(key!, current)), 'application/json');
    }
    if (req.method === 'DELETE') {
      if (!current) return this.problem(res, 404, 'not_found', 'no such key');
      if (expected !== current.revision)
        return this.problem(res, 412, 'revision_conflict', 'stale', { current_revision: current.revision });
      this.kv.delete(key!);
      res.writeHead(204);
      return void res.end();
    }
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          value_base64: string;
          content_type: string;
        };
        if (current && expected !== current.revision)
          return this.problem(res, 412, 'revision_conflict', 'If-Match is stale or missing', {
            current_revision: current.revision,
          });
        if (!current && expected !== undefined) return this.problem(res, 404, 'not_found', 'no such key');
        const stored = {
          value_base64: body.value_base64,
          content_type: body.content_type,
          revision: (current?.revision ?? 0) + 1,
        };
        this.kv.set(key!, stored);
        this.send(res, 200, JSON.stringify(entry(key!, stored)), 'application/json');
      });
      return;
    }
    this.problem(res, 405, 'method_not_allowed', 'no');
  }
}
