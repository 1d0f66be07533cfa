// Two servers on one PostgreSQL database, as two replicas behind a load balancer: what one commits
// wakes the other's streams, also after the other's listening connection was lost. Runs when
// MARQUEE_TEST_DATABASE_URL names PostgreSQL (npm run test:postgres); SQLite has one server only.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sampleEvent } from '../events/event-samples.testing';
import { StreamReader } from '../events/stream-reader.testing';
import { TestServer } from '../testing/harness';
import { TEST_DATABASE_URL } from '../testing/test-database';
import { PostgresNotifier } from './postgres-notifier';
import { WATCHED_WRITES_CHANNEL } from './write-relay';
import { BEARER_CACHE_MS } from '../tenants/tenant-bearers';

const onPostgres = TEST_DATABASE_URL?.startsWith('postgres') ?? false;

describe.skipIf(!onPostgres)('replicas on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let notifierA: PostgresNotifier;
  let pool: pg.Pool;

  beforeAll(async () => {
    b = await TestServer.start();
    const url = b.config.databaseUrl;
    pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => {});
    // A's notifier is built here to wait long after losing its connection: B commits in that gap.
    notifierA = new PostgresNotifier({
      url,
      logger: b.services.logger,
      backoff: { initialMs: 800, maxMs: 800 },
      notify: async (channel, payload) => {
        await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
      },
    });
    await notifierA.start();
    a = await TestServer.start({ config: { databaseUrl: url }, notifier: notifierA });
  });

  afterAll(async () => {
    await a?.stop();
    await pool?.end();
    await b?.stop();
  });

  async function appendOnB(projectId: string, message: string): Promise<void> {
    await b.services.store.transaction(async (work) => {
      await b.services.events.append(work, sampleEvent(projectId, message), b.clock.now());
    });
  }

  it('serves B with the PostgreSQL notifier by default', () => {
    expect(b.services.notifier).toBeInstanceOf(PostgresNotifier);
  });

  it('wakes a stream on A with a commit made on B, through the API and through the log', async () => {
    const { token, projectId } = await a.enroll();
    const stream = await StreamReader.open(a, '/api/v1/events/stream', { token });
    await stream.waitForFrames(1); // account.enrolled
    const project = await b.request('GET', '/api/v1/project', { token });
    const renamed = await b.request('PATCH', '/api/v1/project', {
      token,
      ifMatch: String(project.headers.etag),
      json: { name: 'Renamed on B' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const frames = await stream.waitForFrames(2);
    expect(frames[1]!.json().type).toBe('project.updated');
    await appendOnB(projectId, 'appended on B');
    expect((await stream.waitForFrames(3))[2]!.json().message).toBe('appended on B');
    stream.close();
  });

  it('catches up after the listening connection is lost: a commit made meanwhile still reaches the stream', async () => {
    const { token, projectId } = await a.enroll();
    const stream = await StreamReader.open(a, '/api/v1/events/stream', { token });
    await stream.waitForFrames(1);
    const pid = notifierA.listenerPid;
    expect(pid).toBeTypeOf('number');
    await sql`SELECT pg_terminate_backend(${pid})`.execute(b.services.store.db);
    await vi.waitFor(() => expect(notifierA.listenerPid).toBeUndefined(), { timeout: 5000, interval: 10 });
    // Committed while A listens to nothing: its NOTIFY reaches no one on A.
    await appendOnB(projectId, 'while A was deaf');
    await appendOnB(projectId, 'also while A was deaf');
    const before = notifierA.reconnects;
    await notifierA.connected();
    expect(notifierA.reconnects).toBe(before + 1);
    const frames = await stream.waitForFrames(3);
    expect(frames.slice(1).map((f) => f.json().message)).toEqual(['while A was deaf', 'also while A was deaf']);
    // And live again afterwards.
    await appendOnB(projectId, 'after the reconnect');
    expect((await stream.waitForFrames(4))[3]!.json().message).toBe('after the reconnect');
    stream.close();
  });

  it('refuses on A a bearer revoked on B as the write is relayed, not after A’s cache lifetime (D-386)', async () => {
    const { token, projectId } = await a.enroll();
    expect((await a.request('GET', '/api/v1/project', { token })).status).toBe(200); // A now holds the credential
    await b.services.store.db
      .updateTable('credentials')
      .set({ status: 'revoked', revoked_at: b.clock.now() })
      .where('tenant_id', '=', projectId)
      .execute();
    const started = performance.now();
    await vi.waitFor(async () => expect((await a.request('GET', '/api/v1/project', { token })).status).toBe(401), {
      timeout: BEARER_CACHE_MS - 1000,
      interval: 20,
    });
    expect(performance.now() - started).toBeLessThan(BEARER_CACHE_MS / 2);
  });

  it('relays the writes of every watched cache, also from a replica that has served no route reading them', async () => {
    const heard: unknown[] = [];
    const stop = b.services.notifier.subscribe(WATCHED_WRITES_CHANNEL, (message) => heard.push(message));
    try {
      // B has served control-plane requests only: no player session, media or manifest was read there.
      const { db } = b.services.store;
      await db.updateTable('runtime_sessions').set({ revoked_at: 1 }).where('id', '=', 'rts_none').execute();
      await db.updateTable('screens').set({ state: 'archived' }).where('id', '=', 'scr_none').execute();
      await db.deleteFrom('media').where('id', '=', 'med_none').execute();
      await db.updateTable('runtime_manifests').set({ superseded_at: 1 }).where('screen_id', '=', 'scr_none').execute();
      await new Promise((r) => setImmediate(r));
      expect(heard.map((m) => (m as { t: string }).t).sort()).toEqual([
        'media',
        'runtime_manifests',
        'runtime_sessions',
        'screens',
      ]);
    } finally {
      stop();
    }
  });
});
