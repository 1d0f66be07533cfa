import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveOf, sampleApp, uploadHeadersOf } from '../applications/archive-fixtures';
import { TestClock } from '../clock';
import { declare, image, put, sha256 } from '../media/media.fixtures';
import { TestServer, randomKey } from '../testing/harness';
import {
  BODY_IDLE_TIMEOUT_MS,
  JSON_BODY_MIN_BYTES_PER_SECOND,
  JSON_BODY_MIN_DEADLINE_MS,
  jsonBodyDeadlineMs,
} from './body-progress';
import { HEADERS_TIMEOUT_MS } from './edge';

const IDLE_MS = 300;
const DEADLINE_MS = 900;
let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await TestServer.start({
    clock: new TestClock('2026-11-21T12:00:00Z'),
    tuning: { bodyIdleTimeoutMs: IDLE_MS, jsonBodyDeadlineMs: DEADLINE_MS },
  });
  ({ token } = await server.enroll());
});
afterAll(async () => server.stop());

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  text: string;
}

/** Sends the headers and `sent`, then `chunks` one every `everyMs`, and then nothing (unless `end`). */
function trickle(
  method: string,
  path: string,
  headers: Record<string, string>,
  parts: { sent: Buffer; chunks?: Buffer[]; everyMs?: number; end?: boolean },
): Promise<Answer> {
  const body = new Readable({ read() {} });
  body.push(parts.sent);
  const timers: NodeJS.Timeout[] = [];
  (parts.chunks ?? []).forEach((chunk, i, all) =>
    timers.push(
      setTimeout(
        () => {
          body.push(chunk);
          if (parts.end && i === all.length - 1) body.push(null);
        },
        (i + 1) * (parts.everyMs ?? 0),
      ),
    ),
  );
  return new Promise((resolve, reject) => {
    const req = server.rawRequest(method, path, { headers, body }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        timers.forEach(clearTimeout);
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, text });
      });
    });
    req.on('error', reject);
  });
}

describe('HTTP server timeouts', () => {
  it('has no whole-request deadline, keeps the headers deadline, and a named idle-body limit', () => {
    const http = server.server.httpServer!;
    expect(http.requestTimeout).toBe(0);
    expect(http.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(BODY_IDLE_TIMEOUT_MS).toBe(60_000);
  });
});

describe('a JSON body that keeps moving too slowly (slowloris)', () => {
  it('has a total deadline: 30 s at least, else a second per declared KiB', () => {
    expect(JSON_BODY_MIN_DEADLINE_MS).toBe(30_000);
    expect(JSON_BODY_MIN_BYTES_PER_SECOND).toBe(1024);
    // The same services without this file's fixed deadline.
    const computed = { ...server.services, tuning: { ...server.services.tuning, jsonBodyDeadlineMs: undefined } };
    expect(jsonBodyDeadlineMs(computed, 200)).toBe(30_000);
    expect(jsonBodyDeadlineMs(computed, 64 * 1024)).toBe(64_000);
    expect(jsonBodyDeadlineMs(computed, 2 * 1024 * 1024)).toBe(2048_000);
    expect(jsonBodyDeadlineMs(server.services, 64 * 1024)).toBe(DEADLINE_MS);
  });

  it('cuts an anonymous enrollment that drips a byte at a time, with a problem, and closes the connection', async () => {
    const headers = { 'content-type': 'application/json', 'content-length': '60000', 'idempotency-key': randomKey() };
    const drip = Array.from({ length: 40 }, () => Buffer.from(' '));
    const started = Date.now();
    const res = await trickle('POST', '/api/v1/enrollments', headers, {
      sent: Buffer.from('{'),
      chunks: drip,
      everyMs: IDLE_MS / 3,
    });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    expect(took).toBeLessThan(DEADLINE_MS + 1000);
    expect(res.status).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.text)).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'body', code: 'too_slow' }],
    });
  });

  it('accepts a JSON body that arrives in pieces within its deadline', async () => {
    const json = Buffer.from(JSON.stringify({ name: 'Trickled project name' }));
    const headers = {
      'content-type': 'application/json',
      'content-length': String(json.length),
      authorization: `Bearer ${token}`,
    };
    const chunks = [json.subarray(5, 15), json.subarray(15)];
    const res = await trickle('PATCH', '/api/v1/project', headers, {
      sent: json.subarray(0, 5),
      chunks,
      everyMs: IDLE_MS / 2,
      end: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text).name).toBe('Trickled project name');
  });
});

describe('a request body that stops moving', () => {
  it('fails the signed media PUT with a problem, stores nothing, and leaves the URL usable', async () => {
    const bytes = Buffer.concat([await image('png'), Buffer.alloc(100_000, 5)]);
    const declared = await declare(server, token, bytes, 'image/png');
    const target = new URL(declared.session.upload_url);
    const started = Date.now();
    const res = await trickle('PUT', target.pathname + target.search, declared.session.headers, {
      sent: bytes.subarray(0, 1000),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 20);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.headers.connection).toBe('close');
    const problem = JSON.parse(res.text);
    expect(problem).toMatchObject({ code: 'invalid_request', errors: [{ field: 'body' }] });
    expect(problem.detail).toMatch(/^no body bytes arrived for 0.3 s; .*nothing was stored/);
    expect(await server.services.blobs.stat(`media/${target.pathname.split('/').pop()}`)).toBeUndefined();
    expect((await put(server, declared.session, bytes)).status).toBe(200);
  });

  it('accepts a slow body that keeps moving, however long it takes in all', async () => {
    const bytes = Buffer.concat([await image('png'), Buffer.alloc(6_000, 5)]);
    const declared = await declare(server, token, bytes, 'image/png');
    const target = new URL(declared.session.upload_url);
    const chunks = Array.from({ length: 8 }, (_, i) =>
      bytes.subarray(
        1000 + i * Math.ceil((bytes.length - 1000) / 8),
        1000 + (i + 1) * Math.ceil((bytes.length - 1000) / 8),
      ),
    );
    const started = Date.now();
    const res = await trickle('PUT', target.pathname + target.search, declared.session.headers, {
      sent: bytes.subarray(0, 1000),
      chunks,
      everyMs: IDLE_MS / 2,
      end: true,
    });
    expect(Date.now() - started).toBeGreaterThan(DEADLINE_MS); // streamed uploads have no total deadline
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(`"${sha256(bytes)}"`);
  });

  it('fails an application upload with a problem, and its operation with it', async () => {
    const fixture = archiveOf(sampleApp());
    const headers = {
      ...uploadHeadersOf(fixture.declaration),
      'content-length': String(fixture.body.length),
      authorization: `Bearer ${token}`,
      'idempotency-key': randomKey(),
    };
    const res = await trickle('POST', '/api/v1/applications', headers, { sent: fixture.body.subarray(0, 20) });
    expect(res.status).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.text)).toMatchObject({
      code: 'invalid_request',
      detail: expect.stringMatching(/^no body bytes arrived for 0.3 s; .*nothing was accepted/),
    });
    const ops = await server.services.store.db
      .selectFrom('operations')
      .select(['state', 'error'])
      .where('kind', '=', 'application.upload')
      .execute();
    expect(ops.map((o) => o.state)).toEqual(['failed']);
  });

  it('fails a JSON body with a problem', async () => {
    const json = Buffer.from(JSON.stringify({ name: 'Stalled project name' }));
    const headers = {
      'content-type': 'application/json',
      'content-length': String(json.length),
      authorization: `Bearer ${token}`,
    };
    const res = await trickle('PATCH', '/api/v1/project', headers, { sent: json.subarray(0, 5) });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'body', code: 'stalled' }],
    });
  });

  it('logged no unexpected error for any of them', () => {
    expect(server.logText()).not.toContain('unexpected error');
  });
});
