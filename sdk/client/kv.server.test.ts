// The client's owner key/value routes (Model A) against a real Marquee server.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import { packApplication } from '../pack/pack';
import { testClient } from '../testing/client-fixture';
import { MarqueeProblem } from './marquee-client';

const KV_COUNTER = path.resolve(import.meta.dirname, '../examples/kv-counter');

let server: TestServer;
let client: ReturnType<typeof testClient>;
let applicationId: string;

beforeAll(async () => {
  server = await TestServer.start();
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const { token } = await server.createAccount();
  client = testClient(baseUrl, { token });
  const packed = await packApplication(KV_COUNTER, { runtime: Buffer.from('/* runtime */\n'), name: 'KV counter' });
  const published = await client.applications.publish(packed);
  applicationId = published.data.id;
});
afterAll(async () => server?.stop());

describe('owner key/value through the client', () => {
  it('creates, reads, updates with If-Match, refuses a stale write, lists and deletes', async () => {
    const created = await client.kv.set(applicationId, 'greeting/en', 'héllo');
    expect(created.revision).toBe(1);
    expect(created.data).toMatchObject({ key: 'greeting/en', revision: 1, content_type: 'text/plain; charset=utf-8' });

    const read = await client.kv.get(applicationId, 'greeting/en');
    expect(client.kv.text(read.data)).toBe('héllo');

    const updated = await client.kv.set(applicationId, 'greeting/en', new Uint8Array([0, 255, 7]), {
      ifMatch: read.data,
    });
    expect(updated.data.revision).toBe(2);
    expect([...client.kv.bytes((await client.kv.get(applicationId, 'greeting/en')).data)]).toEqual([0, 255, 7]);

    const stale = await client.kv.set(applicationId, 'greeting/en', 'late', { ifMatch: 1 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(MarqueeProblem);
    expect((stale as MarqueeProblem).code).toBe('revision_conflict');
    expect((stale as MarqueeProblem).current_revision).toBe(2);

    const exists = await client.kv.set(applicationId, 'greeting/en', 'again').catch((e: unknown) => e);
    expect((exists as MarqueeProblem).code).toBe('revision_conflict');

    const list = await client.kv.list(applicationId);
    expect(list.data.items.map((i) => i.key)).toEqual(['greeting/en']);

    await client.kv.delete(applicationId, 'greeting/en', updated.data);
    const gone = await client.kv.get(applicationId, 'greeting/en').catch((e: unknown) => e);
    expect((gone as MarqueeProblem).code).toBe('not_found');
  });

  it("answers not_found for another account's application", async () => {
    const { token } = await server.createAccount();
    const stranger = testClient(`http://127.0.0.1:${server.port}`, { token });
    const refused = await stranger.kv.list(applicationId).catch((e: unknown) => e);
    expect((refused as MarqueeProblem).code).toBe('not_found');
  });

  it('lists every key a page at a time by following next_cursor', async () => {
    const keys = Array.from({ length: 203 }, (_, i) => `page/${String(i).padStart(3, '0')}`);
    for (const key of keys) await client.kv.set(applicationId, key, 'x');
    const first = await client.kv.list(applicationId);
    expect(first.data.items).toHaveLength(200);
    expect(first.data.next_cursor).toEqual(expect.any(String));
    const second = await client.kv.list(applicationId, { cursor: first.data.next_cursor! });
    expect(second.data.next_cursor).toBeNull();
    expect([...first.data.items, ...second.data.items].map((i) => i.key)).toEqual(keys);
  }, 60_000);
});
