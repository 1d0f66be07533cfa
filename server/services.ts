// Everything a route handler or worker may use, built once at start-up (see app.ts).
import type { BlobStore } from './blobs/blob-store';
import type { Clock } from './clock';
import type { Config } from './config';
import type { RateLimiter } from './http/rate-limit';
import type { Meter, TenantBearers } from './http/tenancy';
import type { Keys } from './keys';
import type { Lifecycle } from './lifecycle';
import type { Logger } from './logger';
import type { Notifier } from './notifier';
import type { Store } from './store/store';
import type { OperationWorker } from './operations/worker';
import type { Housekeeping } from './housekeeping';
import type { EventLog } from './events/event-log';
import type { ContentReferences } from './references';

export interface Services {
  config: Config;
  clock: Clock;
  store: Store;
  blobs: BlobStore;
  keys: Keys;
  notifier: Notifier;
  rateLimiter: RateLimiter;
  logger: Logger;
  lifecycle: Lifecycle;
  operations: OperationWorker;
  housekeeping: Housekeeping;
  events: EventLog;
  /** Who a control-plane bearer is (tenants/). */
  bearers: TenantBearers;
  /** The credit meter of Model P control-plane requests (tenants/). */
  meter: Meter;
  /** Who references content (playlists, manifests); replaced at start-up by the features that do. */
  references: ContentReferences;
  /** Feature flags advertised by GET /api/v1/capabilities: only what this server really serves. */
  features: Record<string, boolean>;
}

/** One instance per server, built on first use: state a feature keeps beside the services. */
export function perServices<T>(create: (services: Services) => T): (services: Services) => T {
  const instances = new WeakMap<Services, T>();
  return (services) => {
    let instance = instances.get(services);
    if (instance === undefined) instances.set(services, (instance = create(services)));
    return instance;
  };
}
