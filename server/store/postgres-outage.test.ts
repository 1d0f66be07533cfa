// PostgreSQL going away under a running server: requests answer the spec's dependency_unavailable
// (Retry-After 5), as /.ready does, never an internal_error or pg's own words.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TestServer } from '../testing/harness';
import { TEST_DATABASE_URL } from '../testing/test-database';

describe.skipIf(!TEST_DATABASE_URL || TEST_DATABASE_URL.startsWith('sqlite:'))('PostgreSQL out of reach', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.stop().catch(() => undefined));

  it('answers dependency_unavailable when no connection to the database can be had', async () => {
    server = await TestServer.start();
    const { token } = await server.enroll();
    const name = new URL(server.config.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`); // its connections end; new ones are refused
    } finally {
      await admin.end();
    }
    const res = await server.request('GET', '/api/v1/media', { token });
    expect(res.status, res.text).toBe(500);
    expect(res.json()).toMatchObject({
      code: 'dependency_unavailable',
      detail: 'the database is unavailable; retry later',
    });
    expect(res.headers['retry-after']).toBe('5');
    expect(res.text).not.toContain(name);
  });
});
