// Everything a route handler or worker may use, built once at start-up: defaults in
// default-services.ts, each replaceable through ServerOptions (app.ts). Every member is typed by a
// module that does not import this one, so the seams stay free of import cycles.
import type { BlobStore } from './blobs/blob-store';
import type { Clock } from './clock';
import type { Config } from './config';
import type { EventLog } from './events/event-log';
import type { Housekeeping } from './housekeeping';
import type { RateLimiter } from './http/rate-limit';
import type { Meter, TenantBearers } from './http/tenancy';
import type { Keys } from './keys';
import type { Lifecycle } from './lifecycle';
import type { Locks } from './locks';
import type { Logger } from './logger';
import type { BoundaryTimer } from './manifests/boundary-timer';
import type { ManifestMinter } from './manifests/manifest-minter';
import type { ImageVendor } from './media/image-vendor';
import type { EgressLedger } from './media/egress';
import type { Mailer } from './mail/mailer';
import type { Notifier } from './notifier';
import type { OperationWorker } from './operations/worker';
import type { HostResolver } from './playlists/host-resolver';
import type { PasswordHashCost } from './members/passwords';
import type { ContentReferences } from './references';
import type { PackageBuilds } from './applications/package-builds';
import type { EgressBudgets, EgressLimits } from './runtime/egress-budgets';
import type { ScreenPresence } from './runtime/presence';
import type { Store } from './store/store';

export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  keys: Keys;
  lifecycle: Lifecycle;

  // Where state lives and how commits are announced: the only seams that know whether this is one
  // process or several replicas over a shared database and object store.
  store: Store;
  blobs: BlobStore;
  notifier: Notifier;

  // State every replica of one installation must share; in process memory by default, each an
  // asynchronous interface a shared store (PostgreSQL, Redis) can implement.
  /** Request budgets (RateLimit headers, 429). */
  rateLimiter: RateLimiter;
  /** Which screens have a paired runtime stream connected. */
  presence: ScreenPresence;
  /** Byte budgets of protected content delivery. */
  egress: EgressBudgets;
  /** Completed delivery bytes, committed to the egress ledger in batches (media/egress.ts). */
  egressLedger: EgressLedger;
  /** Work that must not run twice at once: an idempotency record's request, a signed PUT. */
  locks: Locks;

  // Outside services.
  /** Media generation's vendor; undefined when none is configured (generation is then off). */
  imageVendor: ImageVendor | undefined;
  /** DNS for the iframe rule (playlists). */
  hostResolver: HostResolver;
  /** Outbound mail: SMTP when MARQUEE_SMTP_URL is set, else the outbox directory in the data dir. */
  mailer: Mailer;

  // Work this process runs.
  operations: OperationWorker;
  housekeeping: Housekeeping;
  packageBuilds: PackageBuilds;
  /** Mints the manifests players ask for first, group-committed (manifests/minting.ts). */
  minter: ManifestMinter;
  /** Applies schedule boundaries and takeover ends when due (manifests/boundary-timer.ts). */
  boundaries: BoundaryTimer;
  events: EventLog;

  // What the HTTP layer and the features ask of other features, composed in modules.ts.
  /** Who a control-plane bearer is (tenants/). */
  bearers: TenantBearers;
  /** The credit meter of Model P control-plane requests (tenants/). */
  meter: Meter;
  /** Who references content (playlists, manifests). */
  references: ContentReferences;
  /** Feature flags advertised by GET /api/v1/capabilities: only what this server really serves. */
  features: Record<string, boolean>;

  /** Timings and limits tests may change (ServerOptions.tuning); read on each use. */
  tuning: Tuning;
}

export interface Tuning {
  /** A request body may send nothing for this long (BODY_IDLE_TIMEOUT_MS). */
  bodyIdleTimeoutMs: number;
  /** Every JSON body's whole deadline; undefined: computed from its size (jsonBodyDeadlineMs). */
  jsonBodyDeadlineMs: number | undefined;
  /** Event streams (event-stream.ts): heartbeat, stall timeout and buffer bounds. */
  eventStreams: {
    heartbeatMs: number;
    stallTimeoutMs: number;
    lowWaterBytes: number;
    maxBufferedBytes: number;
  };
  /** Connection timeouts of the HTTP edge (http/edge.ts, DEFAULT_EDGE_TUNING). */
  edge: {
    headersTimeoutMs: number;
    headersCheckIntervalMs: number;
    keepAliveTimeoutMs: number;
    socketIdleTimeoutMs: number;
    unreadBodyLingerMs: number;
  };
  /** Byte budgets of protected content (EGRESS_LIMITS). */
  egressLimits: EgressLimits;
  /** scrypt cost of new password hashes (PASSWORD_HASH_COST); stored hashes carry their own. */
  passwordHash: PasswordHashCost;
}
