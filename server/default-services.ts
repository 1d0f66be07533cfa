// The composition root: builds a server's Services from its configuration. Every default
// implementation is chosen here, once, and each can be replaced through the options (a test's
// clock, a fixed DNS table, later a PostgreSQL store or a shared rate limiter), so no feature ever
// picks an implementation itself.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { DestinationStream } from 'pino';
import { PackageBuildQueue } from './applications/package-builds';
import { buildReleasePackage } from './applications/release-package';
import type { BlobStore } from './blobs/blob-store';
import { LocalBlobStore } from './blobs/local-blob-store';
import { S3BlobStore } from './blobs/s3-blob-store';
import { parseS3BlobUrl } from './blobs/s3-location';
import { PutSigner } from './blobs/signed-put';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { DEFAULT_STREAM_TUNING } from './events/event-stream';
import { EventLog } from './events/event-log';
import { Housekeeping } from './housekeeping';
import { BODY_IDLE_TIMEOUT_MS } from './http/body-progress';
import { DEFAULT_EDGE_TUNING } from './http/edge';
import { IdempotencyRecords } from './http/idempotency';
import { MemoryRateLimiter } from './http/rate-limit';
import { Keys, loadSecret, newId } from './keys';
import { Lifecycle } from './lifecycle';
import { MemoryLocks } from './locks';
import { createLogger, type Logger } from './logger';
import type { Mailer } from './mail/mailer';
import { OutboxMailer } from './mail/outbox-mailer';
import { SmtpMailer } from './mail/smtp-mailer';
import { BoundaryTimer } from './manifests/boundary-timer';
import { GroupCommitMinter } from './manifests/manifest-minter';
import { MINTS_PER_TRANSACTION, mintBatch } from './manifests/minting';
import { PASSWORD_HASH_COST } from './members/passwords';
import { openAiCompatibleVendor, type ImageVendor } from './media/image-vendor';
import { composeReferences, installers } from './modules';
import { InProcessNotifier, type Notifier } from './notifier';
import { PostgresNotifier } from './replicas/postgres-notifier';
import { relayWatchedWrites } from './replicas/write-relay';
import { makeWatchedCaches } from './store/watched-cache';
import { SharedPresence } from './replicas/shared-presence';
import { SharedEgressBudgets } from './replicas/shared-egress-budgets';
import { SharedRateLimiter } from './replicas/shared-rate-limiter';
import { LEASE_CHECK_EVERY_MS, OperationWorker } from './operations/worker';
import { systemResolver } from './playlists/host-resolver';
import { noReferences } from './references';
import { EGRESS_LIMITS, MemoryEgressBudgets } from './runtime/egress-budgets';
import { MemoryPresence } from './runtime/presence';
import type { Services, Tuning } from './services';
import { openStore, type Store } from './store/store';
import { EgressLedger } from './media/egress';
import { CreditMeter } from './tenants/credit-meter';
import { StoredTenantBearers } from './tenants/tenant-bearers';

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
  | 'hostResolver'
  | 'mailer';

export interface ServiceOptions extends Partial<Pick<Services, Replaceable>> {
  config: Config;
  logDestination?: DestinationStream;
  /** Timings and limits other than the named defaults (tests shorten them). */
  tuning?: TuningOptions;
}

export interface TuningOptions {
  bodyIdleTimeoutMs?: number;
  jsonBodyDeadlineMs?: number;
  eventStreams?: Partial<Tuning['eventStreams']>;
  edge?: Partial<Tuning['edge']>;
  egressLimits?: Partial<Tuning['egressLimits']>;
  passwordHash?: Tuning['passwordHash'];
}

const HOUSEKEEPING_EVERY_MS = 5 * 60_000;
/** Recorded one-time credentials outlive their delivery window by at most this. */
const BODY_ERASURE_EVERY_MS = 60_000;

/**
 * Builds every service (a given implementation, else the default), runs the store's migrations and
 * installs each feature's runners, housekeeping and advertised features. Nothing runs yet: workers
 * and housekeeping start when the server listens. The server owns what it is given (stop closes it).
 */
export async function buildServices(options: ServiceOptions): Promise<Services> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const logger = createLogger(config.logLevel, options.logDestination);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const keys = new Keys(loadSecret(config.secret, config.dataDir));
  const store = options.store ?? (await openStore(config.databaseUrl, { sqliteSync: config.sqliteSync }));
  await store.migrate();
  const notifier = options.notifier ?? (await defaultNotifier(store, config, logger));
  const shared = store.driver.engine === 'postgres';
  // Replicas drop each other's cached credentials, sessions and media as the rows change (D-386).
  if (shared) relayWatchedWrites(store, notifier);
  // Made now, not on first use (the credential cache is the bearers' own, made below).
  makeWatchedCaches(store);
  const events = new EventLog(notifier);
  const services: Services = {
    config,
    clock,
    logger,
    keys,
    lifecycle: new Lifecycle(),
    store,
    blobs: options.blobs ?? configuredBlobStore(config, keys, clock),
    notifier,
    // Replicas on one PostgreSQL database count one budget (requests and bytes) and see one presence; one process
    // (SQLite) keeps them in memory.
    rateLimiter: options.rateLimiter ?? (shared ? new SharedRateLimiter(store.db) : new MemoryRateLimiter()),
    presence: options.presence ?? (shared ? new SharedPresence(store.db, clock, logger) : new MemoryPresence(clock)),
    egress: options.egress ?? (shared ? new SharedEgressBudgets(store) : new MemoryEgressBudgets()),
    egressLedger: new EgressLedger(store, logger),
    locks: options.locks ?? new MemoryLocks(),
    imageVendor: options.imageVendor ?? configuredImageVendor(config),
    hostResolver: options.hostResolver ?? systemResolver,
    mailer: options.mailer ?? configuredMailer(config, logger, clock),
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
    minter: new GroupCommitMinter(MINTS_PER_TRANSACTION, (screenIds) => mintBatch(services, screenIds)),
    boundaries: new BoundaryTimer({ store, events, clock, notifier, logger }),
    events,
    bearers: new StoredTenantBearers(store),
    meter: new CreditMeter(store),
    // Composed below: the playlists' answers need the finished services.
    references: noReferences,
    features: {},
    tuning: tuningOf(options.tuning),
  };
  services.references = composeReferences(services);
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
  return services;
}

/**
 * In process for SQLite (one server); over PostgreSQL, LISTEN/NOTIFY, so a commit on one replica
 * wakes the streams and workers of every replica.
 */
async function defaultNotifier(store: Store, config: Config, logger: Logger): Promise<Notifier> {
  if (store.driver.engine !== 'postgres') return new InProcessNotifier();
  const notifier = new PostgresNotifier({
    url: config.databaseUrl,
    logger,
    notify: async (channel, payload) => {
      await sql`SELECT pg_notify(${channel}, ${payload})`.execute(store.db);
    },
  });
  await notifier.start();
  return notifier;
}

/** The named defaults, with what the options change. */
export function tuningOf(options: TuningOptions = {}): Tuning {
  return {
    bodyIdleTimeoutMs: options.bodyIdleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS,
    jsonBodyDeadlineMs: options.jsonBodyDeadlineMs,
    eventStreams: { ...DEFAULT_STREAM_TUNING, ...options.eventStreams },
    edge: { ...DEFAULT_EDGE_TUNING, ...options.edge },
    egressLimits: { ...EGRESS_LIMITS, ...options.egressLimits },
    passwordHash: options.passwordHash ?? PASSWORD_HASH_COST,
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

/** The bucket MARQUEE_BLOB_URL names; otherwise the blobs directory in the data dir. */
function configuredBlobStore(config: Config, keys: Keys, clock: Clock): BlobStore {
  if (config.blobUrl) return new S3BlobStore(parseS3BlobUrl(config.blobUrl), { now: () => clock.now() });
  // Replicas may share one blob directory: each keeps its temp files under its own worker id.
  return new LocalBlobStore(
    path.join(config.dataDir, 'blobs'),
    new PutSigner(keys, config.controlOrigin),
    loadWorkerId(config.dataDir),
  );
}

/** SMTP when MARQUEE_SMTP_URL names a server; otherwise the outbox directory in the data dir. */
function configuredMailer(config: Config, logger: Logger, clock: Clock): Mailer {
  if (config.smtpUrl) return new SmtpMailer(config.smtpUrl, config.mailFrom, logger);
  return new OutboxMailer(path.join(config.dataDir, 'outbox'), config.mailFrom, logger, () => clock.now());
}

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
