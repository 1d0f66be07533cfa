import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';

let server: TestServer;
afterEach(async () => server?.stop());

describe('status surface', () => {
  it('answers /.health alive and /.ready ready with an empty degraded list', async () => {
    server = await TestServer.start();
    expect((await server.request('GET', '/.health')).json()).toEqual({ status: 'alive' });
    expect((await server.request('GET', '/.ready')).json()).toEqual({ status: 'ready', degraded: [] });
  });

  it('answers /.version with exactly the four fields', async () => {
    server = await TestServer.start({ config: { commit: 'abc1234' } });
    const body = (await server.request('GET', '/.version')).json();
    expect(Object.keys(body).sort()).toEqual(['api_version', 'commit', 'protocol_version', 'version']);
    expect(body).toMatchObject({ commit: 'abc1234', api_version: '0.2.0', protocol_version: '1' });
  });

  it('publishes every capability with the spec constants and a features map, without authentication', async () => {
    server = await TestServer.start();
    const body = (await server.request('GET', '/api/v1/capabilities')).json();
    expect(body).toMatchObject({
      application_compressed_bytes: 104857600,
      application_expanded_bytes: 262144000,
      application_file_count: 5000,
      application_file_bytes: 33554432,
      application_path_depth: 16,
      application_path_bytes: 255,
      playlist_max_pages: 100,
      playlist_max_items_per_page: 24,
      transition_max_duration_ms: 60000,
      screens_per_account: 50,
      account_content_bytes: 1073741824,
    });
    expect(Object.keys(body).sort()).toEqual(
      [
        'api_version',
        'protocol_version',
        'application_compressed_bytes',
        'application_expanded_bytes',
        'application_file_count',
        'application_file_bytes',
        'application_path_depth',
        'application_path_bytes',
        'playlist_max_pages',
        'playlist_max_items_per_page',
        'transition_max_duration_ms',
        'screens_per_account',
        'account_content_bytes',
        'features',
      ].sort(),
    );
    expect(Object.values(body.features).every((v) => typeof v === 'boolean')).toBe(true);
  });

  it('reports schema drift as degraded, then schema_incompatible after two minutes (500 in Model P)', async () => {
    server = await TestServer.start();
    await sql`DROP INDEX events_at`.execute(server.services.store.db);
    expect((await server.request('GET', '/.ready')).json()).toEqual({ status: 'ready', degraded: ['schema'] });
    server.clock.advance(2 * 60_000 + 1);
    const res = await server.request('GET', '/.ready');
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('schema_incompatible');
    expect(res.headers['retry-after']).toBeUndefined();
    await server.services.store.db.schema.createIndex('events_at').on('events').column('at').execute();
    expect((await server.request('GET', '/.ready')).status).toBe(200);
  });

  it('uses 503 for readiness problems in Model A mode', async () => {
    server = await TestServer.start({ config: { model: 'A' } });
    await sql`DROP INDEX events_at`.execute(server.services.store.db);
    await server.request('GET', '/.ready');
    server.clock.advance(2 * 60_000 + 1);
    const res = await server.request('GET', '/.ready');
    expect(res.status).toBe(503);
  });

  it('answers /.ready 503 while draining in Model A mode, and 421 server_draining in Model P', async () => {
    server = await TestServer.start({ config: { model: 'A' } });
    server.services.lifecycle.state = 'draining';
    const a = await server.request('GET', '/.ready');
    expect(a.status).toBe(503);
    expect(a.json()).toMatchObject({ status: 503, detail: 'this host is draining; retry on another host' });
    expect(a.headers['retry-after']).toBe('1');
    server.services.lifecycle.state = 'ready';
    await server.stop();

    server = await TestServer.start();
    server.services.lifecycle.state = 'draining';
    const p = await server.request('GET', '/.ready');
    expect(p.status).toBe(421);
    expect(p.json().code).toBe('server_draining');
    server.services.lifecycle.state = 'ready';
  });

  it('answers not_ready with Retry-After 5 while starting', async () => {
    server = await TestServer.start();
    server.services.lifecycle.state = 'starting';
    const res = await server.request('GET', '/.ready');
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('not_ready');
    expect(res.headers['retry-after']).toBe('5');
    server.services.lifecycle.state = 'ready';
  });

  it('answers dependency_unavailable with Retry-After 5 when the database does not answer', async () => {
    server = await TestServer.start();
    await server.services.store.close(); // as a database that went down: every query fails
    const res = await server.request('GET', '/.ready');
    expect(res.status).toBe(500);
    expect(res.json()).toMatchObject({ code: 'dependency_unavailable', detail: 'the database does not answer' });
    expect(res.headers['retry-after']).toBe('5');
  });

  it('reports a database from a newer Marquee as schema_incompatible', async () => {
    server = await TestServer.start();
    await server.services.store.db
      .insertInto('kysely_migration' as never)
      .values({ name: '9999-from-the-future', timestamp: new Date().toISOString() } as never)
      .execute();
    const restarted = await server.restart();
    server = restarted;
    const res = await server.request('GET', '/.ready');
    expect(res.json().code).toBe('schema_incompatible');
    expect(res.json().detail).toContain('9999-from-the-future');
  });
});
