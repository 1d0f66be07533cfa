// Builds the services and the one Express app that serves every plane, routed by Host.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import type { DestinationStream } from 'pino';
import { LocalBlobStore } from './blobs/local-blob-store';
import { PutSigner } from './blobs/signed-put';
import { PackageBuildQueue } from './applications/package-builds';
import { buildReleasePackage } from './applications/release-package';
import { systemClock } from './clock';
import type { Config } from './config';
import { DEFAULT_STREAM_TUNING } from './events/event-stream';
import { EventLog } from './events/event-log';
import { Housekeeping } from './housekeeping';
import { BODY_IDLE_TIMEOUT_MS } from './http/body-progress';
import { Dispatcher, type RouteEntry } from './http/dispatch';
import { IdempotencyRecords } from './http/idempotency';
import { runRoute } from './http/pipeline';
import { problem } from './problem';
import { sendProblem } from './http/problem-response';
import { MemoryRateLimiter } from './http/rate-limit';
import { Keys, loadSecret, newId, randomToken } from './keys';
import { Lifecycle } from './lifecycle';
import { MemoryLocks } from './locks';
import { createLogger, redactPath } from './logger';
import { openAiCompatibleVendor, type ImageVendor } from './media/image-vendor';
import { InProcessNotifier } from './notifier';
import { LEASE_CHECK_EVERY_MS, OperationWorker } from './operations/worker';
import { systemResolver } from './playlists/host-resolver';
import { routeTable } from './routes';
import { EGRESS_LIMITS, MemoryEgressBudgets } from './runtime/egress-budgets';
import { MemoryPresence } from './runtime/presence';
import type { Services, Tuning } from './services';
import { Store } from './store/store';
import { CreditMeter } from './tenants/credit-meter';
import { StoredTenantBearers } from './tenants/tenant-bearers';
import { installers } from './modules';
import { noReferences } from './references';
import { servePlayer } from './player-host';

/** The implementations a server may be given instead of its defaults, by their name in Services. */
export type Replaceable =
  | 'clock'
  | 'store'
  | 'blobs'
  | 'notifier'
  | 'rateLimiter'
  | 'presence'
  | 'egress'
  | 'locks'
  | 'imageVendor'
  | 'hostResolver';

export interface ServerOptions extends Partial<Pick<Services, Replaceable>> {
  config: Config;
  logDestination?: DestinationStream;
  /** Timings and limits other than the named defaults (tests shorten them). */
  tuning?: TuningOptions;
  /** Extra routes appended to the table (tests exercise the pipeline through them). */
  extraRoutes?: RouteEntry[];
}

export interface TuningOptions {
  bodyIdleTimeoutMs?: number;
  jsonBodyDeadlineMs?: number;
  eventStreams?: Partial<Tuning['eventStreams']>;
  egressLimits?: Partial<Tuning['egressLimits']>;
}

export interface MarqueeServer {
  services: Services;
  app: express.Express;
  /** Listens on config.bind:config.port; resolves with the bound port. */
  listen(): Promise<number>;
  /** Drains (new requests get server_draining), ends streams, stops workers and closes the store. */
  stop(drainTimeoutMs?: number): Promise<void>;
  /** The Node HTTP server once listening. */
  readonly httpServer: http.Server | undefined;
}

const REQUEST_ID = /^req_[A-Za-z0-9_-]{16,128}$/;
/** Node's default: a client has a minute to send its request line and headers. */
const HEADERS_TIMEOUT_MS = 60_000;
const HOUSEKEEPING_EVERY_MS = 5 * 60_000;
/** Recorded one-time credentials outlive their delivery window by at most this. */
const BODY_ERASURE_EVERY_MS = 60_000;

/**
 * This node's worker identity, kept in the data directory so a restart recognizes the operations
 * it held before (replicas sharing a store each have their own data directory).
 */
function loadWorkerId(dataDir: string): string {
  const file = path.join(dataDir, 'worker.id');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = newId('wkr');
  fs.writeFileSync(file, id, { mode: 0o600 });
  return id;
}

/** The named defaults, with what the options change. */
export function tuningOf(options: TuningOptions = {}): Tuning {
  return {
    bodyIdleTimeoutMs: options.bodyIdleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS,
    jsonBodyDeadlineMs: options.jsonBodyDeadlineMs,
    eventStreams: { ...DEFAULT_STREAM_TUNING, ...options.eventStreams },
    egressLimits: { ...EGRESS_LIMITS, ...options.egressLimits },
  };
}

/** The vendor MARQUEE_IMAGE_VENDOR_URL names; none (media generation off) when it is unset. */
function configuredImageVendor(config: Config): ImageVendor | undefined {
  if (!config.imageVendorUrl) return undefined;
  return openAiCompatibleVendor({
    url: config.imageVendorUrl,
    key: config.imageVendorKey,
    model: config.imageVendorModel,
  });
}

export async function createServer(options: ServerOptions): Promise<MarqueeServer> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const logger = createLogger(config.logLevel, options.logDestination);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const keys = new Keys(loadSecret(config.secret, config.dataDir));
  const store =
    options.store ?? new Store(path.join(config.dataDir, 'marquee.db'), { synchronous: config.sqliteSync });
  await store.migrate();
  const notifier = options.notifier ?? new InProcessNotifier();
  const events = new EventLog(notifier);
  const lifecycle = new Lifecycle();
  const services: Services = {
    config,
    clock,
    store,
    blobs:
      options.blobs ??
      new LocalBlobStore(path.join(config.dataDir, 'blobs'), new PutSigner(keys, config.controlOrigin)),
    keys,
    notifier,
    rateLimiter: options.rateLimiter ?? new MemoryRateLimiter(),
    presence: options.presence ?? new MemoryPresence(clock),
    egress: options.egress ?? new MemoryEgressBudgets(),
    locks: options.locks ?? new MemoryLocks(),
    imageVendor: options.imageVendor ?? configuredImageVendor(config),
    hostResolver: options.hostResolver ?? systemResolver,
    logger,
    lifecycle,
    events,
    operations: new OperationWorker({
      store,
      clock,
      notifier,
      events,
      logger,
      controlOrigin: config.controlOrigin,
      workerId: loadWorkerId(config.dataDir),
    }),
    housekeeping: new Housekeeping(logger),
    packageBuilds: new PackageBuildQueue(clock, logger, (release) => buildReleasePackage(services, release)),
    bearers: new StoredTenantBearers(store),
    meter: new CreditMeter(store),
    features: {},
    references: noReferences,
    tuning: tuningOf(options.tuning),
  };
  services.housekeeping.every('idempotency-records', HOUSEKEEPING_EVERY_MS, async () => {
    await IdempotencyRecords.prune(store.db, clock.now());
  });
  services.housekeeping.every('idempotency-bodies', BODY_ERASURE_EVERY_MS, async () => {
    await IdempotencyRecords.eraseExpiredBodies(store.db, clock.now());
  });
  services.housekeeping.every('operation-leases', LEASE_CHECK_EVERY_MS, async () => {
    await services.operations.expireLeases();
  });
  for (const install of installers) install(services);

  const dispatcher = new Dispatcher([...routeTable, ...(options.extraRoutes ?? [])], config);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  app.use((req: Request, res: Response, next) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `req_${randomToken(16)}`;
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    lifecycle.requestStarted();
    res.once('close', () => {
      lifecycle.requestFinished();
      logger.info(
        {
          request_id: requestId,
          method: req.method,
          // The path only (query strings carry launch tickets and signatures), credential segments redacted.
          path: redactPath(req.path),
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'request',
      );
    });
    next();
  });

  app.use((req: Request, res: Response, next) => {
    const requestId = res.locals.requestId as string;
    const fail = (error: unknown) =>
      sendProblem(res, error, {
        controlOrigin: config.controlOrigin,
        generation: config.model,
        requestId,
        instance: req.path,
        logger,
      });
    if (lifecycle.state === 'draining' && req.path !== '/.health' && req.path !== '/.ready') {
      res.setHeader('Connection', 'close');
      return fail(problem('server_draining', 'this host is draining; retry on another host'));
    }
    try {
      const { planes, releaseLabel } = dispatcher.planesFor(req.headers.host ?? '');
      res.locals.releaseLabel = releaseLabel;
      const found = dispatcher.dispatch(planes, req.method, req.path);
      if (found.kind === 'route') {
        res.locals.plane = found.plane;
        return void runRoute({ route: found.route, params: found.params }, req, res, services, requestId);
      }
      // spec: release hosts answer a disallowed method with 403, not 405.
      if (found.kind === 'method_not_allowed' && found.plane === 'release') {
        return fail(
          problem('forbidden', `${req.method} is not allowed on a release host; only GET and HEAD are`, {
            headers: { 'Referrer-Policy': 'no-referrer' },
          }),
        );
      }
      if (found.kind === 'method_not_allowed') {
        return fail(
          problem('method_not_allowed', `${req.method} is not allowed here; allowed: ${found.allow.join(', ')}`, {
            headers: { Allow: found.allow.join(', ') },
          }),
        );
      }
      if (found.planes.includes('runtime') && (req.method === 'GET' || req.method === 'HEAD') && servePlayer(req, res))
        return;
      next(problem('not_found', `no route for ${req.method} ${redactPath(req.path)}`));
    } catch (error) {
      fail(error);
    }
  });

  // Reached by next(error) from Express itself (and by the not-found case above).
  app.use((error: unknown, req: Request, res: Response, _next: express.NextFunction) => {
    sendProblem(res, error, {
      controlOrigin: config.controlOrigin,
      generation: config.model,
      requestId: res.locals.requestId as string,
      instance: req.path,
      logger,
    });
  });

  let server: http.Server | undefined;
  return {
    services,
    app,
    get httpServer() {
      return server;
    },
    async listen() {
      await services.operations.start();
      services.housekeeping.start();
      server = http.createServer(app);
      server.keepAliveTimeout = 5000;
      server.headersTimeout = HEADERS_TIMEOUT_MS;
      // No whole-request deadline (Node's default cuts every body at 300 s, a bare 408): uploads of
      // up to 1 GiB may take hours on a slow uplink. Bodies must keep moving instead (body-progress.ts).
      server.requestTimeout = 0;
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.bind, () => resolve());
      });
      lifecycle.state = 'ready';
      return (server.address() as { port: number }).port;
    },
    async stop(drainTimeoutMs = 10_000) {
      await lifecycle.drain(drainTimeoutMs);
      const closed = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
      server?.closeIdleConnections();
      await Promise.race([closed, new Promise((r) => setTimeout(r, drainTimeoutMs).unref())]);
      server?.closeAllConnections();
      services.housekeeping.stop();
      await services.operations.stop();
      await store.close();
    },
  };
}
