import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer, randomKey } from '../testing/harness';
import { commit, declare, image, put, sha256 } from './media.fixtures';

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => server.stop());

async function projectWithLimit(limit: number): Promise<{ token: string; projectId: string }> {
  const { token, projectId } = await server.enroll();
  await server.services.store.db
    .updateTable('tenants')
    .set({ content_limit_bytes: limit })
    .where('id', '=', projectId)
    .execute();
  return { token, projectId };
}

const counters = async (token: string) => {
  const p = (await server.request('GET', '/api/v1/project', { token })).json();
  return { used: p.used_bytes as number, reserved: p.reserved_bytes as number, limit: p.content_limit_bytes as number };
};

describe('content quota (used_bytes, reserved_bytes, content_limit_bytes)', () => {
  it('admits concurrent declarations exactly up to the limit; the rest get quota_exceeded (413)', async () => {
    const { token } = await projectWithLimit(1000);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        server.request('POST', '/api/v1/media/uploads', {
          token,
          json: { filename: 'a.png', content_type: 'image/png', bytes: 300, sha256: 'a'.repeat(64) },
          idempotencyKey: randomKey(),
        }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 413)).toHaveLength(9);
    expect(answers.find((a) => a.status === 413)!.json().code).toBe('quota_exceeded');
    expect(await counters(token)).toEqual({ used: 0, reserved: 900, limit: 1000 });
  });

  it('keeps the counters exact through concurrent publications, failures and deletes', async () => {
    const images = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => image('png', 10 + i, 10)));
    const total = images.reduce((n, b) => n + b.length, 0);
    const { token } = await projectWithLimit(total + 10);
    // Three will verify, three lie about their type and fail.
    const declared = await Promise.all(
      images.map((bytes, i) => declare(server, token, bytes, i < 3 ? 'image/png' : 'image/jpeg')),
    );
    expect(await counters(token)).toMatchObject({ used: 0, reserved: total });
    // No room for more while everything is reserved.
    const full = await server.request('POST', '/api/v1/media/uploads', {
      token,
      json: { filename: 'b.png', content_type: 'image/png', bytes: 11, sha256: 'b'.repeat(64) },
      idempotencyKey: randomKey(),
    });
    expect(full.status).toBe(413);
    await Promise.all(declared.map((d) => put(server, d.session, d.bytes)));
    await Promise.all(declared.map((d) => commit(server, token, d)));
    await server.services.operations.idle();
    const good = images.slice(0, 3).reduce((n, b) => n + b.length, 0);
    expect(await counters(token)).toMatchObject({ used: good, reserved: 0 });

    const list = (await server.request('GET', '/api/v1/media', { token })).json().items as {
      id: string;
      sha256: string;
    }[];
    expect(list.map((m) => m.sha256).sort()).toEqual(images.slice(0, 3).map(sha256).sort());
    const deletes = await Promise.all(list.map((m) => server.request('DELETE', `/api/v1/media/${m.id}`, { token })));
    expect(deletes.map((d) => d.status)).toEqual([204, 204, 204]);
    expect(await counters(token)).toMatchObject({ used: 0, reserved: 0 });
  });

  it('counts published bytes against the limit: a full project refuses further declarations', async () => {
    const bytes = await image('png');
    const { token } = await projectWithLimit(bytes.length);
    const first = await declare(server, token, bytes, 'image/png');
    await put(server, first.session, bytes);
    await commit(server, token, first);
    await server.services.operations.idle();
    expect(await counters(token)).toMatchObject({ used: bytes.length, reserved: 0 });
    const more = await server.request('POST', '/api/v1/media/uploads', {
      token,
      json: { filename: 'c.png', content_type: 'image/png', bytes: 1, sha256: 'c'.repeat(64) },
      idempotencyKey: randomKey(),
    });
    expect(more.status).toBe(413);
  });
});
