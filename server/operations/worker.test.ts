import { afterEach, describe, expect, it } from 'vitest';
import { problem } from '../problem';
import { TestServer, randomKey } from '../testing/harness';
import {
  LEASE_MS,
  MAX_ATTEMPTS,
  RUN_DEADLINE_MS,
  UNAVAILABLE_RETRY_MS,
  type OperationRunner,
  type Publish,
} from './worker';

let server: TestServer;
afterEach(async () => server?.stop());

interface Probe {
  published: string[];
  terminal: string[];
  discarded: string[];
  gate?: Promise<void>;
}

function testRunner(kind: string, probe: Probe, behaviour: 'succeed' | 'fail' | 'crash' = 'succeed'): OperationRunner {
  return {
    kind,
    async run(op, control): Promise<Publish> {
      await probe.gate;
      if (control.signal.aborted) throw new Error('aborted');
      if (behaviour === 'fail') throw problem('invalid_request', 'archive has no index.html');
      if (behaviour === 'crash') throw new Error('disk on fire at /var/secret');
      return async (work) => {
        await work.db
          .updateTable('tenants')
          .set({ name: `published ${op.id}` })
          .where('id', '=', op.tenant_id)
          .execute();
        probe.published.push(op.id);
        return { done: op.id };
      };
    },
    async onTerminal(_work, op, state) {
      probe.terminal.push(`${op.id}:${state}`);
    },
    async discard(op) {
      probe.discarded.push(op.id);
    },
  };
}

async function createOp(s: TestServer, tenantId: string, kind: string, state: 'queued' | 'receiving' = 'queued') {
  return s.services.store.transaction((work) =>
    s.services.operations.create(work, { tenantId, kind, state, input: { n: 1 } }, s.clock.now()),
  );
}

describe('durable operations', () => {
  it('claims a queued operation, publishes in the finalizing transaction and records the result', async () => {
    server = await TestServer.start();
    const probe: Probe = { published: [], terminal: [], discarded: [] };
    server.services.operations.register(testRunner('test.ok', probe));
    const { token, projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.ok');
    await server.services.operations.idle();
    const res = await server.request('GET', `/api/v1/operations/${op.id}`, { token });
    expect(res.json()).toMatchObject({ id: op.id, kind: 'test.ok', state: 'succeeded', result: { done: op.id } });
    expect(probe.published).toEqual([op.id]);
    const events = await server.services.store.db
      .selectFrom('events')
      .select('type')
      .where('operation_id', '=', op.id)
      .execute();
    expect(events.map((e) => e.type)).toEqual(['operation.succeeded']);
  });

  it('fails with the runner problem and calls onTerminal in the same transaction', async () => {
    server = await TestServer.start();
    const probe: Probe = { published: [], terminal: [], discarded: [] };
    server.services.operations.register(testRunner('test.fail', probe, 'fail'));
    const { token, projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.fail');
    await server.services.operations.idle();
    const body = (await server.request('GET', `/api/v1/operations/${op.id}`, { token })).json();
    expect(body.state).toBe('failed');
    expect(body.error).toMatchObject({ code: 'invalid_request', detail: 'archive has no index.html', status: 400 });
    expect(probe.terminal).toEqual([`${op.id}:failed`]);
    expect(probe.discarded).toEqual([op.id]);
  });

  it('hides unexpected runner errors behind internal_error', async () => {
    server = await TestServer.start();
    server.services.operations.register(
      testRunner('test.crash', { published: [], terminal: [], discarded: [] }, 'crash'),
    );
    const { token, projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.crash');
    await server.services.operations.idle();
    const res = await server.request('GET', `/api/v1/operations/${op.id}`, { token });
    expect(res.json().error.code).toBe('internal_error');
    expect(res.text).not.toContain('/var/secret');
  });

  it("stores a failure as the problem document HTTP renders, with the status of the tenant's generation", async () => {
    server = await TestServer.start();
    server.services.operations.register({
      kind: 'test.vendor',
      async run() {
        throw problem('dependency_unavailable', 'the image vendor is unavailable; retry later');
      },
    });
    const project = await server.enroll();
    const account = await server.createAccount();
    const ops = [
      await createOp(server, project.projectId, 'test.vendor'),
      await createOp(server, account.accountId, 'test.vendor'),
    ];
    // A dependency that stays down: each attempt waits out the retry delay, the last one fails.
    const rows = () =>
      server.services.store.db
        .selectFrom('operations')
        .selectAll()
        .where(
          'id',
          'in',
          ops.map((o) => o.id),
        )
        .execute();
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      for (let i = 0; i < 200; i++) {
        const all = await rows();
        if (all.every((r) => r.attempts === attempt && r.state === 'running' && r.lease_owner === null)) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      server.clock.advance(UNAVAILABLE_RETRY_MS);
      await server.services.operations.expireLeases();
    }
    await server.services.operations.idle();
    const [p, a] = await Promise.all(
      ops.map(
        async (op, i) =>
          (
            await server.request('GET', `/api/v1/operations/${op.id}`, { token: [project.token, account.token][i] })
          ).json().error,
      ),
    );
    expect(p).toEqual({
      type: `${server.origin}/problems/dependency-unavailable`,
      title: 'Required dependency unavailable',
      status: 500,
      detail: 'the image vendor is unavailable; retry later',
      instance: `/api/v1/operations/${ops[0]!.id}`,
      code: 'dependency_unavailable',
      errors: [],
    });
    expect(a).toMatchObject({
      status: 503,
      code: 'dependency_unavailable',
      instance: `/api/v1/operations/${ops[1]!.id}`,
    });
  });

  it('lets cancel win over a running worker: nothing is published', async () => {
    server = await TestServer.start();
    let open!: () => void;
    const probe: Probe = { published: [], terminal: [], discarded: [], gate: new Promise((r) => (open = r)) };
    server.services.operations.register(testRunner('test.slow', probe));
    const { token, projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.slow');
    for (let i = 0; i < 50; i++) {
      const row = await server.services.store.db
        .selectFrom('operations')
        .select('state')
        .where('id', '=', op.id)
        .executeTakeFirstOrThrow();
      if (row.state === 'running') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const cancelled = await server.request('POST', `/api/v1/operations/${op.id}/cancel`, {
      token,
      idempotencyKey: randomKey(),
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json().state).toBe('cancelled');
    open();
    await server.services.operations.idle();
    expect(probe.published).toEqual([]);
    expect(probe.discarded).toEqual([op.id]);
    expect(probe.terminal).toEqual([`${op.id}:cancelled`]);
    expect((await server.request('GET', `/api/v1/operations/${op.id}`, { token })).json().state).toBe('cancelled');
  });

  it('refuses to finalize with a stale fence even without an abort signal', async () => {
    server = await TestServer.start();
    const probe: Probe = { published: [], terminal: [], discarded: [] };
    let open!: () => void;
    probe.gate = new Promise((r) => (open = r));
    const runner = testRunner('test.fence', probe);
    server.services.operations.register({
      ...runner,
      run: async (op, control) => runner.run(op, { ...control, signal: new AbortController().signal }),
    });
    const { projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.fence');
    await new Promise((r) => setTimeout(r, 50));
    // Another actor moved the fence (a cancel on another replica).
    await server.services.store.db.updateTable('operations').set({ fence: 99 }).where('id', '=', op.id).execute();
    open();
    await new Promise((r) => setTimeout(r, 100));
    expect(probe.published).toEqual([]);
  });

  it('answers cancel of a finished operation with resource_conflict and of a cancelled one with 200', async () => {
    server = await TestServer.start();
    server.services.operations.register(testRunner('test.ok', { published: [], terminal: [], discarded: [] }));
    const { token, projectId } = await server.enroll();
    const done = await createOp(server, projectId, 'test.ok');
    await server.services.operations.idle();
    expect(
      (await server.request('POST', `/api/v1/operations/${done.id}/cancel`, { token, idempotencyKey: randomKey() }))
        .status,
    ).toBe(409);
    const waiting = await createOp(server, projectId, 'test.unclaimed', 'receiving');
    expect(
      (await server.request('POST', `/api/v1/operations/${waiting.id}/cancel`, { token, idempotencyKey: randomKey() }))
        .status,
    ).toBe(200);
    expect(
      (
        await server.request('POST', `/api/v1/operations/${waiting.id}/cancel`, { token, idempotencyKey: randomKey() })
      ).json().state,
    ).toBe('cancelled');
  });

  it('cancels once when cancels arrive together: one outcome, one onTerminal', async () => {
    server = await TestServer.start();
    const probe: Probe = { published: [], terminal: [], discarded: [] };
    server.services.operations.register(testRunner('test.waiting', probe));
    const { token, projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.waiting', 'receiving');
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        server.request('POST', `/api/v1/operations/${op.id}/cancel`, { token, idempotencyKey: randomKey() }),
      ),
    );
    expect(answers.map((a) => [a.status, a.json().state])).toEqual(Array(4).fill([200, 'cancelled']));
    expect(probe.terminal).toEqual([`${op.id}:cancelled`]);
    const events = await server.services.store.db
      .selectFrom('events')
      .select('type')
      .where('operation_id', '=', op.id)
      .execute();
    expect(events.map((e) => e.type)).toEqual(['operation.cancelled']);
  });

  it("answers not_found for another tenant's operation", async () => {
    server = await TestServer.start();
    const a = await server.enroll();
    const b = await server.enroll();
    const op = await createOp(server, a.projectId, 'test.none', 'receiving');
    expect((await server.request('GET', `/api/v1/operations/${op.id}`, { token: b.token })).status).toBe(404);
    expect(
      (
        await server.request('POST', `/api/v1/operations/${op.id}/cancel`, {
          token: b.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(404);
  });

  it('resumes interrupted work after a restart and fails work interrupted too often', async () => {
    server = await TestServer.start();
    const { projectId } = await server.enroll();
    const db = server.services.store.db;
    const resumable = await createOp(server, projectId, 'test.resume', 'receiving');
    const exhausted = await createOp(server, projectId, 'test.resume', 'receiving');
    const staging = await createOp(server, projectId, 'test.resume', 'receiving');
    await db
      .updateTable('operations')
      .set({ state: 'running', attempts: 1, fence: 1 })
      .where('id', '=', resumable.id)
      .execute();
    await db
      .updateTable('operations')
      .set({ state: 'running', attempts: 3, fence: 3 })
      .where('id', '=', exhausted.id)
      .execute();
    server = await restartWith(server, 'test.resume');
    await server.services.operations.idle();
    const states = Object.fromEntries(
      (await server.services.store.db.selectFrom('operations').select(['id', 'state']).execute()).map((r) => [
        r.id,
        r.state,
      ]),
    );
    expect(states[resumable.id]).toBe('succeeded');
    expect(states[exhausted.id]).toBe('failed');
    expect(states[staging.id]).toBe('failed');
  });
});

describe('operation leases', () => {
  /** A runner whose first `hangFor` attempts never settle, whatever their abort signal says. */
  function hangingRunner(kind: string, hangFor: number, signals: AbortSignal[]): OperationRunner {
    return {
      kind,
      async run(op, control) {
        signals.push(control.signal);
        if (op.attempts <= hangFor) await new Promise(() => undefined);
        return async () => ({ attempt: op.attempts });
      },
    };
  }

  async function untilState(s: TestServer, id: string, state: string) {
    for (let i = 0; i < 200; i++) {
      const row = await s.services.store.db
        .selectFrom('operations')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      if (row.state === state) return row;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`operation ${id} never became ${state}`);
  }

  const row = (s: TestServer, id: string) =>
    s.services.store.db.selectFrom('operations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  async function until(check: () => Promise<boolean>) {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the condition never held');
  }

  it('renews a live run, and takes back one past its deadline once its lease lapses: aborted, requeued, its slot freed', async () => {
    server = await TestServer.start();
    const { operations } = server.services;
    const signals: AbortSignal[] = [];
    operations.register(hangingRunner('test.hang', 1, signals));
    operations.register(testRunner('test.ok', { published: [], terminal: [], discarded: [] }));
    const { projectId } = await server.enroll();
    const hung = [await createOp(server, projectId, 'test.hang'), await createOp(server, projectId, 'test.hang')];
    for (const op of hung) expect((await untilState(server, op.id, 'running')).lease_owner).toBe(operations.workerId);
    // Both worker slots are held by the hung runs: nothing else runs.
    const quick = await createOp(server, projectId, 'test.ok');
    await new Promise((r) => setTimeout(r, 100));
    expect((await untilState(server, quick.id, 'queued')).attempts).toBe(0);

    // Within the deadline the lease is renewed, so the watchdog leaves the runs alone.
    server.clock.advance(LEASE_MS + 1);
    await operations.renewLeases();
    expect(await operations.expireLeases()).toBe(0);
    expect(signals.some((s) => s.aborted)).toBe(false);

    // Past the deadline the lease is no longer renewed; once it lapses the watchdog takes the runs back.
    server.clock.advance(RUN_DEADLINE_MS);
    await operations.renewLeases();
    await server.services.housekeeping.runAll();
    expect(signals.slice(0, 2).every((s) => s.aborted)).toBe(true);
    await operations.idle();
    const ids = [...hung.map((o) => o.id), quick.id];
    const rows = await server.services.store.db.selectFrom('operations').selectAll().where('id', 'in', ids).execute();
    expect(ids.map((id) => rows.find((r) => r.id === id)!).map((r) => [r.state, r.attempts])).toEqual([
      ['succeeded', 2],
      ['succeeded', 2],
      ['succeeded', 1],
    ]);
    expect(server.logText()).toContain('operation lease lapsed; run taken back');
  });

  it('tries a run that found a dependency down again once the retry delay lapsed, and fails it after the last attempt', async () => {
    server = await TestServer.start();
    const { operations } = server.services;
    // The bucket is down for the first run of 'test.flaky', and for every run of 'test.down'.
    let flakyRuns = 0;
    const unavailable = () => problem('dependency_unavailable', 'the blob store is unavailable; retry later');
    operations.register({
      kind: 'test.flaky',
      async run() {
        flakyRuns++;
        if (flakyRuns === 1) throw unavailable();
        return async () => ({ runs: flakyRuns });
      },
    });
    operations.register({
      kind: 'test.down',
      async run() {
        throw unavailable();
      },
    });
    const { token, projectId } = await server.enroll();
    const flaky = await createOp(server, projectId, 'test.flaky');
    const down = await createOp(server, projectId, 'test.down');
    const view = async (id: string) => (await server.request('GET', `/api/v1/operations/${id}`, { token })).json();
    const waiting = async (attempt: number) => {
      const r = await row(server, down.id);
      return r.attempts === attempt && r.state === 'running' && r.lease_owner === null;
    };
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      // Not failed: waiting for its retry, and not taken back before the delay, by a restart neither.
      await until(() => waiting(attempt));
      expect(await view(down.id)).toMatchObject({ state: 'running' });
      expect(await operations.expireLeases()).toBe(0);
      if (attempt === 1) {
        await operations.stop();
        await operations.start();
        expect(await waiting(1)).toBe(true);
      }
      server.clock.advance(UNAVAILABLE_RETRY_MS);
      expect(await operations.expireLeases()).toBeGreaterThanOrEqual(1);
    }
    // The last attempt fails it with the dependency's problem.
    await until(async () => (await row(server, down.id)).state === 'failed');
    await operations.idle().catch(() => undefined);
    expect(await view(flaky.id)).toMatchObject({ state: 'succeeded', result: { runs: 2 } });
    expect(await view(down.id)).toMatchObject({ state: 'failed', error: { code: 'dependency_unavailable' } });
    expect((await row(server, down.id)).attempts).toBe(MAX_ATTEMPTS);
    expect(server.logText()).toContain('operation will be tried again: dependency_unavailable');
  });

  it('keeps a run whose outcome could not be recorded (the database down too) for the watchdog, without an unhandled rejection', async () => {
    server = await TestServer.start();
    const { operations, store } = server.services;
    const unavailable = () => problem('dependency_unavailable', 'the database is unavailable; retry later');
    // While `down`, the database refuses every write the worker makes after the run (as PostgreSQL
    // out of reach does): the retry's lease and the failure alike.
    let down = false;
    const updateTable = store.db.updateTable.bind(store.db);
    const transaction = store.transaction.bind(store);
    Object.assign(store.db, {
      updateTable: ((table: never) => {
        if (down) throw unavailable();
        return updateTable(table);
      }) as typeof store.db.updateTable,
    });
    Object.assign(store, {
      transaction: ((fn: never) =>
        down ? Promise.reject(unavailable()) : transaction(fn)) as typeof store.transaction,
    });
    let runs = 0;
    operations.register({
      kind: 'test.dbdown',
      async run() {
        runs++;
        if (runs === 1) {
          down = true;
          throw unavailable();
        }
        return async () => ({ runs });
      },
    });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const { projectId } = await server.enroll();
      const op = await createOp(server, projectId, 'test.dbdown');
      await until(async () => rejections.length > 0 || server.logText().includes('operation outcome not recorded'));
      expect(rejections).toEqual([]);
      // Still running under the lease of its claim; once the database is back and that lapses, the
      // watchdog requeues it and the next attempt succeeds.
      down = false;
      expect((await row(server, op.id)).state).toBe('running');
      server.clock.advance(LEASE_MS);
      expect(await operations.expireLeases()).toBe(1);
      expect((await untilState(server, op.id, 'succeeded')).attempts).toBe(2);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it(`fails an operation whose runs keep overrunning, after ${MAX_ATTEMPTS} attempts`, async () => {
    server = await TestServer.start();
    const { operations } = server.services;
    operations.register(hangingRunner('test.hang', Infinity, []));
    const { token, projectId } = await server.enroll();
    const op = await createOp(server, projectId, 'test.hang');
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect((await untilState(server, op.id, 'running')).attempts).toBe(attempt);
      server.clock.advance(RUN_DEADLINE_MS + LEASE_MS);
      expect(await operations.expireLeases()).toBe(1);
    }
    const body = (await server.request('GET', `/api/v1/operations/${op.id}`, { token })).json();
    expect(body).toMatchObject({
      state: 'failed',
      error: {
        code: 'internal_error',
        detail: expect.stringContaining(`did not finish in time ${MAX_ATTEMPTS} times`),
      },
    });
  });

  it("on start, takes back its own and lapsed work but leaves another worker's live runs and uploads alone", async () => {
    server = await TestServer.start();
    const { projectId } = await server.enroll();
    const db = server.services.store.db;
    const me = server.services.operations.workerId;
    const now = server.clock.now();
    const [othersLive, othersLapsed, mine, othersUpload, myUpload] = [
      await createOp(server, projectId, 'test.resume', 'receiving'),
      await createOp(server, projectId, 'test.resume', 'receiving'),
      await createOp(server, projectId, 'test.resume', 'receiving'),
      await createOp(server, projectId, 'test.resume', 'receiving'),
      await createOp(server, projectId, 'test.resume', 'receiving'),
    ];
    const running = (owner: string, leaseExpiresAt: number) => ({
      state: 'running' as const,
      attempts: 1,
      fence: 1,
      lease_owner: owner,
      lease_expires_at: leaseExpiresAt,
    });
    await db
      .updateTable('operations')
      .set(running('wkr_other', now + LEASE_MS))
      .where('id', '=', othersLive.id)
      .execute();
    await db
      .updateTable('operations')
      .set(running('wkr_other', now - 1))
      .where('id', '=', othersLapsed.id)
      .execute();
    await db
      .updateTable('operations')
      .set(running(me, now + LEASE_MS))
      .where('id', '=', mine.id)
      .execute();
    await db.updateTable('operations').set({ lease_owner: 'wkr_other' }).where('id', '=', othersUpload.id).execute();
    server = await restartWith(server, 'test.resume');
    expect(server.services.operations.workerId).toBe(me);
    await untilState(server, othersLapsed.id, 'succeeded');
    await untilState(server, mine.id, 'succeeded');
    await untilState(server, myUpload.id, 'failed');
    const untouched = await server.services.store.db
      .selectFrom('operations')
      .selectAll()
      .where('id', 'in', [othersLive.id, othersUpload.id])
      .execute();
    expect(
      [othersLive.id, othersUpload.id]
        .map((id) => untouched.find((r) => r.id === id)!)
        .map((r) => [r.state, r.fence, r.lease_owner]),
    ).toEqual([
      ['running', 1, 'wkr_other'],
      ['receiving', 0, 'wkr_other'],
    ]);
  });
});

async function restartWith(s: TestServer, kind: string): Promise<TestServer> {
  // Runners are registered at start-up by installers; register before the worker's start by
  // stopping first and registering on the new instance before it claims anything.
  await s.server.stop(1000);
  const next = await TestServer.start({
    dataDir: s.dataDir,
    clock: s.clock,
    config: { port: s.port },
    beforeListen: (services) =>
      services.operations.register(testRunner(kind, { published: [], terminal: [], discarded: [] })),
  });
  return next;
}
