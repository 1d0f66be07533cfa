import { beforeAll, describe, expect, it } from 'vitest';
import { KV_LIST_MAX_ITEMS, KV_VALUE_BASE64_MAX } from '../../sdk/contract/kv';
import { insertRelease } from '../playlists/content.fixtures';
import { randomKey, type RequestOptions } from '../testing/harness';
import { useEnrolledServer } from '../runtime/runtime.fixtures';
import { KV_TOMBSTONE_RETENTION_MS, pruneKv } from './kv';

const env = useEnrolledServer({ tenant: 'account' });
const { clock } = env;
let appId: string;

beforeAll(async () => {
  ({ applicationId: appId } = await insertRelease(env.server, env.tenantId));
});

const text = (s: string) => ({ value_base64: Buffer.from(s).toString('base64'), content_type: 'text/plain' });
const path = (key: string, app = appId) => `/api/v1/applications/${app}/kv/${encodeURIComponent(key)}`;

function put(key: string, body: unknown, options: RequestOptions = {}) {
  return env.server.request('PUT', path(key, (options as { app?: string }).app), {
    token: env.token,
    json: body,
    idempotencyKey: randomKey(),
    ...options,
  });
}

function del(key: string, ifMatch: number | undefined, options: RequestOptions = {}) {
  return env.server.request('DELETE', path(key), {
    token: env.token,
    idempotencyKey: randomKey(),
    ...(ifMatch !== undefined ? { ifMatch } : {}),
    ...options,
  });
}

async function usedBytes(): Promise<number> {
  return (
    await env.server.services.store.db
      .selectFrom('tenants')
      .select('used_bytes')
      .where('id', '=', env.tenantId)
      .executeTakeFirstOrThrow()
  ).used_bytes;
}

describe('owner key/value', () => {
  it('creates, updates conditionally, reads, lists and deletes (the CLI walk)', async () => {
    const created = await put('greeting', text('hello'));
    expect(created.status, created.text).toBe(200);
    expect(created.headers.etag).toBe('"1"');
    expect(created.json()).toEqual({
      application_id: appId,
      key: 'greeting',
      value_base64: Buffer.from('hello').toString('base64'),
      content_type: 'text/plain',
      bytes: 5,
      sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
      revision: 1,
    });
    const updated = await put('greeting', text('hello again'), { ifMatch: 1 });
    expect(updated.json().revision).toBe(2);
    const stale = await put('greeting', text('late'), { ifMatch: 1 });
    expect(stale.status).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'revision_conflict', current_revision: 2 });
    const blind = await put('greeting', text('blind'));
    expect(blind.status).toBe(412);
    expect(blind.json()).toMatchObject({ code: 'revision_conflict', current_revision: 2 });

    const binary = Buffer.from([0, 255, 1, 254, 10, 13]);
    expect(
      (await put('blob', { value_base64: binary.toString('base64'), content_type: 'application/octet-stream' })).status,
    ).toBe(200);
    const read = await env.server.request('GET', path('blob'), { token: env.token });
    expect(read.status).toBe(200);
    expect(read.headers.etag).toBe('"1"');
    expect(Buffer.from(read.json().value_base64, 'base64').equals(binary)).toBe(true);

    const list = await env.server.request('GET', `/api/v1/applications/${appId}/kv`, { token: env.token });
    expect(list.json()).toEqual({
      items: [
        expect.objectContaining({
          key: 'blob',
          bytes: 6,
          revision: 1,
          content_type: 'application/octet-stream',
          created_at: expect.any(String),
          updated_at: expect.any(String),
        }),
        expect.objectContaining({ key: 'greeting', bytes: 11, revision: 2 }),
      ],
      next_cursor: null,
    });
    expect(list.json().items[0].value_base64).toBeUndefined();

    expect((await del('greeting', 1)).status).toBe(412);
    expect((await del('greeting', 2)).status).toBe(204);
    expect((await del('blob', 1)).status).toBe(204);
    expect((await env.server.request('GET', path('greeting'), { token: env.token })).status).toBe(404);
    expect((await del('greeting', 3)).status).toBe(404);
    const events = (await env.server.request('GET', '/api/v1/events', { token: env.token }))
      .json()
      .items.map((e: { type: string }) => e.type);
    expect(events.filter((t: string) => t.startsWith('kv.'))).toEqual([
      'kv.created',
      'kv.updated',
      'kv.created',
      'kv.deleted',
      'kv.deleted',
    ]);
  });

  it('continues revisions when a deleted key is written again, and refuses If-Match on a missing key', async () => {
    expect((await put('phoenix', text('one'))).json().revision).toBe(1);
    expect((await del('phoenix', 1)).status).toBe(204);
    const ghost = await put('phoenix', text('two'), { ifMatch: 1 });
    expect(ghost.status).toBe(412); // RFC 9110: If-Match fails when there is no current representation
    expect(ghost.json()).toMatchObject({
      code: 'revision_conflict',
      errors: [{ field: 'If-Match', code: 'not_found' }],
    });
    expect(ghost.json().current_revision).toBeUndefined(); // a missing key has no revision to name
    const again = await put('phoenix', text('two'));
    expect(again.json().revision).toBe(3);
  });

  it('needs Idempotency-Key on writes and If-Match on deletes, and replays exact retries', async () => {
    const noKey = await env.server.request('PUT', path('k'), { token: env.token, json: text('x') });
    expect(noKey.status).toBe(400);
    expect(noKey.json().errors[0].field).toBe('Idempotency-Key');
    expect((await put('k', text('x'))).status).toBe(200);
    const noMatch = await del('k', undefined);
    expect(noMatch.status).toBe(400);
    expect(noMatch.json().errors[0].field).toBe('If-Match');
    expect((await env.server.request('DELETE', path('k'), { token: env.token, ifMatch: 1 })).status).toBe(400);

    const key = randomKey();
    const first = await put('retried', text('once'), { idempotencyKey: key });
    const retry = await put('retried', text('once'), { idempotencyKey: key });
    expect(retry.status).toBe(200);
    expect(retry.json()).toEqual(first.json());
    expect((await env.server.request('GET', path('retried'), { token: env.token })).json().revision).toBe(1);
    expect((await put('retried', text('other'), { idempotencyKey: key })).status).toBe(409);
  });

  it.each([
    ['a key over 256 UTF-8 bytes', 'é'.repeat(129), text('x'), 'key'],
    ['the reserved prefix', '_marquee/x', text('x'), 'key'],
    ['a control character in the key', 'a\u0001b', text('x'), 'key'],
    ['malformed base64', 'k', { value_base64: 'not base64!', content_type: 'text/plain' }, 'value_base64'],
    ['non-canonical base64', 'k', { value_base64: 'YR==', content_type: 'text/plain' }, 'value_base64'],
    ['a missing content type', 'k', { value_base64: 'YQ==' }, 'content_type'],
    ['a content type with a line break', 'k', { value_base64: 'YQ==', content_type: 'text/\nplain' }, 'content_type'],
    ['an unknown member', 'k', { ...text('x'), ttl: 5 }, 'ttl'],
  ])('refuses %s', async (_what, key, body, field) => {
    const res = await put(key, body);
    expect(res.status).toBe(400);
    expect(res.json().errors[0].field).toBe(field);
  });

  it.each(['.', '%2E', '%2e', '..', '%2E%2E', '.%2e'])(
    'refuses the dot-segment key %s with invalid_request, on every method',
    async (raw) => {
      const url = `/api/v1/applications/${appId}/kv/${raw}`;
      for (const method of ['PUT', 'GET', 'DELETE']) {
        const res = await env.server.request(method, url, {
          token: env.token,
          idempotencyKey: randomKey(),
          ifMatch: 1,
          ...(method === 'PUT' ? { json: text('x') } : {}),
        });
        expect(res.status, `${method} ${raw}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ field: 'key' }] });
      }
    },
  );

  it('refuses a key with a lone surrogate (it has no UTF-8 form) with invalid_request', async () => {
    const res = await env.server.request('PUT', `/api/v1/applications/${appId}/kv/a%ED%A0%80`, {
      token: env.token,
      json: text('x'),
      idempotencyKey: randomKey(),
    });
    expect(res.status).toBe(400);
    expect(res.json().code).toBe('invalid_request');
  });

  it('takes values up to 1 MiB and keys of exactly 256 bytes, through percent-encoded paths', async () => {
    const mebibyte = Buffer.alloc(1024 * 1024, 7).toString('base64');
    expect(mebibyte.length).toBe(KV_VALUE_BASE64_MAX);
    const big = await put('big', { value_base64: mebibyte, content_type: 'application/octet-stream' });
    expect(big.status, big.text).toBe(200);
    expect(big.json().bytes).toBe(1024 * 1024);
    const tooBig = await put('bigger', {
      value_base64: Buffer.alloc(1024 * 1024 + 3).toString('base64'),
      content_type: 'application/octet-stream',
    });
    expect(tooBig.status).toBe(400);
    const longKey = `${'ü/'.repeat(85)}x`; // 256 bytes, slashes included
    expect(Buffer.byteLength(longKey)).toBe(256);
    const res = await put(longKey, text('deep'));
    expect(res.status, res.text).toBe(200);
    expect(res.json().key).toBe(longKey);
  });

  it('counts values and keys against the content quota', async () => {
    const before = await usedBytes();
    await put('quota', text('12345'));
    expect(await usedBytes()).toBe(before + 5 + 5);
    await put('quota', text('1'), { ifMatch: 1 });
    expect(await usedBytes()).toBe(before + 1 + 5);
    await del('quota', 2);
    expect(await usedBytes()).toBe(before);

    await env.server.services.store.db
      .updateTable('tenants')
      .set({ content_limit_bytes: before + 20 })
      .where('id', '=', env.tenantId)
      .execute();
    try {
      const over = await put('quota', text('x'.repeat(50)));
      expect(over.status).toBe(413);
      expect(over.json().code).toBe('quota_exceeded');
      expect((await env.server.request('GET', path('quota'), { token: env.token })).status).toBe(404);
    } finally {
      await env.server.services.store.db
        .updateTable('tenants')
        .set({ content_limit_bytes: 0 })
        .where('id', '=', env.tenantId)
        .execute();
    }
  });

  it('pages lists of more than 200 keys in byte order', async () => {
    const { applicationId } = await insertRelease(env.server, env.tenantId);
    const now = clock.now();
    const keys = Array.from({ length: KV_LIST_MAX_ITEMS + 5 }, (_, i) => `key-${String(i).padStart(4, '0')}`);
    await env.server.services.store.db
      .insertInto('kv_entries')
      .values(
        keys.map((key) => ({
          application_id: applicationId,
          key,
          tenant_id: env.tenantId,
          value: Buffer.from('v'),
          content_type: 'text/plain',
          bytes: 1,
          sha256: 'x',
          revision: 1,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        })),
      )
      .execute();
    const first = (
      await env.server.request('GET', `/api/v1/applications/${applicationId}/kv`, { token: env.token })
    ).json();
    expect(first.items).toHaveLength(KV_LIST_MAX_ITEMS);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = (
      await env.server.request('GET', `/api/v1/applications/${applicationId}/kv?cursor=${first.next_cursor}`, {
        token: env.token,
      })
    ).json();
    expect([...first.items, ...second.items].map((i: { key: string }) => i.key)).toEqual(keys);
    expect(second.next_cursor).toBeNull();
    expect(
      (await env.server.request('GET', `/api/v1/applications/${applicationId}/kv?cursor=@@`, { token: env.token }))
        .status,
    ).toBe(400);
  });

  it("answers not_found for another tenant's application, and accepts project bearers", async () => {
    const other = await env.server.createAccount();
    expect((await env.server.request('GET', path('greeting'), { token: other.token })).status).toBe(404);
    expect(
      (
        await env.server.request('PUT', path('greeting'), {
          token: other.token,
          json: text('x'),
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(404);
    expect((await env.server.request('GET', `/api/v1/applications/${appId}/kv`, { token: other.token })).status).toBe(
      404,
    );

    const project = await env.server.enroll();
    const { applicationId } = await insertRelease(env.server, project.projectId);
    const res = await env.server.request('PUT', `/api/v1/applications/${applicationId}/kv/p`, {
      token: project.token,
      json: text('p'),
      idempotencyKey: randomKey(),
    });
    expect(res.status, res.text).toBe(200);
  });

  it('drops the entries of a deleted application and gives their bytes back', async () => {
    const { applicationId } = await insertRelease(env.server, env.tenantId);
    const before = await usedBytes();
    await put('doomed', text('abc'), { app: applicationId } as RequestOptions);
    expect(await usedBytes()).toBe(before + 9);
    await env.server.services.store.db
      .updateTable('applications')
      .set({ deleted_at: clock.now(), state: 'deleted' })
      .where('id', '=', applicationId)
      .execute();
    expect((await env.server.request('GET', path('doomed', applicationId), { token: env.token })).status).toBe(404);
    await pruneKv(env.server.services, clock.now());
    expect(await usedBytes()).toBe(before);
    expect(
      await env.server.services.store.db
        .selectFrom('kv_entries')
        .selectAll()
        .where('application_id', '=', applicationId)
        .execute(),
    ).toEqual([]);
  });

  it('never repeats a revision once the tombstone is pruned: a stale If-Match still gets 412 (review 3, finding E)', async () => {
    // Last in the file: the prune also raises the floor of the application the other tests share.
    const { applicationId: app } = await insertRelease(env.server, env.tenantId);
    const write = (key: string, value: string, ifMatch?: number) =>
      put(key, text(value), { app, ...(ifMatch !== undefined ? { ifMatch } : {}) } as RequestOptions);
    const remove = (key: string, ifMatch: number) =>
      env.server.request('DELETE', path(key, app), { token: env.token, idempotencyKey: randomKey(), ifMatch });
    const read = await write('lazarus', 'client A read this');
    expect(read.json().revision).toBe(1); // client A remembers "1"
    expect((await write('lazarus', 'second', 1)).json().revision).toBe(2);
    expect((await remove('lazarus', 2)).status).toBe(204); // tombstone at 3
    clock.advance(KV_TOMBSTONE_RETENTION_MS + 3600_000);
    await pruneKv(env.server.services, clock.now());
    expect(
      await env.server.services.store.db
        .selectFrom('kv_entries')
        .select('key')
        .where('application_id', '=', app)
        .execute(),
    ).toEqual([]);

    const recreated = await write('lazarus', 'written by client B');
    expect(recreated.status).toBe(200);
    expect(recreated.json().revision).toBe(4);
    for (const stale of [1, 2, 3]) {
      const res = await write('lazarus', 'client A update based on its old read', stale);
      expect(res.status).toBe(412);
      expect(res.json()).toMatchObject({ code: 'revision_conflict', current_revision: 4 });
      expect((await remove('lazarus', stale)).status).toBe(412);
    }
    expect((await env.server.request('GET', path('lazarus', app), { token: env.token })).json().value_base64).toBe(
      text('written by client B').value_base64,
    );
    // The floor only rises (a second prune keeps it), and covers every new key of the application.
    await pruneKv(env.server.services, clock.now());
    expect((await write('newcomer', 'x')).json().revision).toBe(4);
  });
});
