// The typed client against a real Marquee server (the test harness starts one on 127.0.0.1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer, clientId } from '../../server/testing/harness';
import type { OperationRunner, Publish } from '../../server/operations/worker';
import { LIMITS } from '../contract/limits';
import {
  createMarqueeClient,
  ifMatch,
  MarqueeNetworkError,
  MarqueeProblem,
  OperationFailedError,
  OperationTimeoutError,
  type ClientOptions,
} from './marquee-client';

let server: TestServer;
let baseUrl: string;
let openGate: () => void = () => undefined;
const gate = () => new Promise<void>((resolve) => (openGate = resolve));
let currentGate: Promise<void> = Promise.resolve();

const gatedRunner: OperationRunner = {
  kind: 'test.gated',
  async run(op): Promise<Publish> {
    await currentGate;
    return async () => ({ done: op.id });
  },
};
const failingRunner: OperationRunner = {
  kind: 'test.failing',
  async run(): Promise<Publish> {
    const { problem } = await import('../../server/problem');
    throw problem('invalid_request', 'archive has no index.html');
  },
};

beforeAll(async () => {
  server = await TestServer.start({
    beforeListen: (services) => {
      services.operations.register(gatedRunner);
      services.operations.register(failingRunner);
    },
  });
  baseUrl = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  openGate();
  await server?.stop();
});

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
}

/** Real fetch, with scripted failures in front of it and every request recorded. */
function scriptedFetch(
  script: ('network-before' | 'network-after' | { status: number; retryAfter?: string; code?: string })[],
) {
  const calls: Call[] = [];
  const fetchImpl = (async (input: URL | RequestInfo, init?: RequestInit) => {
    const headers = Object.fromEntries(
      Object.entries((init?.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    calls.push({ url: String(input), method: init?.method ?? 'GET', headers });
    const step = script.shift();
    if (step === 'network-before') throw new TypeError('fetch failed (connection reset before sending)');
    if (step === 'network-after') {
      await fetch(input, init); // the server did the work; the answer is lost on the way back
      throw new TypeError('fetch failed (connection reset after sending)');
    }
    if (step) {
      const body = {
        type: 'x',
        title: 'x',
        status: step.status,
        detail: 'scripted',
        instance: '/',
        code: step.code ?? 'rate_limited',
        request_id: 'req_scripted',
        errors: [],
      };
      return new Response(JSON.stringify(body), {
        status: step.status,
        headers: {
          'content-type': 'application/problem+json',
          ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}),
        },
      });
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { calls, fetchImpl };
}

function client(options: Partial<ClientOptions> = {}) {
  const sleeps: number[] = [];
  const c = createMarqueeClient({ baseUrl, sleep: async (ms) => void sleeps.push(ms), ...options });
  return Object.assign(c, { sleeps });
}

const enrollment = () => ({ client_id: clientId(), email: `owner-${Math.random().toString(36).slice(2)}@example.com` });

async function enrolled() {
  const c = client();
  const { data } = await c.enroll({ ...enrollment(), project_name: 'Client tests' });
  c.useToken(data.token);
  return { c, data };
}

async function createOperation(tenantId: string, kind: string) {
  return server.services.store.transaction((work) =>
    server.services.operations.create(work, { tenantId, kind, state: 'queued', input: {} }, server.clock.now()),
  );
}

describe('status routes', () => {
  it('reads health, readiness, version and capabilities without a bearer', async () => {
    const c = client();
    expect((await c.status.health()).data).toEqual({ status: 'alive' });
    expect((await c.status.ready()).data).toEqual({ status: 'ready', degraded: [] });
    const version = (await c.status.version()).data;
    expect(Object.keys(version).sort()).toEqual(['api_version', 'commit', 'protocol_version', 'version']);
    const capabilities = await c.status.capabilities();
    expect(capabilities.data.application_file_count).toBe(LIMITS.application_file_count);
    expect(capabilities.data.features).toBeTypeOf('object');
    expect(capabilities.credits).toBeUndefined();
    expect(capabilities.requestId).toMatch(/^req_/);
  });
});

describe('enrollment and the project (Model P)', () => {
  it('enrolls, reads the project with its revision and credits, and renames it with If-Match', async () => {
    const { c, data } = await enrolled();
    expect(data.token).toMatch(/^mq_proj_/);
    const project = await c.project.get();
    expect(project.data.id).toBe(data.project.id);
    expect(project.revision).toBe(project.data.revision);
    const renamed = await c.project.update({ name: 'Lobby screens' }, { ifMatch: project.revision });
    expect(renamed.data.name).toBe('Lobby screens');
    expect(renamed.revision).toBe(project.revision! + 1);
    expect(renamed.credits).toEqual({
      remaining: expect.any(Number),
      reset: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00/),
      included: expect.any(Number),
    });
    const capabilities = await c.project.capabilities();
    expect(capabilities.data.effective).toContain('project');
  });

  it('throws a typed revision_conflict with current_revision on a stale If-Match, credits included', async () => {
    const { c } = await enrolled();
    const project = await c.project.get();
    await c.project.update({ name: 'First' }, { ifMatch: project.revision });
    const error = await c.project.update({ name: 'Second' }, { ifMatch: project.revision }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MarqueeProblem);
    const problem = error as MarqueeProblem;
    expect([problem.code, problem.status, problem.current_revision]).toEqual([
      'revision_conflict',
      412,
      project.revision! + 1,
    ]);
    expect(problem.request_id).toMatch(/^req_/);
    expect(problem.credits?.remaining).toBeTypeOf('number');
  });

  it('reports field errors of a bad request and unauthorized without a bearer', async () => {
    const c = client();
    const bad = (await c
      .enroll({ client_id: 'nope', email: 'x@example.com' })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect(bad.code).toBe('invalid_request');
    expect(bad.status).toBe(400);
    expect(bad.errors.map((e) => e.field)).toContain('client_id');
    const anonymous = (await c.project.get().catch((e: unknown) => e)) as MarqueeProblem;
    expect([anonymous.code, anonymous.status]).toEqual(['unauthorized', 401]);
  });
});

describe('credentials other than a bearer', () => {
  it('sends configured headers with every authenticated call, read again each time; a bearer replaces their Authorization', async () => {
    let renewals = 0;
    const { calls, fetchImpl } = scriptedFetch([]);
    const c = client({
      fetch: fetchImpl,
      headers: () => ({ authorization: `Marquee-Session s${++renewals}`, 'x-marquee-test': 'yes' }),
    });
    await c.project.get().catch(() => undefined);
    await c.status.health();
    const { data } = await c.enroll(enrollment());
    c.useToken(data.token);
    await c.project.get();
    expect(
      calls.map((call) => [call.url.replace(baseUrl, ''), call.headers.authorization, call.headers['x-marquee-test']]),
    ).toEqual([
      ['/api/v1/project', 'Marquee-Session s1', 'yes'],
      ['/.health', undefined, undefined],
      ['/api/v1/enrollments', undefined, undefined],
      ['/api/v1/project', `Bearer ${data.token}`, 'yes'],
    ]);
  });
});

describe('retries', () => {
  it('retries a lost answer with the same idempotency key and gets the recorded result, not a second effect', async () => {
    const { calls, fetchImpl } = scriptedFetch(['network-after']);
    const c = client({ fetch: fetchImpl });
    const body = enrollment();
    const { data, idempotencyKey } = await c.enroll(body);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.headers['idempotency-key']).toBe(idempotencyKey);
    expect(calls[1]!.headers['idempotency-key']).toBe(idempotencyKey);
    expect(calls[0]!.headers['x-request-id']).toBe(calls[1]!.headers['x-request-id']);
    expect(c.sleeps).toHaveLength(1);
    // One project exists for this client id: the retry replayed the first answer.
    const rows = await server.services.store.db
      .selectFrom('tenants')
      .select('id')
      .where('client_id', '=', body.client_id)
      .execute();
    expect(rows.map((r) => r.id)).toEqual([data.project.id]);
  });

  it('uses a fresh key for each call', async () => {
    const c = client();
    const a = await c.enroll(enrollment());
    const b = await c.enroll(enrollment());
    expect(a.idempotencyKey).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.idempotencyKey).not.toBe(b.idempotencyKey);
  });

  it('waits out 429 and 503 with Retry-After, keeping the key, then succeeds', async () => {
    const { calls, fetchImpl } = scriptedFetch([
      { status: 429, retryAfter: '2' },
      { status: 503, retryAfter: '1', code: 'not_ready' },
    ]);
    const c = client({ fetch: fetchImpl });
    const { data } = await c.enroll(enrollment());
    expect(data.token).toMatch(/^mq_proj_/);
    expect(c.sleeps).toEqual([2000, 1000]);
    expect(new Set(calls.map((call) => call.headers['idempotency-key'])).size).toBe(1);
  });

  it('tells onRetry of each retry before its wait: the reason, the attempt and the delay', async () => {
    const notices: { label: string; attempt: number; delayMs: number; reason: string; code?: string }[] = [];
    const { fetchImpl } = scriptedFetch(['network-before', { status: 429, retryAfter: '2' }]);
    const c = client({
      fetch: fetchImpl,
      onRetry: ({ problem, ...notice }) => notices.push({ ...notice, code: problem?.code }),
    });
    await c.enroll(enrollment());
    expect(notices).toHaveLength(2);
    expect(notices[0]).toMatchObject({ label: 'POST /api/v1/enrollments', attempt: 1, reason: 'network' });
    expect(notices[1]).toEqual({
      label: 'POST /api/v1/enrollments',
      attempt: 2,
      delayMs: 2000,
      reason: 'problem',
      code: 'rate_limited',
    });
    expect(c.sleeps).toEqual([notices[0]!.delayMs, 2000]);
  });

  it('does not wait for a Retry-After beyond the bound: the rate_limited problem is thrown', async () => {
    const c = client();
    const body = enrollment();
    for (let i = 0; i < 5; i++) await c.enroll({ ...body, email: `n${i}@example.com` });
    const error = (await c.enroll({ ...body, email: 'sixth@example.com' }).catch((e: unknown) => e)) as MarqueeProblem;
    expect([error.code, error.status]).toEqual(['rate_limited', 429]);
    expect(error.retryAfter).toBeGreaterThan(30);
    expect(c.sleeps).toEqual([]);
  });

  it('gives up after the attempt bound', async () => {
    const { calls, fetchImpl } = scriptedFetch([
      { status: 429, retryAfter: '1' },
      { status: 429, retryAfter: '1' },
      { status: 429, retryAfter: '1' },
    ]);
    const c = client({ fetch: fetchImpl });
    const error = (await c.status.health().catch((e: unknown) => e)) as MarqueeProblem;
    expect(error.code).toBe('rate_limited');
    expect(calls).toHaveLength(3);
  });

  it('retries reads after network errors but never an unkeyed write', async () => {
    const reads = scriptedFetch(['network-before', 'network-before']);
    const r = client({ fetch: reads.fetchImpl });
    expect((await r.status.health()).data).toEqual({ status: 'alive' });
    expect(reads.calls).toHaveLength(3);

    const writes = scriptedFetch(['network-before']);
    const w = client({ fetch: writes.fetchImpl });
    const error = await w.transport
      .request({ method: 'POST', path: '/api/v1/enrollments', json: enrollment(), authenticated: false })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MarqueeNetworkError);
    expect((error as MarqueeNetworkError).attempts).toBe(1);
    expect(writes.calls).toHaveLength(1);
  });

  it('does not retry other problems', async () => {
    const { calls, fetchImpl } = scriptedFetch([{ status: 500, retryAfter: '1', code: 'internal_error' }]);
    const c = client({ fetch: fetchImpl });
    expect(((await c.status.health().catch((e: unknown) => e)) as MarqueeProblem).code).toBe('internal_error');
    expect(calls).toHaveLength(1);
  });
});

describe('If-Match helpers', () => {
  it('takes a revision, a resource or a result, and refuses anything without a revision before sending', async () => {
    const { c } = await enrolled();
    const result = await c.project.get();
    expect([ifMatch(3), ifMatch(result.data), ifMatch(result)]).toEqual([
      '"3"',
      `"${result.data.revision}"`,
      `"${result.revision}"`,
    ]);
    for (const bad of [0, 1.5, { revision: undefined }, {}]) expect(() => ifMatch(bad)).toThrow(RangeError);
    const { calls, fetchImpl } = scriptedFetch([]);
    const unguarded = client({ fetch: fetchImpl, token: 'mq_proj_unused' });
    await expect(unguarded.project.update({ name: 'Unguarded' }, { ifMatch: { revision: undefined } })).rejects.toThrow(
      RangeError,
    );
    expect(calls).toHaveLength(0);
  });
});

describe('accounts (Model A)', () => {
  it('creates an account, reads it, acknowledges the credential, and a later retry is refused', async () => {
    const c = client();
    const email = `a-${Math.random().toString(36).slice(2)}@example.com`;
    const created = await c.account.create({ email });
    expect(created.status).toBe(201);
    c.useToken(created.data.token);
    const account = await c.account.get();
    expect(account.data.email).toBe(email);
    expect(account.revision).toBe(account.data.revision);
    expect(account.credits).toBeUndefined(); // no credit meter in Model A
    const ack = await c.account.acknowledgeIssuance(created.data.issuance_id);
    expect(ack.status).toBe(204);
    const replay = (await c.account
      .create({ email }, { idempotencyKey: created.idempotencyKey })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect([replay.code, replay.status]).toEqual(['credential_issuance_expired', 410]);
  });
});

describe('operations', () => {
  it('reads an operation, waits for it to finish, and reads the result', async () => {
    const { c, data } = await enrolled();
    currentGate = gate();
    const op = await createOperation(data.project.id, 'test.gated');
    expect((await c.operations.get(op.id)).data).toMatchObject({ id: op.id, kind: 'test.gated' });
    const seen: string[] = [];
    const waiting = c.operations.wait(op.id, {
      onPoll: (o) => {
        seen.push(o.state);
        if (seen.length === 2) openGate();
      },
    });
    const done = await waiting;
    expect(done).toMatchObject({ state: 'succeeded', result: { done: op.id } });
    expect(seen[0]).not.toBe('succeeded');
  });

  it('cancels an operation; waitForSuccess then throws with the operation', async () => {
    const { c, data } = await enrolled();
    currentGate = gate();
    const op = await createOperation(data.project.id, 'test.gated');
    const cancelled = await c.operations.cancel(op.id);
    expect(cancelled.data.state).toBe('cancelled');
    openGate();
    const error = (await c.operations.waitForSuccess(op.id).catch((e: unknown) => e)) as OperationFailedError;
    expect(error).toBeInstanceOf(OperationFailedError);
    expect(error.operation.state).toBe('cancelled');
  });

  it('turns a failed operation into its problem', async () => {
    const { c, data } = await enrolled();
    const op = await createOperation(data.project.id, 'test.failing');
    const error = (await c.operations.waitForSuccess(op.id).catch((e: unknown) => e)) as OperationFailedError;
    expect(error).toBeInstanceOf(OperationFailedError);
    expect([error.problem.code, error.problem.status, error.problem.detail]).toEqual([
      'invalid_request',
      400,
      'archive has no index.html',
    ]);
  });

  it('times out while an operation keeps running', async () => {
    const { c, data } = await enrolled();
    currentGate = gate();
    const op = await createOperation(data.project.id, 'test.gated');
    const error = (await c.operations.wait(op.id, { timeoutMs: 0 }).catch((e: unknown) => e)) as OperationTimeoutError;
    expect(error).toBeInstanceOf(OperationTimeoutError);
    expect(error.operation.id).toBe(op.id);
    openGate();
  });

  it("answers not_found for another project's operation", async () => {
    const owner = await enrolled();
    const other = await enrolled();
    const op = await createOperation(owner.data.project.id, 'test.failing');
    const error = (await other.c.operations.get(op.id).catch((e: unknown) => e)) as MarqueeProblem;
    expect([error.code, error.status]).toEqual(['not_found', 404]);
  });
});
