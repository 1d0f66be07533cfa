import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TestServer, randomKey } from '../testing/harness';
import { anyBearer } from './auth';
import type { RouteEntry } from './dispatch';
import { canonicalJson } from './idempotency';
import { problem } from '../problem';
import { MAX_RATE_KEY_CHARS, MemoryRateLimiter } from './rate-limit';
import { MAX_JSON_DEPTH } from './validation';
import { mutation, query, reply } from './route';

let executions = 0;
let slowExecutions = 0;

const extraRoutes: RouteEntry[] = [
  {
    plane: 'control',
    method: 'GET',
    path: '/test/boom',
    route: query({}, async () => {
      throw new Error('leaky internals at /etc/marquee/secret.key');
    }),
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/test/echo',
    route: mutation(
      {
        body: z.strictObject({ name: z.string().min(1), nested: z.strictObject({ n: z.number() }).optional() }),
        idempotency: 'required',
      },
      async (ctx) => {
        executions++;
        return reply.created({ name: ctx.body.name, execution: executions }, { headers: { Location: '/test/echo/1' } });
      },
    ),
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/test/slow',
    route: mutation({ idempotency: 'required' }, async () => {
      slowExecutions++;
      await new Promise((r) => setTimeout(r, 150));
      return reply.created({ execution: slowExecutions });
    }),
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/test/limited',
    route: mutation({ rateLimits: () => [{ name: 'test-budget', limit: 2, windowSeconds: 60, key: 'k' }] }, async () =>
      reply.noContent(),
    ),
  },
  {
    plane: 'control',
    method: 'PUT',
    path: '/test/revisioned',
    route: mutation({ ifMatch: 'required' }, async (ctx) => {
      ctx.checkRevision(3);
      return reply.ok({ ok: true }, { revision: 4 });
    }),
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/test/failing-effect',
    route: mutation({ idempotency: 'required' }, async () => {
      throw problem('resource_conflict', 'refused');
    }),
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/test/one-time',
    route: mutation({ idempotency: { mode: 'required', eraseBodyAfterMs: 60_000 } }, async () =>
      reply.created({ secret: 'one-time-value' }),
    ),
  },
  {
    plane: 'control',
    method: 'GET',
    path: '/test/whoami',
    route: query({ auth: anyBearer, area: 'screens' }, async (ctx) => reply.ok({ tenant: ctx.principal.tenantId })),
  },
  {
    plane: 'control',
    method: 'GET',
    path: '/test/unanswerable',
    // A header value Node refuses to write: the problem answer itself throws.
    route: query({}, async () => {
      throw problem('invalid_request', 'no', { headers: { 'X-Broken': 'a\nb' } });
    }),
  },
  {
    plane: 'control',
    method: 'GET',
    path: '/test/messages',
    route: query({}, async (ctx) =>
      reply.ok({
        request: Object.getPrototypeOf(ctx.req).constructor.name,
        response: Object.getPrototypeOf(ctx.res).constructor.name,
        host: ctx.req.get('host'),
      }),
    ),
  },
];

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start({ extraRoutes });
});
afterAll(async () => server.stop());

describe('problems', () => {
  it('renders RFC 9457 problems with code, type URI, request id and errors', async () => {
    const res = await server.request('GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const body = res.json();
    expect(body).toMatchObject({
      type: `${server.origin}/problems/not-found`,
      title: 'Resource not found',
      status: 404,
      code: 'not_found',
      instance: '/api/v1/nothing-here',
      errors: [],
    });
    expect(body.request_id).toBe(res.headers['x-request-id']);
  });

  it('echoes a well-formed X-Request-Id', async () => {
    const id = 'req_abcdefghijklmnopqrstu';
    const res = await server.request('GET', '/nope/nope.txt', { headers: { 'x-request-id': id } });
    expect(res.headers['x-request-id']).toBe(id);
  });

  it('answers a wrong method with method_not_allowed and Allow', async () => {
    const res = await server.request('POST', '/.version');
    expect(res.status).toBe(405);
    expect(res.json().code).toBe('method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('turns an unexpected error into internal_error without leaking internals', async () => {
    const res = await server.request('GET', '/test/boom');
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('internal_error');
    expect(res.text).not.toContain('/etc/marquee');
    expect(res.text).not.toContain('leaky');
    expect(server.logText()).toContain('leaky internals');
  });

  it('serves a page for each problem type URI', async () => {
    const res = await server.request('GET', '/problems/revision-conflict');
    expect(res.status).toBe(200);
    expect(res.text).toContain('revision_conflict');
    expect(res.text).toContain('412');
  });

  it('answers HEAD on GET routes without a body', async () => {
    const res = await server.request('HEAD', '/.version');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
  });
});

describe('strict JSON validation', () => {
  it('names an unknown field', async () => {
    const res = await server.request('POST', '/test/echo', {
      json: { name: 'a', colour: 'red' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid_request');
    expect(body.errors).toContainEqual({ field: 'colour', code: 'unknown_field', detail: 'unknown field "colour"' });
  });

  it('names an unknown nested field by its path', async () => {
    const res = await server.request('POST', '/test/echo', {
      json: { name: 'a', nested: { n: 1, m: 2 } },
      idempotencyKey: randomKey(),
    });
    expect(res.json().errors[0].field).toBe('nested.m');
  });

  it('names a missing required field', async () => {
    const res = await server.request('POST', '/test/echo', { json: {}, idempotencyKey: randomKey() });
    expect(res.status).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ field: 'name', code: 'required' });
  });

  it('tells a field of the wrong type from a missing one', async () => {
    const wrong = await server.request('POST', '/test/echo', { json: { name: 5 }, idempotencyKey: randomKey() });
    expect(wrong.status).toBe(400);
    expect(wrong.json().errors[0]).toMatchObject({ field: 'name', code: 'invalid_type' });
    expect(wrong.json().detail).toBe('name: Invalid input: expected string, received number');
    const nested = await server.request('POST', '/test/echo', {
      json: { name: 'a', nested: { n: 'x' } },
      idempotencyKey: randomKey(),
    });
    expect(nested.json().errors[0]).toMatchObject({ field: 'nested.n', code: 'invalid_type' });
    const missing = await server.request('POST', '/test/echo', {
      json: { name: 'a', nested: {} },
      idempotencyKey: randomKey(),
    });
    expect(missing.json().errors[0]).toMatchObject({ field: 'nested.n', code: 'required', detail: 'is required' });
  });

  it('refuses malformed JSON as invalid_request', async () => {
    const res = await server.request('POST', '/test/echo', {
      body: '{"name": ',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors[0].code).toBe('malformed_json');
  });

  it('never quotes the body back in a malformed JSON problem (it may hold a password), and says where it broke', async () => {
    const secret = 'hunter2-secret-pw';
    for (const body of [`{"name":"a","password":${secret}}`, `{"password":"${secret}`, `{"password":"${secret}",}`]) {
      const res = await server.request('POST', '/test/echo', {
        body,
        headers: { 'content-type': 'application/json' },
        idempotencyKey: randomKey(),
      });
      expect(res.status).toBe(400);
      expect(res.json().errors[0].code).toBe('malformed_json');
      expect(res.text).not.toContain('hunter2');
      expect(res.json().detail).toMatch(/^malformed JSON/);
    }
    const early = await server.request('POST', '/test/echo', {
      body: '{"name": ',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(early.json().detail).toBe('malformed JSON: the body ends early');
  });

  it('refuses a string holding a lone surrogate rather than storing it mangled, and takes a pair', async () => {
    for (const name of ['\\ud800', 'a\\uDC00b', '\\ud83d']) {
      const res = await server.request('POST', '/test/echo', {
        body: `{"name":"${name}"}`,
        headers: { 'content-type': 'application/json' },
        idempotencyKey: randomKey(),
      });
      expect(res.status, name).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ field: 'body', code: 'invalid_unicode' });
    }
    const key = await server.request('POST', '/test/echo', {
      body: '{"name":"a","\\udfff":1}',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(key.json().errors[0].code).toBe('invalid_unicode');
    const pair = await server.request('POST', '/test/echo', {
      body: '{"name":"\\ud83d\\ude00 ok"}',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(pair.status).toBe(201);
    expect(pair.json().name).toBe('😀 ok');
  });

  it('skips a leading byte order mark, and refuses one anywhere else', async () => {
    const bom = '\uFEFF';
    const leading = await server.request('POST', '/test/echo', {
      body: `${bom}{"name":"a"}`,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(leading.status).toBe(201);
    const inside = await server.request('POST', '/test/echo', {
      body: `{${bom}"name":"a"}`,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(inside.status).toBe(400);
    expect(inside.json().errors[0].code).toBe('malformed_json');
  });

  it('refuses a body that is not UTF-8', async () => {
    const res = await server.request('POST', '/test/echo', {
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().detail).toBe('the body is not valid UTF-8');
  });

  it('refuses a body sent with a Content-Encoding, which it would otherwise read as the body', async () => {
    const res = await server.request('POST', '/test/echo', {
      json: { name: 'a' },
      headers: { 'content-encoding': 'br' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ field: 'Content-Encoding', code: 'unsupported' });
    const identity = await server.request('POST', '/test/echo', {
      json: { name: 'a' },
      headers: { 'content-encoding': 'identity' },
      idempotencyKey: randomKey(),
    });
    expect(identity.status).toBe(201);
  });

  it('refuses a non-JSON content type', async () => {
    const res = await server.request('POST', '/test/echo', {
      body: 'name=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
  });

  it('refuses a body over the route limit without reading it all', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(70 * 1024) });
    const res = await server.request('POST', '/test/echo', {
      body: big,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ field: 'body', code: 'too_large' });
  });

  const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

  it.each([
    ['with an Idempotency-Key (fingerprinted before validation)', '/test/echo', true],
    ['on an anonymous route', '/api/v1/enrollments', true],
    ['without a key', '/api/v1/accounts', false],
  ])('refuses JSON nested past the depth limit %s as invalid_request, never a 500', async (_what, path, withKey) => {
    const before = server.logs.filter((l) => l.includes('unexpected error')).length;
    // 64,000 bytes: under the 64 KiB limit, and deep enough to overflow any recursive walker.
    const res = await server.request('POST', path, {
      body: nested(32_000),
      headers: { 'content-type': 'application/json' },
      ...(withKey ? { idempotencyKey: randomKey() } : {}),
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ field: 'body', code: 'too_deep' }] });
    expect(res.json().detail).toContain(`${MAX_JSON_DEPTH} levels`);
    expect(server.logs.filter((l) => l.includes('unexpected error')).length).toBe(before);
  });

  it('counts only brackets outside strings, and takes exactly the limit', async () => {
    // The limit itself passes the depth check (and reaches the schema); one more is refused.
    const atLimit = `{"name":"a","nested":${nested(MAX_JSON_DEPTH - 1, '{"x":', '}')}}`;
    const res = await server.request('POST', '/test/echo', {
      body: atLimit,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(res.json().errors[0].code).not.toBe('too_deep');
    const past = `{"name":"a","nested":${nested(MAX_JSON_DEPTH, '{"x":', '}')}}`;
    const refused = await server.request('POST', '/test/echo', {
      body: past,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(refused.json().errors[0].code).toBe('too_deep');
    // Brackets and escaped quotes inside a string are text, not nesting.
    const inString = JSON.stringify({ name: `\\"${'['.repeat(5000)}{{{` });
    const ok = await server.request('POST', '/test/echo', {
      body: inString,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: randomKey(),
    });
    expect(ok.status, ok.text).toBe(201);
  });

  it('refuses a body on a route that takes none', async () => {
    const res = await server.request('POST', '/test/slow', { json: { surprise: true }, idempotencyKey: randomKey() });
    expect(res.status).toBe(400);
  });
});

describe('idempotency records', () => {
  it('replays an exact retry with the recorded status, headers and body, without re-executing', async () => {
    const key = randomKey();
    const first = await server.request('POST', '/test/echo', { json: { name: 'once' }, idempotencyKey: key });
    expect(first.status).toBe(201);
    const count = executions;
    // Same request, different formatting and key order.
    const again = await server.request('POST', '/test/echo', {
      body: '{ "name" :   "once" }',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: key,
    });
    expect(again.status).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(again.headers.location).toBe('/test/echo/1');
    expect(executions).toBe(count);
  });

  it('replays a retry that spells its path in another case: the record is the route’s, not the spelling’s', async () => {
    const key = randomKey();
    const first = await server.request('POST', '/test/echo', { json: { name: 'cased' }, idempotencyKey: key });
    expect(first.status).toBe(201);
    const count = executions;
    const again = await server.request('POST', '/TEST/Echo', { json: { name: 'cased' }, idempotencyKey: key });
    expect(again.status).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(executions).toBe(count);
  });

  it('refuses the same key with a different request as idempotency_mismatch', async () => {
    const key = randomKey();
    await server.request('POST', '/test/echo', { json: { name: 'one' }, idempotencyKey: key });
    const res = await server.request('POST', '/test/echo', { json: { name: 'two' }, idempotencyKey: key });
    expect(res.status).toBe(409);
    expect(res.json().code).toBe('idempotency_mismatch');
  });

  it('requires the key where the route says so, and bounds its length to 8..200', async () => {
    expect((await server.request('POST', '/test/echo', { json: { name: 'a' } })).json().errors[0]).toMatchObject({
      field: 'Idempotency-Key',
      code: 'required',
    });
    expect((await server.request('POST', '/test/echo', { json: { name: 'a' }, idempotencyKey: 'short' })).status).toBe(
      400,
    );
    expect(
      (await server.request('POST', '/test/echo', { json: { name: 'a' }, idempotencyKey: 'k'.repeat(201) })).status,
    ).toBe(400);
    expect(
      (await server.request('POST', '/test/echo', { json: { name: 'a' }, idempotencyKey: 'k'.repeat(200) })).status,
    ).toBe(201);
    expect(
      (await server.request('POST', '/test/echo', { json: { name: 'a' }, idempotencyKey: 'k'.repeat(8) })).status,
    ).toBe(201);
  });

  it('runs concurrent duplicates once and answers both with the same result', async () => {
    const key = randomKey();
    const before = slowExecutions;
    const results = await Promise.all(
      Array.from({ length: 5 }, () => server.request('POST', '/test/slow', { idempotencyKey: key })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(slowExecutions).toBe(before + 1);
  });

  it('does not record a failed request, so it has no effect and may be retried', async () => {
    const key = randomKey();
    expect((await server.request('POST', '/test/failing-effect', { idempotencyKey: key })).status).toBe(409);
    expect((await server.request('POST', '/test/failing-effect', { idempotencyKey: key })).json().code).toBe(
      'resource_conflict',
    );
  });

  it('forgets records after 24 hours', async () => {
    const key = randomKey();
    const first = await server.request('POST', '/test/echo', { json: { name: 'old' }, idempotencyKey: key });
    server.clock.advance(24 * 3600_000 + 1);
    const later = await server.request('POST', '/test/echo', { json: { name: 'old' }, idempotencyKey: key });
    expect(later.json().execution).toBe(first.json().execution + 1);
  });

  it('erases a recorded body after the route window, keeping the record and other bodies', async () => {
    const [oneTime, plain] = [randomKey(), randomKey()];
    await server.request('POST', '/test/one-time', { idempotencyKey: oneTime });
    await server.request('POST', '/test/echo', { json: { name: 'kept' }, idempotencyKey: plain });
    const body = async (key: string) =>
      (
        await server.services.store.db
          .selectFrom('idempotency_records')
          .select('body')
          .where('key', '=', key)
          .executeTakeFirstOrThrow()
      ).body;
    server.clock.advance(59_000);
    await server.services.housekeeping.runAll();
    expect(await body(oneTime)).not.toBeNull();
    server.clock.advance(1_000);
    await server.services.housekeeping.runAll();
    expect(await body(oneTime)).toBeNull();
    expect(await body(plain)).not.toBeNull();
  });

  it('fingerprints with a canonical form that no nesting overflows and that matches the recursive one', () => {
    const deep: unknown[] = [];
    let cursor = deep;
    for (let i = 0; i < 200_000; i++) cursor.push((cursor = []));
    expect(canonicalJson(deep)).toBe('['.repeat(200_001) + ']'.repeat(200_001));
    // The same text as before the iterative form, so recorded fingerprints stay valid.
    expect(
      canonicalJson([
        'POST',
        '/p',
        '',
        { b: [1, { d: null, c: 'x' }], a: undefined, é: true, z: {} },
        null,
        [['x-h', null]],
      ]),
    ).toBe('["POST","/p","",{"b":[1,{"c":"x","d":null}],"z":{},"é":true},null,[["x-h",null]]]');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  it('keeps records apart per tenant scope', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    const key = randomKey();
    const pa = await server.request('PATCH', '/api/v1/project', {
      token: a.token,
      json: { name: 'Alpha' },
      idempotencyKey: key,
    });
    const pb = await server.request('PATCH', '/api/v1/project', {
      token: b.token,
      json: { name: 'Beta' },
      idempotencyKey: key,
    });
    expect(pa.json().name).toBe('Alpha');
    expect(pb.json().name).toBe('Beta');
  });
});

describe('revisions', () => {
  it('answers a stale If-Match with 412 revision_conflict and current_revision', async () => {
    const res = await server.request('PUT', '/test/revisioned', { ifMatch: 2 });
    expect(res.status).toBe(412);
    expect(res.json()).toMatchObject({ code: 'revision_conflict', current_revision: 3 });
  });

  it('sets the ETag to the quoted revision on success', async () => {
    const res = await server.request('PUT', '/test/revisioned', { ifMatch: 3 });
    expect(res.headers.etag).toBe('"4"');
  });

  it('requires If-Match where the route says so and rejects malformed values', async () => {
    expect((await server.request('PUT', '/test/revisioned')).json().errors[0]).toMatchObject({
      field: 'If-Match',
      code: 'required',
    });
    expect((await server.request('PUT', '/test/revisioned', { ifMatch: 'W/"3"' })).status).toBe(400);
    expect((await server.request('PUT', '/test/revisioned', { ifMatch: '"0"' })).status).toBe(400);
  });
});

describe('rate budgets', () => {
  it('discloses RateLimit headers and refuses past the budget with Retry-After', async () => {
    const ok = await server.request('POST', '/test/limited');
    expect(ok.status).toBe(204);
    expect(ok.headers['ratelimit-policy']).toBe('"test-budget";q=2;w=60');
    expect(ok.headers.ratelimit).toMatch(/^"test-budget";r=1;t=\d+$/);
    await server.request('POST', '/test/limited');
    const denied = await server.request('POST', '/test/limited');
    expect(denied.status).toBe(429);
    expect(denied.json().code).toBe('rate_limited');
    expect(Number(denied.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(denied.headers.ratelimit).toMatch(/r=0/);
  });
});

describe('the rate budget table', () => {
  const budget = (key: string, windowSeconds = 60) => ({ name: 'b', limit: 2, windowSeconds, key });
  /** Characters of keys held (the table is private: this is what its memory grows with). */
  const keyChars = (limiter: MemoryRateLimiter) =>
    [...(limiter as unknown as { windows: Map<string, unknown> }).windows.keys()].reduce((n, k) => n + k.length, 0);

  it('holds a long key as a fixed-size digest, still counting it apart from others', async () => {
    const limiter = new MemoryRateLimiter();
    const long = 'x'.repeat(60_000);
    expect((await limiter.take(budget(long), 0)).allowed).toBe(true);
    expect((await limiter.take(budget(long), 0)).allowed).toBe(true);
    expect((await limiter.take(budget(long), 0)).allowed).toBe(false);
    expect((await limiter.take(budget(`${long}y`), 0)).allowed).toBe(true);
    expect(keyChars(limiter)).toBeLessThan(2 * (MAX_RATE_KEY_CHARS + 8));
  });

  it('drops a window once it has ended, not a day later', async () => {
    const limiter = new MemoryRateLimiter();
    for (let i = 0; i < 100; i++) await limiter.take(budget(`minute-${i}`), 0);
    await limiter.take(budget('hour', 3600), 0);
    expect(limiter.size).toBe(101);
    await limiter.take(budget('later'), 61_000); // one-minute windows are over; the hour is not
    expect(limiter.size).toBe(2);
  });

  it('never holds more windows than its cap, letting the oldest go', async () => {
    const limiter = new MemoryRateLimiter(50);
    for (let i = 0; i < 1000; i++) await limiter.take(budget(`k${i}`, 3600), i);
    expect(limiter.size).toBe(50);
    // The newest are still counted.
    await limiter.take(budget('k999', 3600), 1000);
    expect((await limiter.take(budget('k999', 3600), 1000)).allowed).toBe(false);
  });
});

describe('capability areas', () => {
  it('refuses a route outside the credential areas with a forbidden problem naming the area', async () => {
    const { token, projectId } = await server.enroll();
    const db = server.services.store.db;
    await db
      .updateTable('credentials')
      .set({ areas: JSON.stringify(['content']) })
      .where('tenant_id', '=', projectId)
      .execute();
    const res = await server.request('GET', '/test/whoami', { token });
    expect(res.status).toBe(403);
    expect(res.json().detail).toContain('"screens"');
  });

  it('meters an area refusal like any other refusal: the 403 carries the credit headers (spec Authentication rule 6)', async () => {
    const { token, projectId } = await server.enroll();
    const { db } = server.services.store;
    await db
      .updateTable('credentials')
      .set({ areas: JSON.stringify(['content']) })
      .where('tenant_id', '=', projectId)
      .execute();
    const before = Number(
      (await server.request('GET', '/api/v1/media', { token })).headers['marquee-credits-remaining'],
    );
    const refused = await server.request('GET', '/api/v1/playlists', { token });
    expect(refused.status).toBe(403);
    expect(refused.json().missing_capability).toBe('playlists');
    expect(refused.headers['marquee-credits-remaining']).toBe(String(before - 1));
    expect(refused.headers['marquee-credits-included']).toBe('10000');
    expect(refused.headers['marquee-credits-reset']).toBeDefined();

    await db.updateTable('tenants').set({ plan: 'platinum-legacy' }).where('id', '=', projectId).execute();
    const unknownPlan = await server.request('GET', '/api/v1/media', { token });
    expect(unknownPlan.status).toBe(403);
    expect(unknownPlan.headers['marquee-credits-remaining']).toBe(String(before - 2));
    expect(unknownPlan.headers['marquee-credits-included']).toBe('0');
  });

  it('lets the reports area read any area', async () => {
    const { token, projectId } = await server.enroll();
    await server.services.store.db
      .updateTable('credentials')
      .set({ areas: JSON.stringify(['reports']) })
      .where('tenant_id', '=', projectId)
      .execute();
    expect((await server.request('GET', '/test/whoami', { token })).status).toBe(200);
  });

  it('fails closed when the plan is not in the catalog', async () => {
    const { token, projectId } = await server.enroll();
    await server.services.store.db
      .updateTable('tenants')
      .set({ plan: 'platinum-legacy' })
      .where('id', '=', projectId)
      .execute();
    const res = await server.request('GET', '/test/whoami', { token });
    expect(res.status).toBe(403);
    expect(res.json().detail).toContain('platinum-legacy');
    expect((await server.request('GET', '/api/v1/project/capabilities', { token })).status).toBe(403);
  });
});

describe('requests and responses', () => {
  it('end the connection of a request whose answer cannot be written, and the server stays up', async () => {
    await expect(server.request('GET', '/test/unanswerable')).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect((await server.request('GET', '/.health')).status).toBe(200);
  });

  it('end the connection of a request the app throws on outside any route, and the server stays up', async () => {
    const app = server.server.app as unknown as { handle: (...args: unknown[]) => void };
    const handle = app.handle;
    app.handle = () => {
      throw new Error('the app failed before any route');
    };
    try {
      await expect(server.request('GET', '/.health')).rejects.toThrow(/socket hang up|ECONNRESET/);
    } finally {
      app.handle = handle;
    }
    expect((await server.request('GET', '/.health')).status).toBe(200);
  });

  it('are built with Express’s helpers by the server, not given them one by one (D-387)', async () => {
    const res = await server.request('GET', '/test/messages');
    expect(res.json()).toEqual({ request: 'ExpressRequest', response: 'ExpressResponse', host: server.host });
  });
});

describe('the credit meter', () => {
  it('charges a request whatever the case of its path (routes match ignoring case)', async () => {
    const { token } = await server.enroll();
    const remaining = [];
    for (const path of ['/api/v1/screens', '/API/V1/SCREENS', '/Api/v1/Screens']) {
      const res = await server.request('GET', path, { token });
      expect(res.status).toBe(200);
      remaining.push(Number(res.headers['marquee-credits-remaining']));
    }
    expect(remaining[1]).toBe(remaining[0]! - 1);
    expect(remaining[2]).toBe(remaining[0]! - 2);
  });

  it('answers 500 to every request whose debit failed in the database, and charges none of them', async () => {
    const { token, projectId } = await server.enroll();
    const { store } = server.services;
    const credits = async () =>
      (
        await store.db
          .selectFrom('tenants')
          .select('credit_millis')
          .where('id', '=', projectId)
          .executeTakeFirstOrThrow()
      ).credit_millis;
    const before = await credits();
    const transaction = store.transaction;
    const original = transaction.bind(store);
    // Every transaction rolls back after its writes, as a full disk would make it (the meter's are the only ones here).
    store.transaction = (fn) =>
      original(async (work) => {
        await fn(work);
        throw new Error('SQLITE_FULL: database or disk is full');
      });
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 5 }, () => server.request('GET', '/api/v1/screens', { token })));
    } finally {
      store.transaction = transaction;
    }
    for (const res of answers) {
      expect(res.status).toBe(500);
      expect(res.json().code).toBe('internal_error');
      expect(res.text).not.toContain('SQLITE_FULL');
      expect(res.headers['marquee-credits-remaining']).toBe(String(Math.floor(before / 1000)));
    }
    expect(await credits()).toBe(before);
    const ok = await server.request('GET', '/api/v1/screens', { token });
    expect(ok.status).toBe(200);
    expect(await credits()).toBeLessThan(before);
  });
});
