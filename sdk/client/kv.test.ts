// The owner KV module: what it sends and how it encodes values. The owner KV routes are not in the
// server yet, so these requests go to a stub fetch that records them (see the report of this branch).
import { describe, expect, it } from 'vitest';
import { createMarqueeClient, MarqueeProblem } from './marquee-client';
import { fromBase64, toBase64 } from './kv';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

function stubbed(answer: { status: number; body?: unknown; etag?: string }) {
  const sent: Sent[] = [];
  const fetchImpl = (async (input: URL | RequestInfo, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    sent.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json', ...(answer.etag ? { etag: answer.etag } : {}) },
    });
  }) as typeof fetch;
  const client = createMarqueeClient({ baseUrl: 'http://marquee.test', token: 'mq_acct_test', fetch: fetchImpl });
  return { client, sent };
}

const entry = {
  application_id: 'app_1',
  key: 'a/b',
  value_base64: 'aGk=',
  content_type: 'text/plain; charset=utf-8',
  bytes: 2,
  sha256: 'x'.repeat(64),
  revision: 3,
};

describe('kv', () => {
  it('creates a key: PUT of a string as UTF-8 base64, an idempotency key, no If-Match, the key encoded in the path', async () => {
    const { client, sent } = stubbed({ status: 200, body: { ...entry, revision: 1 }, etag: '"1"' });
    const result = await client.kv.set('app_1', 'a/b', 'héllo');
    expect(result.revision).toBe(1);
    expect(sent[0]).toMatchObject({ method: 'PUT', url: 'http://marquee.test/api/v1/applications/app_1/kv/a%2Fb' });
    expect(sent[0]!.body).toEqual({
      value_base64: Buffer.from('héllo').toString('base64'),
      content_type: 'text/plain; charset=utf-8',
    });
    expect(sent[0]!.headers['idempotency-key']).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(sent[0]!.headers['if-match']).toBeUndefined();
  });

  it('updates bytes with If-Match from the entry read', async () => {
    const { client, sent } = stubbed({ status: 200, body: { ...entry, revision: 4 } });
    await client.kv.set('app_1', 'a/b', new Uint8Array([0, 255, 7]), { ifMatch: entry });
    expect(sent[0]!.headers['if-match']).toBe('"3"');
    expect(sent[0]!.body).toEqual({ value_base64: 'AP8H', content_type: 'application/octet-stream' });
  });

  it('deletes with If-Match and an idempotency key; lists and reads', async () => {
    const { client, sent } = stubbed({ status: 204 });
    await client.kv.delete('app_1', 'a/b', 3);
    expect(sent[0]).toMatchObject({ method: 'DELETE', url: 'http://marquee.test/api/v1/applications/app_1/kv/a%2Fb' });
    expect(sent[0]!.headers['if-match']).toBe('"3"');
    expect(sent[0]!.headers['idempotency-key']).toBeDefined();
    await client.kv.list('app_1');
    await client.kv.get('app_1', 'counter');
    await client.kv.list('app_1', { cursor: 'a&b=c d' });
    expect(sent.slice(1).map((s) => [s.method, s.url])).toEqual([
      ['GET', 'http://marquee.test/api/v1/applications/app_1/kv'],
      ['GET', 'http://marquee.test/api/v1/applications/app_1/kv/counter'],
      ['GET', 'http://marquee.test/api/v1/applications/app_1/kv?cursor=a%26b%3Dc+d'],
    ]);
  });

  it('refuses a key the server would refuse (. and .., a lone surrogate) with a typed problem, sending nothing', async () => {
    const { client, sent } = stubbed({ status: 200, body: entry });
    for (const key of ['.', '..', 'x\ud800']) {
      for (const call of [
        () => client.kv.get('app_1', key),
        () => client.kv.set('app_1', key, 'v'),
        () => client.kv.delete('app_1', key, 1),
      ]) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(MarqueeProblem);
        expect(error).toMatchObject({
          code: 'invalid_request',
          status: 400,
          errors: [{ field: 'key', code: 'invalid' }],
        });
      }
    }
    expect(sent).toEqual([]);
  });

  it('decodes values as text or bytes, large ones included', () => {
    const { client } = stubbed({ status: 200 });
    expect(client.kv.text({ value_base64: Buffer.from('Grüße 👋').toString('base64') })).toBe('Grüße 👋');
    const large = new Uint8Array(200_000).map((_, i) => (i * 31) & 0xff);
    const encoded = toBase64(large);
    expect(encoded).toBe(Buffer.from(large).toString('base64'));
    expect(Buffer.from(fromBase64(encoded)).equals(large)).toBe(true);
    expect(Buffer.from(client.kv.bytes({ value_base64: encoded })).equals(large)).toBe(true);
  });
});
