// The credential cache (tenant-bearers.ts): what this process changes takes effect at once; what
// another process changes, within the cache's lifetime.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../keys';
import { openStore, type Store } from '../store/store';
import { TestServer } from '../testing/harness';
import { StoredTenantBearers } from './tenant-bearers';

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => server.stop());

describe('cached credentials', () => {
  it('refuses a bearer as soon as this process revokes it, though it was just used', async () => {
    const { token } = await server.enroll();
    for (let i = 0; i < 3; i++) expect((await server.request('GET', '/api/v1/screens', { token })).status).toBe(200);
    expect((await server.request('POST', '/api/v1/account/credential/revoke', { token })).status).toBe(204);
    expect((await server.request('GET', '/api/v1/screens', { token })).status).toBe(401);
  });

  it('forbids the bearers of a project as soon as an operator suspends it, and admits them on resume', async () => {
    const { token, projectId } = await server.enroll();
    expect((await server.request('GET', '/api/v1/screens', { token })).status).toBe(200);
    const setStatus = (status: 'active' | 'suspended') =>
      server.services.store.db.updateTable('tenants').set({ status }).where('id', '=', projectId).execute();
    await setStatus('suspended');
    expect((await server.request('GET', '/api/v1/screens', { token })).status).toBe(403);
    await setStatus('active');
    expect((await server.request('GET', '/api/v1/screens', { token })).status).toBe(200);
  });

  it('keeps its own balance writes from emptying the cache', async () => {
    const { token, projectId } = await server.enroll();
    const bearers = new StoredTenantBearers(server.services.store);
    const first = await bearers.find(sha256Hex(token));
    await server.services.store.db
      .updateTable('tenants')
      .set({ credit_millis: 5 })
      .where('id', '=', projectId)
      .execute();
    expect(await bearers.find(sha256Hex(token))).toBe(first);
  });

  it('sees a revocation made by another process within its lifetime', async () => {
    const { token } = await server.enroll();
    const bearers = new StoredTenantBearers(server.services.store, 100);
    const hash = sha256Hex(token);
    expect((await bearers.find(hash))?.active).toBe(true);
    // Another process on the same database: its writes reach no watcher of this one.
    const other: Store = await openStore(server.config.databaseUrl);
    try {
      await other.db.updateTable('credentials').set({ status: 'revoked' }).where('token_hash', '=', hash).execute();
    } finally {
      await other.close();
    }
    expect((await bearers.find(hash))?.active).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    expect((await bearers.find(hash))?.active).toBe(false);
  });
});
