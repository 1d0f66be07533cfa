// A Marquee server in three steps: build the services (default-services.ts), build the one Express
// app that serves every plane, routed by Host, over them, and listen.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import express, { type Request, type Response } from 'express';
import { buildServices, type ServiceOptions } from './default-services';
import { Dispatcher, type RouteEntry } from './http/dispatch';
import { closeIfBodyLingers, edgeServerOptions, installEdge, wasRefused } from './http/edge';
import { closeProxySocket, listenForProxy } from './http/proxy-socket';
import { runRoute } from './http/pipeline';
import { problem } from './problem';
import { sendProblem } from './http/problem-response';
import { redactPath } from './logger';
import { routeTable } from './routes';
import type { Services } from './services';
import { DASHBOARD_DIR, isPageNavigation, serveNotFoundPage } from './dashboard/dashboard-app.routes';
import { dashboardPairingHint, PLAYER_DIR, servePlayer } from './player-host';

export interface ServerOptions extends ServiceOptions {
  /** Extra routes appended to the table (tests exercise the pipeline through them). */
  extraRoutes?: RouteEntry[];
  /** The built player to serve (default dist/player; tests serve a fixture build). */
  playerDir?: string;
  /** The built dashboard whose shell answers a mistyped page address (default dist/dashboard). */
  dashboardDir?: string;
}

export interface MarqueeServer {
  services: Services;
  app: express.Express;
  /** Starts workers and housekeeping, listens on config.bind:config.port; resolves with the bound port. */
  listen(): Promise<number>;
  /** Drains (new requests get server_draining), ends streams, stops workers and closes the store. */
  stop(drainTimeoutMs?: number): Promise<void>;
  /** The Node HTTP server once listening. */
  readonly httpServer: http.Server | undefined;
}

const REQUEST_ID = /^req_[A-Za-z0-9_-]{16,128}$/;

export async function createServer(options: ServerOptions): Promise<MarqueeServer> {
  const services = await buildServices(options);
  const app = buildApp(services, {
    routes: [...routeTable, ...(options.extraRoutes ?? [])],
    playerDir: options.playerDir ?? PLAYER_DIR,
    dashboardDir: options.dashboardDir ?? DASHBOARD_DIR,
  });
  let listening: Listening | undefined;
  return {
    services,
    app,
    get httpServer() {
      return listening?.server;
    },
    async listen() {
      try {
        listening = await listen(services, app);
      } catch (error) {
        // Nothing may keep running for a server that never listened: workers, timers, the store.
        await stop(services, undefined, 0).catch(() => {});
        throw error;
      }
      return (listening.server.address() as { port: number }).port;
    },
    stop: (drainTimeoutMs = 10_000) => stop(services, listening, drainTimeoutMs),
  };
}

/**
 * Request ids come from a pool of random bytes refilled 4 KiB at a time: one system call for 256
 * requests instead of one each (an id is a correlation handle, not a secret).
 */
const ID_BYTES = 16;
let idPool = Buffer.alloc(0);
let idOffset = 0;
function newRequestId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(256 * ID_BYTES);
    idOffset = 0;
  }
  const id = idPool.toString('base64url', idOffset, idOffset + ID_BYTES);
  idOffset += ID_BYTES;
  return `req_${id}`;
}

/** Ends a request whose answer itself failed (D-388): logged, and its connection closed. */
function abandon(
  res: http.ServerResponse,
  error: unknown,
  logger: Services['logger'],
  requestId: string | undefined,
): void {
  logger.error({ err: error, request_id: requestId }, 'request: its answer failed; connection closed');
  res.destroy();
}

/** The request's path (Express's req.path), or undefined for an absolute-form target that is no URL. */
function requestPath(req: Request): string | undefined {
  try {
    return req.path;
  } catch {
    return undefined;
  }
}

/**
 * The Express app over the services: request ids and the request log, draining, Host routing,
 * problems. Express provides the request and response helpers (req.get, res.status …) and the app
 * object tests mount; its router is not used: every request goes through one function (`handle`)
 * and the route table's dispatcher, which on the hot byte routes saved a tenth of the server's
 * time spent in the router's layers (D-371).
 */
export function buildApp(
  services: Services,
  options: { routes: RouteEntry[]; playerDir: string; dashboardDir: string },
): express.Express {
  const pairingHint = dashboardPairingHint(services.config.dashboardOrigin);
  const { config, lifecycle, logger } = services;
  const dispatcher = new Dispatcher(options.routes, config);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  const logRequest = (req: Request, res: Response, path: string, requestId: string, started: bigint) => {
    lifecycle.requestFinished();
    if (!logger.isLevelEnabled('info')) return;
    logger.info(
      {
        request_id: requestId,
        method: req.method,
        // The path only (query strings carry launch tickets and signatures), credential segments redacted.
        path: redactPath(path),
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      },
      'request',
    );
  };

  const fail = (res: Response, error: unknown, requestId: string, path: string) =>
    sendProblem(res, error, {
      controlOrigin: config.controlOrigin,
      generation: config.model,
      requestId,
      instance: path,
      logger,
    });

  const handle = (req: Request, res: Response) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : newRequestId();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    lifecycle.requestStarted();
    const path = requestPath(req);
    // 'close' follows 'finish' for an answer that completed, and comes once: one listener does both.
    res.on('close', () => {
      if (res.writableFinished) closeIfBodyLingers(req, services);
      logRequest(req, res, path ?? '/', requestId, started);
    });

    if (path === undefined) {
      res.setHeader('Connection', 'close');
      return fail(res, problem('invalid_request', 'the request target is not a valid URL'), requestId, '/');
    }
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      // RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without Host.
      res.setHeader('Connection', 'close');
      return fail(res, problem('invalid_request', 'an HTTP/1.1 request needs a Host header'), requestId, path);
    }
    if (lifecycle.state === 'draining' && path !== '/.health' && path !== '/.ready') {
      res.setHeader('Connection', 'close');
      return fail(res, problem('server_draining', 'this host is draining; retry on another host'), requestId, path);
    }
    try {
      const { planes, releaseLabel } = dispatcher.planesFor(req.headers.host ?? '');
      res.locals.releaseLabel = releaseLabel;
      const found = dispatcher.dispatch(planes, req.method, path);
      if (found.kind === 'route') {
        res.locals.plane = found.plane;
        // runRoute answers its errors itself; should that answer fail too, the request ends, not the process.
        return void runRoute(found, req, res, services, requestId).catch((error: unknown) =>
          abandon(res, error, logger, requestId),
        );
      }
      // spec: release hosts answer a disallowed method with 403, not 405.
      if (found.kind === 'method_not_allowed' && found.plane === 'release') {
        const refusal = problem('forbidden', `${req.method} is not allowed on a release host; only GET and HEAD are`, {
          headers: { 'Referrer-Policy': 'no-referrer' },
        });
        return fail(res, refusal, requestId, path);
      }
      if (found.kind === 'method_not_allowed') {
        const refusal = problem(
          'method_not_allowed',
          `${req.method} is not allowed here; allowed: ${found.allow.join(', ')}`,
          { headers: { Allow: found.allow.join(', ') } },
        );
        return fail(res, refusal, requestId, path);
      }
      if (
        found.planes.includes('runtime') &&
        (req.method === 'GET' || req.method === 'HEAD') &&
        servePlayer(req, res, options.playerDir, pairingHint)
      )
        return;
      if (
        found.planes.includes('dashboard') &&
        isPageNavigation(req) &&
        serveNotFoundPage(res, req.method, options.dashboardDir, services.blobs.uploadOrigin)
      )
        return;
      fail(res, problem('not_found', `no route for ${req.method} ${redactPath(path)}`), requestId, path);
    } catch (error) {
      fail(res, error, requestId, path);
    }
  };

  // What Express's own handle does before its router (application.js), then `handle`. The
  // server made by listen() builds its requests and responses with Express's prototypes already
  // (expressMessages); others (a test's server mounting the app) get them here, as Express does.
  (app as unknown as { handle: (req: Request, res: Response) => void }).handle = (req, res) => {
    req.res = res;
    res.req = req;
    if (!Object.prototype.isPrototypeOf.call(app.request, req)) {
      Object.setPrototypeOf(req, app.request);
      Object.setPrototypeOf(res, app.response);
    }
    res.locals ??= Object.create(null);
    req.originalUrl ??= req.url;
    handle(req, res);
  };
  return app;
}

/**
 * Request and response classes whose prototypes are Express's (req.get, res.status …), set once:
 * Express swaps the prototype of every request and response instead, which leaves V8 slow paths
 * for each property Node's own HTTP code then reads on them (45 µs a request on this host, a
 * fifth of a 64 KiB range on /content/v1; D-387).
 */
function expressMessages(app: express.Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  class ExpressRequest extends http.IncomingMessage {}
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  class ExpressResponse<R extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<R> {}
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  return { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse };
}

/** The HTTP server, and the proxy's Unix socket when MARQUEE_PROXY_SOCKET is set. */
interface Listening {
  server: http.Server;
  proxy?: net.Server;
}

/** Starts the workers and housekeeping, then listens; the lifecycle turns ready once bound. */
async function listen(services: Services, app: express.Express): Promise<Listening> {
  const { config, lifecycle } = services;
  await services.operations.start();
  services.housekeeping.start();
  // Boundaries that passed while the server was down are applied before it takes requests.
  await services.boundaries.start();
  const server = http.createServer({ ...edgeServerOptions(services), ...expressMessages(app) }, (req, res) => {
    // A connection over the per-address cap was already answered and is closing.
    if (wasRefused(req.socket)) return;
    try {
      app(req, res);
    } catch (error) {
      // Every error has its problem answer; one that cannot be written ends this request, not the process.
      abandon(res, error, services.logger, (res as Partial<Response>).locals?.requestId);
    }
  });
  installEdge(server, services);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.bind, () => resolve());
  });
  let proxy: net.Server | undefined;
  if (config.proxySocket !== undefined) {
    try {
      proxy = await listenForProxy(server, config.proxySocket, config.proxySocketMode, services.logger);
    } catch (error) {
      // Connections already accepted on the port (a stream, a slow upload) would hold close() open.
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
      throw error;
    }
  }
  lifecycle.state = 'ready';
  return { server, proxy };
}

/** Drains, closes connections (at most after the timeout), stops the workers and closes the store. */
async function stop(services: Services, listening: Listening | undefined, drainTimeoutMs: number): Promise<void> {
  await services.lifecycle.drain(drainTimeoutMs);
  const server = listening?.server;
  const { proxySocket } = services.config;
  const closed = Promise.all([
    server ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined,
    listening?.proxy && proxySocket !== undefined ? closeProxySocket(listening.proxy, proxySocket) : undefined,
  ]);
  server?.closeIdleConnections();
  await Promise.race([closed, new Promise((r) => setTimeout(r, drainTimeoutMs).unref())]);
  server?.closeAllConnections();
  services.housekeeping.stop();
  services.boundaries.stop();
  await services.operations.stop();
  await services.presence.close?.();
  await services.notifier.close?.();
  await services.store.close();
}
