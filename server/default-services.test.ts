// The composition root: every seam has its default built in one place, any of them can be given
// instead, and the features then use what was given.
import { describe, expect, it } from 'vitest';
import { DEFAULT_STREAM_TUNING } from './events/event-stream';
import { BODY_IDLE_TIMEOUT_MS } from './http/body-progress';
import { DEFAULT_EDGE_TUNING } from './http/edge';
import { MemoryRateLimiter, type RateLimiter } from './http/rate-limit';
import { MemoryLocks } from './locks';
import { installers } from './modules';
import { pairPendingScreen } from './pairing/pairing.fixtures';
import { systemResolver } from './playlists/host-resolver';
import { noReferences } from './references';
import { EGRESS_LIMITS, MemoryEgressBudgets } from './runtime/egress-budgets';
import { MemoryPresence, type ScreenPresence } from './runtime/presence';
import { InProcessNotifier } from './notifier';
import { PostgresNotifier } from './replicas/postgres-notifier';
import { SharedPresence } from './replicas/shared-presence';
import { SharedRateLimiter } from './replicas/shared-rate-limiter';
import type { Services } from './services';
import { TestServer, clientId, randomKey } from './testing/harness';
import { Housekeeping } from './housekeeping';
import path from 'node:path';
import { OutboxMailer } from './mail/outbox-mailer';
import { PASSWORD_HASH_COST } from './members/passwords';

describe('default services', () => {
  it('keep shared state in process memory (in PostgreSQL when the store is), with the named timings and limits', async () => {
    const server = await TestServer.start();
    try {
      const { services } = server;
      const replicated = services.store.driver.engine === 'postgres';
      expect(services.rateLimiter).toBeInstanceOf(replicated ? SharedRateLimiter : MemoryRateLimiter);
      expect(services.presence).toBeInstanceOf(replicated ? SharedPresence : MemoryPresence);
      expect(services.notifier).toBeInstanceOf(replicated ? PostgresNotifier : InProcessNotifier);
      expect(services.egress).toBeInstanceOf(MemoryEgressBudgets);
      expect(services.locks).toBeInstanceOf(MemoryLocks);
      expect(services.hostResolver).toBe(systemResolver);
      expect(services.imageVendor).toBeUndefined(); // no MARQUEE_IMAGE_VENDOR_URL
      expect(services.features.media_generation).toBe(false);
      expect(services.tuning).toEqual({
        bodyIdleTimeoutMs: BODY_IDLE_TIMEOUT_MS,
        jsonBodyDeadlineMs: undefined,
        eventStreams: DEFAULT_STREAM_TUNING,
        edge: DEFAULT_EDGE_TUNING,
        egressLimits: EGRESS_LIMITS,
        passwordHash: PASSWORD_HASH_COST,
      });
      // Mail goes to the outbox in the data dir when no MARQUEE_SMTP_URL names a server.
      expect(services.mailer).toBeInstanceOf(OutboxMailer);
      expect((services.mailer as OutboxMailer).directory).toBe(path.join(server.dataDir, 'outbox'));
      // A server's tuning is its own: changing it changes neither the constants nor another server.
      services.tuning.egressLimits.clientBytesPerMinute = 1;
      expect(EGRESS_LIMITS.clientBytesPerMinute).toBe(1024 ** 3);
    } finally {
      await server.stop();
    }
  });
});

describe('given implementations', () => {
  it('replace the defaults, and the features use them', async () => {
    const refusing: RateLimiter = {
      peek: async () => ({ allowed: false, remaining: 0, resetSeconds: 42 }),
      take: async () => ({ allowed: false, remaining: 0, resetSeconds: 42 }),
    };
    const everyoneOnline: ScreenPresence = {
      connect: async () => async () => undefined,
      online: async (ids) => new Set(ids),
    };
    const server = await TestServer.start({
      presence: everyoneOnline,
      imageVendor: { generate: async () => Buffer.alloc(0) },
      tuning: { egressLimits: { clientBytesPerMinute: 5 } },
    });
    const limited = await TestServer.start({ rateLimiter: refusing });
    try {
      const { token } = await server.enroll();
      const screen = await pairPendingScreen(server, token);
      const shown = await server.request('GET', `/api/v1/screens/${screen.id}`, { token });
      expect(shown.json().online).toBe(true); // no stream is connected: only the given presence says so
      expect(server.services.features.media_generation).toBe(true);
      expect(server.services.tuning.egressLimits).toEqual({ ...EGRESS_LIMITS, clientBytesPerMinute: 5 });

      const refused = await limited.request('POST', '/api/v1/enrollments', {
        json: { client_id: clientId(), email: 'owner@example.com' },
        idempotencyKey: randomKey(),
      });
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('42');
    } finally {
      await server.stop();
      await limited.stop();
    }
  });
});

describe('installers', () => {
  it('only add what their feature runs and advertises, so their order changes nothing', async () => {
    const server = await TestServer.start();
    try {
      const installed = (order: typeof installers) => {
        const jobs: string[] = [];
        const runners: string[] = [];
        const services: Services = {
          ...server.services,
          features: {},
          references: noReferences,
          housekeeping: Object.assign(new Housekeeping(server.services.logger), {
            every: (name: string) => void jobs.push(name),
          }),
          operations: Object.assign(Object.create(server.services.operations), {
            register: (runner: { kind: string }) => void runners.push(runner.kind),
          }),
        };
        for (const install of order) install(services);
        expect(services.references).toBe(noReferences); // seams are composed in modules.ts, not installed
        return { features: services.features, jobs: jobs.sort(), runners: runners.sort() };
      };
      const forward = installed(installers);
      expect(installed([...installers].reverse())).toEqual(forward);
      expect(forward.features).toEqual(server.services.features);
    } finally {
      await server.stop();
    }
  });
});
