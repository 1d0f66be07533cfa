import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import type { RouteEntry } from '../http/dispatch';
import { query, reply } from '../http/route';
import { pairedRuntimeCookie } from '../pairing/pairing.auth';
import { RUNTIME_COOKIE } from '../pairing/pairing-cookies';
import { pairActiveScreen } from '../pairing/pairing.fixtures';
import { TestServer, clientId, randomKey } from '../testing/harness';
import type { Services } from '../services';

/** A runtime-plane route that a paired runtime cookie opens: proves the cookie used below is real. */
const extraRoutes: RouteEntry[] = [
  {
    plane: 'runtime',
    method: 'GET',
    path: '/test/runtime-whoami',
    route: query({ auth: pairedRuntimeCookie }, async (ctx) => reply.ok({ screen: ctx.principal.screenId })),
  },
];

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start({ clock: new TestClock('2026-11-21T12:00:00Z'), extraRoutes });
});
afterAll(async () => server.stop());

const enrollment = (overrides: Record<string, unknown> = {}) => ({
  client_id: clientId(),
  email: 'ops@example.com',
  ...overrides,
});

describe('Model A accounts', () => {
  it('creates an account with a one-time credential and quota figures', async () => {
    const res = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'Owner@Example.com' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const body = res.json();
    expect(body.token).toMatch(/^mq_acct_/);
    expect(body.issuance_id).toMatch(/^iss_/);
    expect(body.account).toEqual({
      id: expect.stringMatching(/^acc_/),
      email: 'owner@example.com',
      revision: 1,
      status: 'active',
      used_bytes: 0,
      reserved_bytes: 0,
      screen_count: 0,
      content_limit_bytes: 1073741824,
      screen_limit: 50,
    });
    const me = await server.request('GET', '/api/v1/account', { token: body.token });
    expect(me.status).toBe(200);
    expect(me.json().id).toBe(body.account.id);
    expect(me.headers.etag).toBe('"1"');
  });

  it('requires an Idempotency-Key', async () => {
    const res = await server.request('POST', '/api/v1/accounts', { json: { email: 'nokey@example.com' } });
    expect(res.status).toBe(400);
  });

  it('refuses a second account for the same address with account_exists', async () => {
    await server.createAccount('dup@example.com');
    const res = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'DUP@example.com' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(409);
    expect(res.json().code).toBe('account_exists');
  });

  it('redelivers the credential to an exact retry until acknowledged, then answers credential_issuance_expired', async () => {
    const key = randomKey();
    const first = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'ack@example.com' },
      idempotencyKey: key,
    });
    const again = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'ack@example.com' },
      idempotencyKey: key,
    });
    expect(again.json().token).toBe(first.json().token);
    const { token, issuance_id } = first.json();
    expect(
      (await server.request('POST', `/api/v1/account/credential-issuances/${issuance_id}/ack`, { token })).status,
    ).toBe(204);
    const after = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'ack@example.com' },
      idempotencyKey: key,
    });
    expect(after.status).toBe(410);
    expect(after.json().code).toBe('credential_issuance_expired');
    expect(after.text).not.toContain(token);
  });

  it("answers not_found for another account's issuance", async () => {
    const a = await server.createAccount();
    const b = await server.createAccount();
    const res = await server.request('POST', `/api/v1/account/credential-issuances/${b.body.issuance_id}/ack`, {
      token: a.token,
    });
    expect(res.status).toBe(404);
  });

  it('limits attempts per email address: account_exists misses count, exact retries do not', async () => {
    const key = randomKey();
    const first = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'budget@example.com' },
      idempotencyKey: key,
    });
    expect(first.status).toBe(201);
    expect(first.headers['ratelimit-policy']).toContain('"account-create-email";q=5;w=3600');
    for (let i = 0; i < 3; i++)
      expect(
        (
          await server.request('POST', '/api/v1/accounts', {
            json: { email: 'budget@example.com' },
            idempotencyKey: key,
          })
        ).status,
      ).toBe(201);
    for (let i = 0; i < 4; i++) {
      const guess = await server.request('POST', '/api/v1/accounts', {
        json: { email: 'Budget@example.com' },
        idempotencyKey: randomKey(),
      });
      expect(guess.json().code).toBe('account_exists');
    }
    const limited = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'budget@example.com' },
      idempotencyKey: randomKey(),
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.ratelimit).toContain('"account-create-email";r=0');
    expect(
      (await server.request('POST', '/api/v1/accounts', { json: { email: 'budget@example.com' }, idempotencyKey: key }))
        .status,
    ).toBe(201);
  });

  it('limits account creation per client IP', async () => {
    const s = await TestServer.start({ config: { enrollmentsPerIpPerHour: 2 } });
    try {
      for (let i = 0; i < 2; i++)
        expect(
          (
            await s.request('POST', '/api/v1/accounts', {
              json: { email: `ip${i}@example.com` },
              idempotencyKey: randomKey(),
            })
          ).status,
        ).toBe(201);
      const limited = await s.request('POST', '/api/v1/accounts', {
        json: { email: 'ip2@example.com' },
        idempotencyKey: randomKey(),
      });
      expect(limited.status).toBe(429);
      expect(limited.headers.ratelimit).toContain('"account-create-ip";r=0');
    } finally {
      await s.stop();
    }
  });

  it('redelivers the credential only to a retry from the same client IP', async () => {
    const s = await TestServer.start({ config: { trustedProxies: ['127.0.0.1', '::1'] } });
    try {
      const key = randomKey();
      const from = (ip: string) => ({
        json: { email: 'victim@example.com' },
        idempotencyKey: key,
        headers: { 'x-forwarded-for': ip },
      });
      const first = await s.request('POST', '/api/v1/accounts', from('198.51.100.1'));
      expect(first.status).toBe(201);
      const elsewhere = await s.request('POST', '/api/v1/accounts', from('203.0.113.7'));
      expect(elsewhere.status).toBe(409);
      expect(elsewhere.json().code).toBe('account_exists');
      expect(elsewhere.text).not.toContain(first.json().token);
      const same = await s.request('POST', '/api/v1/accounts', from('198.51.100.1'));
      expect(same.status).toBe(201);
      expect(same.json().token).toBe(first.json().token);
    } finally {
      await s.stop();
    }
  });

  it('validates the email address', async () => {
    const res = await server.request('POST', '/api/v1/accounts', {
      json: { email: 'not-an-address' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe('email');
  });
});

describe('Model P enrollment', () => {
  it('creates a project and a project bearer', async () => {
    const res = await server.request('POST', '/api/v1/enrollments', {
      json: enrollment({ project_name: '  Lobby screens  ' }),
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const body = res.json();
    expect(body.token).toMatch(/^mq_proj_/);
    expect(body.project).toMatchObject({
      name: 'Lobby screens',
      plan: 'signage',
      contact_email: 'ops@example.com',
      credit_remaining: 10000,
    });
    expect(Date.parse(body.issuance_expires_at) - server.clock.now()).toBe(10 * 60_000);
  });

  it.each([
    ['client_id', { client_id: 'cli_short' }],
    ['email', { email: 'nope' }],
    ['intent', { intent: 'gaming' }],
    ['agent_type', { agent_type: '-bad' }],
    ['name', { name: '' }],
    ['platform', { platform: 'p'.repeat(81) }],
    ['version', { version: 'v'.repeat(41) }],
    ['project_name', { project_name: 'visit www.example.com' }],
    ['project_name', { project_name: 'shop.example.io' }],
    ['project_name', { project_name: 'a@b' }],
    ['project_name', { project_name: 'http://x' }],
    ['project_name', { project_name: 'tab\there' }],
    ['project_name', { project_name: 'x'.repeat(61) }],
    ['project_name', { project_name: '   ' }],
    ['surprise', { surprise: 1 }],
  ])('rejects a bad %s', async (field, overrides) => {
    const res = await server.request('POST', '/api/v1/enrollments', {
      json: enrollment(overrides),
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('replays an exact retry before applying rate limits, and rate-limits new enrollments per client', async () => {
    const body = enrollment();
    const key = randomKey();
    const first = await server.request('POST', '/api/v1/enrollments', { json: body, idempotencyKey: key });
    for (let i = 0; i < 4; i++)
      expect(
        (await server.request('POST', '/api/v1/enrollments', { json: body, idempotencyKey: randomKey() })).status,
      ).toBe(201);
    const limited = await server.request('POST', '/api/v1/enrollments', { json: body, idempotencyKey: randomKey() });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.headers['ratelimit-policy']).toContain('enrollment-client');
    const replay = await server.request('POST', '/api/v1/enrollments', { json: body, idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.json().token).toBe(first.json().token);
  });

  it('keys the per-client budget only on a valid client id: refused bodies leave no large keys behind', async () => {
    // Held in process memory (MemoryRateLimiter), or in rate_windows where replicas share them (PostgreSQL).
    const heldKeyChars = async (services: Services) => {
      const memory = (services.rateLimiter as unknown as { windows?: Map<string, unknown> }).windows;
      const ids = memory
        ? [...memory.keys()]
        : (await services.store.db.selectFrom('rate_windows').select('id').execute()).map((r) => r.id);
      return ids.reduce((n, k) => n + k.length, 0);
    };
    const keyChars = () => heldKeyChars(server.services);
    const s = await TestServer.start({ config: { enrollmentsPerIpPerHour: 1000 } });
    try {
      const chars = () => heldKeyChars(s.services);
      for (let i = 0; i < 20; i++) {
        const res = await s.request('POST', '/api/v1/enrollments', {
          json: enrollment({ client_id: `${i}`.padEnd(60_000, 'x') }),
          idempotencyKey: randomKey(),
        });
        expect(res.status).toBe(400);
        expect(res.json().errors[0].field).toBe('client_id');
        // Not its own budget: an invalid id is refused by validation, never as rate_limited.
        expect(res.headers['ratelimit-policy']).not.toContain('enrollment-client');
        const account = await s.request('POST', '/api/v1/accounts', {
          json: { email: `${i}@`.padEnd(60_000, 'x') },
          idempotencyKey: randomKey(),
        });
        expect(account.status).toBe(400);
      }
      expect(await chars()).toBeLessThan(1000);
    } finally {
      await s.stop();
    }
    expect(await keyChars()).toBeGreaterThan(0); // the shared server's valid keys are still counted
  });

  it('rate-limits enrollments per client IP', async () => {
    const s = await TestServer.start({ config: { enrollmentsPerIpPerHour: 2 } });
    try {
      for (let i = 0; i < 2; i++)
        expect(
          (await s.request('POST', '/api/v1/enrollments', { json: enrollment(), idempotencyKey: randomKey() })).status,
        ).toBe(201);
      const limited = await s.request('POST', '/api/v1/enrollments', {
        json: enrollment(),
        idempotencyKey: randomKey(),
      });
      expect(limited.status).toBe(429);
      expect(limited.headers.ratelimit).toContain('"enrollment-ip";r=0');
    } finally {
      await s.stop();
    }
  });

  it('answers credential_issuance_expired to a retry after issuance_expires_at', async () => {
    const body = enrollment();
    const key = randomKey();
    await server.request('POST', '/api/v1/enrollments', { json: body, idempotencyKey: key });
    server.clock.advance(10 * 60_000);
    const res = await server.request('POST', '/api/v1/enrollments', { json: body, idempotencyKey: key });
    expect(res.status).toBe(410);
    expect(res.json().code).toBe('credential_issuance_expired');
  });

  it('erases the recorded credential envelope once its window closed', async () => {
    const key = randomKey();
    const res = await server.request('POST', '/api/v1/enrollments', { json: enrollment(), idempotencyKey: key });
    const token = res.json().token as string;
    const accountKey = randomKey();
    expect(
      (
        await server.request('POST', '/api/v1/accounts', {
          json: { email: 'erased@example.com' },
          idempotencyKey: accountKey,
        })
      ).status,
    ).toBe(201);
    server.clock.advance(11 * 60_000);
    await server.services.housekeeping.runAll();
    for (const k of [key, accountKey]) {
      const row = await server.services.store.db
        .selectFrom('idempotency_records')
        .selectAll()
        .where('key', '=', k)
        .executeTakeFirstOrThrow();
      expect(row.body).toBeNull();
    }
    const raw = server.services.store.db.selectFrom('credentials').select('token_hash');
    expect(JSON.stringify(await raw.execute())).not.toContain(token);
  });

  it('gates enrollment with the beta key when one is configured', async () => {
    const gated = await TestServer.start({ config: { betaKey: 'let-me-in' } });
    try {
      const missing = await gated.request('POST', '/api/v1/enrollments', {
        json: enrollment(),
        idempotencyKey: randomKey(),
      });
      expect(missing.status).toBe(400);
      expect(missing.json().errors[0].field).toBe('beta_key');
      const wrong = await gated.request('POST', '/api/v1/enrollments', {
        json: enrollment({ beta_key: 'guess' }),
        idempotencyKey: randomKey(),
      });
      expect(wrong.status).toBe(403);
      const right = await gated.request('POST', '/api/v1/enrollments', {
        json: enrollment({ beta_key: 'let-me-in' }),
        idempotencyKey: randomKey(),
      });
      expect(right.status).toBe(201);
    } finally {
      await gated.stop();
    }
  });
});

describe('projects', () => {
  it('reads and renames the project, bumping the revision by one, and nothing for its current name', async () => {
    const { token, projectId } = await server.enroll();
    const before = await server.request('GET', '/api/v1/project', { token });
    expect(before.headers.etag).toBe('"1"');
    const patched = await server.request('PATCH', '/api/v1/project', { token, json: { name: 'Cafe screens' } });
    expect(patched.status).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'Cafe screens', revision: 2 });
    expect(patched.headers.etag).toBe('"2"');
    const events = () =>
      server.services.store.db
        .selectFrom('events')
        .select('type')
        .where('tenant_id', '=', projectId)
        .where('type', '=', 'project.updated')
        .execute();
    const seen = (await events()).length;
    expect(seen).toBe(1);
    const same = await server.request('PATCH', '/api/v1/project', {
      token,
      json: { name: 'Cafe screens' },
      ifMatch: 2,
    });
    expect(same.status).toBe(200);
    expect(same.json()).toMatchObject({ name: 'Cafe screens', revision: 2 });
    expect(same.headers.etag).toBe('"2"');
    expect(await events()).toHaveLength(seen);
  });

  it('treats If-Match as optional for a project bearer but refuses a stale one', async () => {
    const { token } = await server.enroll();
    const stale = await server.request('PATCH', '/api/v1/project', { token, json: { name: 'X' }, ifMatch: 7 });
    expect(stale.status).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'revision_conflict', current_revision: 1 });
  });

  it('shows capabilities with the plan and the effective areas', async () => {
    const { token } = await server.enroll({ intent: 'advertising' });
    const res = await server.request('GET', '/api/v1/project/capabilities', { token });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      plan: 'advertising',
      independent_advertiser: false,
      screens: true,
      revision: 1,
    });
    expect(res.json().effective).toEqual(['screens', 'content', 'playlists', 'advertising', 'reports', 'project']);
  });
});

describe('credential realms', () => {
  it('answers 401 without a bearer and for an unknown one', async () => {
    expect((await server.request('GET', '/api/v1/project')).status).toBe(401);
    const res = await server.request('GET', '/api/v1/project', { token: 'mq_proj_not-a-real-token' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('Bearer');
  });

  it('never lets an account bearer use a project route, or a project bearer an account route', async () => {
    const account = await server.createAccount();
    const project = await server.enroll();
    expect((await server.request('GET', '/api/v1/project', { token: account.token })).status).toBe(403);
    const ack = await server.request('POST', '/api/v1/account/credential-issuances/iss_x/ack', {
      token: project.token,
    });
    expect(ack.status).toBe(403);
  });

  it('ignores cookies on the control plane, even a valid runtime cookie of a paired screen', async () => {
    const owner = await server.enroll();
    const { screen, cookies } = await pairActiveScreen(server, owner.token);
    expect((await server.request('POST', '/runtime/v1/device-sessions', { cookies })).status).toBe(201);
    expect(cookies.get(server.host, RUNTIME_COOKIE)).toBeDefined();
    expect((await server.request('GET', '/test/runtime-whoami', { cookies })).json()).toEqual({ screen: screen.id });
    for (const path of ['/api/v1/project', '/api/v1/screens', `/api/v1/screens/${screen.id}`]) {
      const res = await server.request('GET', path, { cookies });
      expect(res.status, path).toBe(401);
    }
    // With a bearer as well, the bearer alone decides who is asking.
    const other = await server.enroll();
    expect((await server.request('GET', `/api/v1/screens/${screen.id}`, { token: other.token, cookies })).status).toBe(
      404,
    );
  });

  it('stores only hashes of bearer tokens and never logs them', async () => {
    const { token } = await server.enroll();
    await server.request('GET', '/api/v1/project', { token });
    const rows = await server.services.store.db.selectFrom('credentials').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(server.logText()).not.toContain(token);
  });
});

describe('credit meter', () => {
  it('debits 1 credit per metered request and shows it in the headers', async () => {
    const { token } = await server.enroll();
    const first = await server.request('GET', '/api/v1/project/capabilities', { token });
    expect(first.headers['marquee-credits-remaining']).toBe('9999');
    expect(first.headers['marquee-credits-included']).toBe('10000');
    expect(first.headers['marquee-credits-reset']).toBe('2026-12-01T00:00:00.000Z');
    const second = await server.request('GET', '/api/v1/project/capabilities', { token });
    expect(second.headers['marquee-credits-remaining']).toBe('9998');
  });

  it('does not debit the project read, but still shows the balance', async () => {
    const { token } = await server.enroll();
    const a = await server.request('GET', '/api/v1/project', { token });
    const b = await server.request('GET', '/api/v1/project', { token });
    expect(a.headers['marquee-credits-remaining']).toBe('10000');
    expect(b.headers['marquee-credits-remaining']).toBe('10000');
  });

  it('puts credit headers on problems of authenticated Model P requests', async () => {
    const { token } = await server.enroll();
    const res = await server.request('PATCH', '/api/v1/project', { token, json: { name: '' } });
    expect(res.status).toBe(400);
    expect(res.headers['marquee-credits-remaining']).toBeDefined();
  });

  it('omits credit headers for Model A and unauthenticated requests', async () => {
    const account = await server.createAccount();
    expect(
      (await server.request('GET', '/api/v1/account', { token: account.token })).headers['marquee-credits-remaining'],
    ).toBeUndefined();
    expect((await server.request('GET', '/api/v1/capabilities')).headers['marquee-credits-remaining']).toBeUndefined();
    expect((await server.request('GET', '/api/v1/project')).headers['marquee-credits-remaining']).toBeUndefined();
  });

  it('records debits in the ledger in millicredits', async () => {
    const { token, projectId } = await server.enroll();
    await server.request('GET', '/api/v1/project/capabilities', { token });
    await server.request('GET', '/api/v1/project/capabilities', { token });
    const row = await server.services.store.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('tenant_id', '=', projectId)
      .where('kind', '=', 'api_request')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ millis: -2000, count: 2, day: '2026-11-21' });
  });

  it('allows a negative balance down to the floor of -1,000,000 credits before 2027, shown as 0', async () => {
    const { token, projectId } = await server.enroll();
    await server.services.store.db
      .updateTable('tenants')
      .set({ credit_millis: -500_000_000 })
      .where('id', '=', projectId)
      .execute();
    const res = await server.request('GET', '/api/v1/project/capabilities', { token });
    expect(res.status).toBe(200);
    expect(res.headers['marquee-credits-remaining']).toBe('0');
    await server.services.store.db
      .updateTable('tenants')
      .set({ credit_millis: -1_000_000_000 + 999 })
      .where('id', '=', projectId)
      .execute();
    const refused = await server.request('GET', '/api/v1/project/capabilities', { token });
    expect(refused.status).toBe(402);
    expect(refused.json().code).toBe('payment_required');
  });

  it('debits with one UPDATE … RETURNING and the ledger upsert, reading nothing of the tenant again', async () => {
    const clock = new TestClock('2026-11-21T12:00:00Z');
    const s = await TestServer.start({ clock });
    try {
      const { token, projectId } = await s.enroll();
      const statements: string[] = [];
      const counter = {
        transformQuery(args: {
          node: { kind: string; from?: unknown; table?: unknown; into?: unknown; sqlFragments?: string[] };
        }) {
          const { node } = args;
          const on =
            node.kind === 'RawNode'
              ? (node.sqlFragments?.join('').match(/update ([a-z_]+)/)?.[1] ?? 'other')
              : JSON.stringify(node.from ?? node.table ?? node.into ?? null).match(/"name":"([a-z_]+)"/)?.[1];
          statements.push(`${node.kind} ${on}`);
          return node;
        },
        async transformResult(args: { result: unknown }) {
          return args.result;
        },
      };
      const store = s.services.store as unknown as { db: unknown };
      const plain = store.db;
      store.db = s.services.store.db.withPlugin(counter as never);
      const metered = async () => {
        statements.length = 0;
        const res = await s.request('GET', '/api/v1/screens', { token });
        expect(res.status).toBe(200);
        return res;
      };
      try {
        // This month's grant is in (the bearer query read its month): the debit is the only tenant statement.
        const first = await metered();
        if (s.services.store.driver.engine === 'postgres') {
          // There the debit and its ledger row are one statement (request-meter.ts), and nothing reads the tenant.
          expect(statements.filter((q) => q.endsWith(' tenants') || q.endsWith(' credit_ledger'))).toEqual([
            'RawNode tenants',
          ]);
        } else {
          expect(statements.filter((q) => q.endsWith(' tenants'))).toEqual(['UpdateQueryNode tenants']);
          expect(statements.filter((q) => q.endsWith(' credit_ledger'))).toEqual(['InsertQueryNode credit_ledger']);
        }
        expect(first.headers['marquee-credits-remaining']).toBe('9999');
        // A new month: one conditional UPDATE adds the grant, still without reading the tenant.
        clock.set('2026-12-01T00:00:01Z');
        const december = await metered();
        expect(statements.filter((q) => q.endsWith(' tenants'))).toEqual([
          'UpdateQueryNode tenants',
          'UpdateQueryNode tenants',
        ]);
        expect(december.headers['marquee-credits-remaining']).toBe(String(9999 + 10000 - 1));
        // The reset instant follows the month it is asked in (it is kept per month).
        expect(first.headers['marquee-credits-reset']).toBe('2026-12-01T00:00:00.000Z');
        expect(december.headers['marquee-credits-reset']).toBe('2027-01-01T00:00:00.000Z');
      } finally {
        store.db = plain;
      }
      // A month's grant is added once, even by concurrent requests that both saw last month's grant.
      const { db } = s.services.store;
      await db.updateTable('tenants').set({ credit_grant_month: '2026-11' }).where('id', '=', projectId).execute();
      const [a, b] = await Promise.all([
        s.request('GET', '/api/v1/screens', { token }),
        s.request('GET', '/api/v1/screens', { token }),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect((await s.request('GET', '/api/v1/project', { token })).json().credit_remaining).toBe(
        9999 + 10000 - 1 + 10000 - 2,
      );
      const grants = await db
        .selectFrom('credit_ledger')
        .selectAll()
        .where('tenant_id', '=', projectId)
        .where('kind', '=', 'included_grant')
        .where('day', '=', '2026-12-01')
        .executeTakeFirstOrThrow();
      expect(grants.count).toBe(2);
    } finally {
      await s.stop();
    }
  });

  it('moves the floor to zero on 2027-01-01 and grants the included credits each month', async () => {
    const clock = new TestClock('2026-12-31T23:59:00Z');
    const s = await TestServer.start({ clock });
    try {
      const { token, projectId } = await s.enroll();
      await s.services.store.db
        .updateTable('tenants')
        .set({ credit_millis: -5_000_000 })
        .where('id', '=', projectId)
        .execute();
      expect((await s.request('GET', '/api/v1/project/capabilities', { token })).status).toBe(200);
      clock.set('2027-01-01T00:00:01Z');
      // The January grant (+10,000) lands first: -5,001 + 10,000 = 4,999 remaining, then the debit.
      const january = await s.request('GET', '/api/v1/project/capabilities', { token });
      expect(january.status).toBe(200);
      expect(january.headers['marquee-credits-remaining']).toBe('4998');
      await s.services.store.db
        .updateTable('tenants')
        .set({ credit_millis: 500 })
        .where('id', '=', projectId)
        .execute();
      expect((await s.request('GET', '/api/v1/project/capabilities', { token })).status).toBe(402);
    } finally {
      await s.stop();
    }
  });
});
