import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { CookieJar, TestServer, randomKey, type RequestOptions, type TestResponse } from '../testing/harness';
import { archiveOf, sampleApp, uploadHeadersOf, type FixtureEntry } from '../applications/archive-fixtures';
import { LAUNCH_TICKET_TTL_MS, mintLaunchTicket, revokeReleaseGrants, type LaunchBinding } from './launch-tickets';
import { RELEASE_GRANT_COOKIE } from './release-grant-cookie';

let server: TestServer;
let token: string;
let tenantId: string;
const clock = new TestClock('2026-11-21T12:00:00Z');

beforeAll(async () => {
  server = await TestServer.start({ clock });
  ({ token, projectId: tenantId } = await server.enroll());
});
afterAll(async () => server.stop());

const FRAME_NAVIGATION = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' };
const OWN_SCRIPT = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' };

interface Published {
  applicationId: string;
  releaseId: string;
  host: string;
}

async function publish(entries: FixtureEntry[] = sampleApp()): Promise<Published> {
  const fixture = archiveOf(entries);
  clock.advance(60_000); // a fresh upload budget (10 a minute)
  const res = await server.request('POST', '/api/v1/applications', {
    token,
    idempotencyKey: randomKey(),
    body: fixture.body,
    headers: uploadHeadersOf(fixture.declaration),
  });
  expect(res.status).toBe(202);
  await server.services.operations.idle();
  const release = await server.services.store.db
    .selectFrom('releases')
    .selectAll()
    .where('id', '=', res.json().release_id)
    .executeTakeFirstOrThrow();
  expect(release.state).toBe('ready');
  return {
    applicationId: res.json().id,
    releaseId: release.id,
    host: `${release.host_label}.release.localhost:${server.port}`,
  };
}

let grants = 0;
function binding(releaseId: string, overrides: Partial<LaunchBinding> = {}): LaunchBinding {
  return {
    tenantId,
    releaseId,
    screenId: 'scr_lobby',
    contentGeneration: 1,
    manifestRevision: 'man_1',
    grantId: `gr_${++grants}`,
    ...overrides,
  };
}

async function mint(b: LaunchBinding) {
  return server.services.store.transaction((work) => mintLaunchTicket(server.services, work, b, clock.now()));
}

/** Path and query of a launch URL, and its host. */
function target(url: string): { host: string; path: string } {
  const u = new URL(url);
  return { host: u.host, path: u.pathname + u.search };
}

/** A GET from the release's own page unless other Fetch Metadata is given. */
function get(host: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  return server.request('GET', path, { host, headers: OWN_SCRIPT, ...options });
}

/** Launches a release into a fresh cookie jar, as the player's frame would. */
async function launch(
  p: Published,
  b = binding(p.releaseId),
): Promise<{ jar: CookieJar; res: TestResponse; ticket: string }> {
  const minted = await mint(b);
  const jar = new CookieJar();
  const { host, path } = target(minted.launchUrl);
  expect(host).toBe(p.host);
  const res = await server.request('GET', path, { host, cookies: jar, headers: FRAME_NAVIGATION });
  return { jar, res, ticket: minted.ticket };
}

describe('launch tickets', () => {
  it('turn into the exact-host release-grant cookie with a 302 to the same path', async () => {
    const p = await publish();
    const minted = await mint(binding(p.releaseId));
    expect(minted.launchUrl).toBe(`http://${p.host}/?ticket=${minted.ticket}`);
    expect(minted.expiresAt).toBe(clock.now() + LAUNCH_TICKET_TTL_MS);
    const jar = new CookieJar();
    const res = await server.request('GET', target(minted.launchUrl).path, {
      host: p.host,
      cookies: jar,
      headers: FRAME_NAVIGATION,
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const cookie = res.headers['set-cookie']!;
    expect(cookie).toHaveLength(1);
    expect(cookie[0]).toMatch(
      new RegExp(
        `^${RELEASE_GRANT_COOKIE}=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+; Path=/; Max-Age=86400; Secure; HttpOnly; SameSite=None; Partitioned$`,
      ),
    );
    expect(cookie[0]).not.toMatch(/Domain=/i);
    expect(jar.get(p.host, RELEASE_GRANT_COOKIE)).toBeDefined();
  });

  it('keep every other query parameter, exactly as sent, in the redirect', async () => {
    const p = await publish();
    const minted = await mint(binding(p.releaseId));
    const res = await server.request('GET', `/assets/app.js?lang=de&ticket=${minted.ticket}&q=a%20b+c`, {
      host: p.host,
      headers: FRAME_NAVIGATION,
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/assets/app.js?lang=de&q=a%20b+c');
  });

  it('redirect only to a path on the same host, whatever slashes lead the request path', async () => {
    const p = await publish();
    for (const path of ['//evil.example/x', '/\\evil.example/x', '///evil.example/x?lang=de']) {
      const minted = await mint(binding(p.releaseId));
      const sep = path.includes('?') ? '&' : '?';
      const res = await server.request('GET', `${path}${sep}ticket=${minted.ticket}`, {
        host: p.host,
        headers: FRAME_NAVIGATION,
      });
      expect(res.status, path).toBe(302);
      expect(res.headers.location, path).toBe(path.includes('?') ? '/evil.example/x?lang=de' : '/evil.example/x');
    }
  });

  it('are single-use: a replay is refused', async () => {
    const p = await publish();
    const { res, ticket } = await launch(p);
    expect(res.status).toBe(302);
    const replay = await server.request('GET', `/?ticket=${ticket}`, { host: p.host, headers: FRAME_NAVIGATION });
    expect(replay.status).toBe(403);
    expect(replay.json()).toMatchObject({
      code: 'forbidden',
      detail: expect.stringMatching(/unknown, expired, already used/),
    });
    expect(replay.headers['set-cookie']).toBeUndefined();
  });

  it('are consumed by exactly one of two racing requests', async () => {
    const p = await publish();
    const minted = await mint(binding(p.releaseId));
    const both = await Promise.all(
      [0, 1].map(() =>
        server.request('GET', target(minted.launchUrl).path, { host: p.host, headers: FRAME_NAVIGATION }),
      ),
    );
    expect(both.map((r) => r.status).sort()).toEqual([302, 403]);
  });

  it('last 30 seconds', async () => {
    const p = await publish();
    const fresh = await mint(binding(p.releaseId));
    const stale = await mint(binding(p.releaseId));
    clock.advance(LAUNCH_TICKET_TTL_MS - 1);
    expect(
      (await server.request('GET', target(fresh.launchUrl).path, { host: p.host, headers: FRAME_NAVIGATION })).status,
    ).toBe(302);
    clock.advance(1);
    expect(
      (await server.request('GET', target(stale.launchUrl).path, { host: p.host, headers: FRAME_NAVIGATION })).status,
    ).toBe(403);
  });

  it('work only on their own release host, and are spent by trying another', async () => {
    const a = await publish();
    const b = await publish(sampleApp('b'));
    const minted = await mint(binding(a.releaseId));
    const wrong = await server.request('GET', target(minted.launchUrl).path, {
      host: b.host,
      headers: FRAME_NAVIGATION,
    });
    expect(wrong.status).toBe(403);
    expect(
      (await server.request('GET', target(minted.launchUrl).path, { host: a.host, headers: FRAME_NAVIGATION })).status,
    ).toBe(403);
  });

  it('refuse unknown tickets, empty tickets and two tickets at once', async () => {
    const p = await publish();
    const minted = await mint(binding(p.releaseId));
    for (const path of ['/?ticket=nope', '/?ticket=', `/?ticket=${minted.ticket}&ticket=${minted.ticket}`]) {
      expect((await server.request('GET', path, { host: p.host, headers: FRAME_NAVIGATION })).status).toBe(403);
    }
  });

  it('are minted only for a ready release of the tenant, and never on a revoked grant', async () => {
    const p = await publish();
    const other = await server.enroll();
    await expect(mint(binding(p.releaseId, { tenantId: other.projectId }))).rejects.toMatchObject({
      code: 'not_found',
    });
    const b = binding(p.releaseId);
    await mint(b);
    await expect(mint({ ...b, screenId: 'scr_other' })).rejects.toMatchObject({ code: 'forbidden' });
    await server.services.store.transaction((work) =>
      revokeReleaseGrants(work, { tenantId, grantId: b.grantId }, clock.now()),
    );
    await expect(mint(b)).rejects.toMatchObject({ code: 'forbidden' });
    await server.services.store.db
      .updateTable('releases')
      .set({ state: 'pending' })
      .where('id', '=', p.releaseId)
      .execute();
    await expect(mint(binding(p.releaseId))).rejects.toMatchObject({ code: 'resource_conflict' });
    await server.services.store.db
      .updateTable('releases')
      .set({ state: 'ready' })
      .where('id', '=', p.releaseId)
      .execute();
  });
});

describe('release-grant cookies', () => {
  it('serve the immutable files with their type, a strong ETag and the spec headers', async () => {
    const p = await publish();
    const { jar } = await launch(p);
    const page = await get(p.host, '/', { cookies: jar, headers: FRAME_NAVIGATION });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>hello</title>');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('private, max-age=31536000, immutable');
    expect(page.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    const script = await get(p.host, '/assets/app.js', { cookies: jar });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.text).toBe('document.body.dataset.marker = "hello";\n');
    expect(script.headers['content-length']).toBe(String(script.body.length));
    expect(script.headers.etag).not.toBe(page.headers.etag);
    expect((await get(p.host, '/index.html', { cookies: jar })).headers.etag).toBe(page.headers.etag);
    expect((await get(p.host, '/assets/style.css', { cookies: jar })).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
  });

  it('answer HEAD with the headers only and If-None-Match with 304', async () => {
    const p = await publish();
    const { jar } = await launch(p);
    const head = await server.request('HEAD', '/assets/app.js', { host: p.host, cookies: jar, headers: OWN_SCRIPT });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe('40');
    const again = await get(p.host, '/assets/app.js', {
      cookies: jar,
      headers: { ...OWN_SCRIPT, 'if-none-match': head.headers.etag as string },
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('serve one byte range of a file, and refuse one beyond its end with 416', async () => {
    const p = await publish([
      ...sampleApp(),
      { name: 'clip.mp4', data: '0123456789' },
      { name: 'empty.txt', data: '' },
    ]);
    const { jar } = await launch(p);
    const video = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'video' };
    const whole = await get(p.host, '/clip.mp4', { cookies: jar, headers: video });
    expect(whole.status).toBe(200);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const part = await get(p.host, '/clip.mp4', { cookies: jar, headers: { ...video, range: 'bytes=2-5' } });
    expect(part.status).toBe(206);
    expect(part.text).toBe('2345');
    expect(part.headers['content-range']).toBe('bytes 2-5/10');
    expect(part.headers['content-length']).toBe('4');
    expect(part.headers['content-type']).toBe('video/mp4');
    expect(part.headers['x-content-type-options']).toBe('nosniff');
    const tail = await get(p.host, '/clip.mp4', { cookies: jar, headers: { ...video, range: 'bytes=-3' } });
    expect([tail.status, tail.text]).toEqual([206, '789']);
    const head = await server.request('HEAD', '/clip.mp4', {
      host: p.host,
      cookies: jar,
      headers: { range: 'bytes=8-' },
    });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([206, '2', 0]);
    // If-Range naming another representation asks for the whole file.
    const stale = await get(p.host, '/clip.mp4', {
      cookies: jar,
      headers: { ...video, range: 'bytes=2-5', 'if-range': '"another"' },
    });
    expect([stale.status, stale.text]).toEqual([200, '0123456789']);
    const beyond = await get(p.host, '/clip.mp4', { cookies: jar, headers: { ...video, range: 'bytes=10-' } });
    expect(beyond.status).toBe(416);
    expect(beyond.json().code).toBe('invalid_range');
    expect(beyond.headers['content-range']).toBe('bytes */10');
    expect((await get(p.host, '/clip.mp4', { cookies: jar, headers: { range: 'bytes=0-1,4-5' } })).status).toBe(416);
    const empty = await get(p.host, '/empty.txt', { cookies: jar, headers: { range: 'bytes=0-' } });
    expect([empty.status, empty.body.length]).toEqual([200, 0]);
  });

  it('find NFC and NFD spellings of a name alike', async () => {
    const p = await publish([...sampleApp(), { name: 'cafe\u0301.html', data: 'menu' }]);
    const { jar } = await launch(p);
    expect((await get(p.host, '/caf%C3%A9.html', { cookies: jar })).text).toBe('menu');
    expect((await get(p.host, '/cafe%CC%81.html', { cookies: jar })).text).toBe('menu');
  });

  it('are refused when missing, tampered with, expired or meant for another host', async () => {
    const a = await publish();
    const b = await publish(sampleApp('b'));
    const { jar } = await launch(a);
    expect((await get(a.host, '/')).status).toBe(403);
    const value = jar.get(a.host, RELEASE_GRANT_COOKIE)!;
    const tampered = new CookieJar();
    tampered.set(a.host, RELEASE_GRANT_COOKIE, `${value.slice(0, -2)}xx`);
    expect((await get(a.host, '/', { cookies: tampered })).status).toBe(403);
    const moved = new CookieJar();
    moved.set(b.host, RELEASE_GRANT_COOKIE, value);
    const elsewhere = await get(b.host, '/', { cookies: moved });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json().detail).toMatch(/for another release host/);
    // A second copy of the cookie, valid or not, makes it ambiguous: refused, never guessed.
    const doubled = await get(a.host, '/', {
      headers: { ...OWN_SCRIPT, cookie: `${RELEASE_GRANT_COOKIE}=${value}; ${RELEASE_GRANT_COOKIE}=planted` },
    });
    expect(doubled.status).toBe(403);
    clock.advance(24 * 3600_000);
    const expired = await get(a.host, '/', { cookies: jar });
    expect(expired.status).toBe(403);
  });

  it('stop working the moment their grant, or every grant of the screen, is revoked', async () => {
    const p = await publish();
    const first = binding(p.releaseId, { screenId: 'scr_revoke' });
    const { jar } = await launch(p, first);
    expect((await get(p.host, '/', { cookies: jar })).status).toBe(200);
    await server.services.store.transaction((work) =>
      revokeReleaseGrants(work, { tenantId, grantId: first.grantId }, clock.now()),
    );
    const revoked = await get(p.host, '/', { cookies: jar });
    expect(revoked.status).toBe(403);
    expect(revoked.json().detail).toMatch(/revoked/);

    const second = await launch(p, binding(p.releaseId, { screenId: 'scr_revoke' }));
    const pending = await mint(binding(p.releaseId, { screenId: 'scr_revoke' }));
    expect((await get(p.host, '/', { cookies: second.jar })).status).toBe(200);
    const count = await server.services.store.transaction((work) =>
      revokeReleaseGrants(work, { tenantId, screenId: 'scr_revoke' }, clock.now()),
    );
    expect(count).toBe(2);
    expect((await get(p.host, '/', { cookies: second.jar })).status).toBe(403);
    // A ticket minted before the revocation is dropped with it.
    expect(
      (await server.request('GET', target(pending.launchUrl).path, { host: p.host, headers: FRAME_NAVIGATION })).status,
    ).toBe(403);
  });

  it('are refused once the application is deleted', async () => {
    const p = await publish();
    const { jar } = await launch(p);
    expect((await server.request('DELETE', `/api/v1/applications/${p.applicationId}`, { token })).status).toBe(204);
    expect((await get(p.host, '/', { cookies: jar })).status).toBe(403);
  });

  it('are the only credential: a bearer token authorizes nothing here', async () => {
    const p = await publish();
    const res = await get(p.host, '/', { token });
    expect(res.status).toBe(403);
  });
});

describe('the player origin a release host answers (/.marquee/player-origin)', () => {
  /** What the bridge child sends: a same-origin fetch from the release's own page. */
  const CHILD_FETCH = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };

  it('answers the configured play origin as no-store JSON, to GET and HEAD, with a valid grant cookie', async () => {
    const p = await publish();
    const { jar } = await launch(p);
    const res = await get(p.host, '/.marquee/player-origin', { cookies: jar, headers: CHILD_FETCH });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ player_origin: server.config.playOrigin });
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers.etag).toBeUndefined();
    const head = await server.request('HEAD', '/.marquee/player-origin', {
      host: p.host,
      cookies: jar,
      headers: CHILD_FETCH,
    });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(
      String(Buffer.byteLength(JSON.stringify({ player_origin: server.config.playOrigin }))),
    );
  });

  it('is authorized exactly like a file: refused without, with a foreign or with a revoked cookie', async () => {
    const a = await publish();
    const b = await publish(sampleApp('b2'));
    const b1 = binding(a.releaseId);
    const { jar } = await launch(a, b1);
    for (const [options, detail] of [
      [{}, /needs a valid release-grant cookie/],
      [{ token }, /needs a valid release-grant cookie/],
    ] as const) {
      const res = await get(a.host, '/.marquee/player-origin', { ...options, headers: CHILD_FETCH });
      expect(res.status).toBe(403);
      expect(res.json().code).toBe('forbidden');
      expect(res.json().detail).toMatch(detail);
    }
    const moved = new CookieJar();
    moved.set(b.host, RELEASE_GRANT_COOKIE, jar.get(a.host, RELEASE_GRANT_COOKIE)!);
    expect(
      (await get(b.host, '/.marquee/player-origin', { cookies: moved, headers: CHILD_FETCH })).json().detail,
    ).toMatch(/for another release host/);
    // Another site may not read it with the frame's cookie either.
    expect(
      (
        await get(a.host, '/.marquee/player-origin', {
          cookies: jar,
          headers: { ...CHILD_FETCH, 'sec-fetch-site': 'cross-site' },
        })
      ).status,
    ).toBe(403);
    await server.services.store.transaction((work) =>
      revokeReleaseGrants(work, { tenantId, grantId: b1.grantId }, clock.now()),
    );
    const revoked = await get(a.host, '/.marquee/player-origin', { cookies: jar, headers: CHILD_FETCH });
    expect(revoked.status).toBe(403);
    expect(revoked.json().detail).toMatch(/revoked/);
    // A host that names no ready release answers as for any file.
    expect(
      (
        await get(`${'0'.repeat(40)}.release.localhost:${server.port}`, '/.marquee/player-origin', {
          headers: CHILD_FETCH,
        })
      ).json().detail,
    ).toMatch(/serves no ready release/);
  });

  it('never consumes a launch ticket: one sent here stays good for the frame navigation', async () => {
    const p = await publish();
    const minted = await mint(binding(p.releaseId));
    const here = await server.request('GET', `/.marquee/player-origin?ticket=${minted.ticket}`, {
      host: p.host,
      headers: FRAME_NAVIGATION,
    });
    expect(here.status).toBe(403);
    expect(here.headers['set-cookie']).toBeUndefined();
    const jar = new CookieJar();
    expect(
      (
        await server.request('GET', target(minted.launchUrl).path, {
          host: p.host,
          cookies: jar,
          headers: FRAME_NAVIGATION,
        })
      ).status,
    ).toBe(302);
    expect((await get(p.host, '/.MARQUEE/player-origin', { cookies: jar, headers: CHILD_FETCH })).json()).toEqual({
      player_origin: server.config.playOrigin,
    });
  });

  it('cannot be shadowed by an archive: .marquee/ entries are refused at upload', async () => {
    const fixture = archiveOf([
      ...sampleApp('shadow'),
      { name: '.marquee/player-origin', data: '{"player_origin":"https://evil.example"}' },
    ]);
    clock.advance(60_000);
    const res = await server.request('POST', '/api/v1/applications', {
      token,
      idempotencyKey: randomKey(),
      body: fixture.body,
      headers: uploadHeadersOf(fixture.declaration),
    });
    expect(res.status).toBe(202);
    await server.services.operations.idle();
    const operation = await server.request('GET', `/api/v1/operations/${res.json().operation_id}`, { token });
    expect(operation.json().state).toBe('failed');
    expect(operation.json().error.errors[0].code).toBe('reserved_path');
  });
});

describe('housekeeping', () => {
  it('prunes expired tickets and grants revoked longer ago than a cookie lives', async () => {
    const p = await publish();
    const b = binding(p.releaseId, { screenId: 'scr_prune' });
    await mint(b);
    await server.services.store.transaction((work) =>
      revokeReleaseGrants(work, { tenantId, grantId: 'gr_none' }, clock.now()),
    );
    await server.services.store.transaction((work) =>
      revokeReleaseGrants(work, { tenantId, screenId: 'scr_prune' }, clock.now()),
    );
    const count = async () => ({
      tickets: (
        await server.services.store.db
          .selectFrom('launch_tickets')
          .select('ticket_hash')
          .where('screen_id', '=', 'scr_prune')
          .execute()
      ).length,
      grants: (
        await server.services.store.db.selectFrom('release_grants').select('id').where('id', '=', b.grantId).execute()
      ).length,
    });
    expect(await count()).toEqual({ tickets: 0, grants: 1 }); // revocation dropped the unspent ticket
    await mint(binding(p.releaseId, { screenId: 'scr_prune_live' }));
    clock.advance(LAUNCH_TICKET_TTL_MS);
    await server.services.housekeeping.runAll();
    expect(
      await server.services.store.db
        .selectFrom('launch_tickets')
        .select('ticket_hash')
        .where('screen_id', '=', 'scr_prune_live')
        .execute(),
    ).toEqual([]);
    expect((await count()).grants).toBe(1);
    clock.advance(24 * 3600_000);
    await server.services.housekeeping.runAll();
    expect((await count()).grants).toBe(0);
  });
});

describe('what a release host never reveals or allows', () => {
  it('answers one 404 for missing files, directories and every traversal, encoded or not', async () => {
    const p = await publish();
    const { jar } = await launch(p);
    const paths = [
      '/missing.js',
      '/assets',
      '/assets/',
      '/%2e%2e/%2e%2e/secret.key',
      '/assets/%2e%2e/index.html',
      '/assets/..%2findex.html',
      '/assets%2fapp.js',
      '/..%5cindex.html',
      '/../../marquee.db',
      '/./index.html',
      '//index.html',
      '/index.html%00.js',
    ];
    const bodies = new Set<string>();
    for (const path of paths) {
      const res = await get(p.host, path, { cookies: jar });
      expect(res.status, path).toBe(404);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      bodies.add(JSON.stringify({ ...res.json(), request_id: undefined, instance: undefined }));
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain('no such file in this release');
  });

  it('refuses every method but GET and HEAD with 403', async () => {
    const p = await publish();
    const { jar } = await launch(p);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await server.request(method, '/index.html', { host: p.host, cookies: jar });
      expect(res.status, method).toBe(403);
      expect(res.json().code).toBe('forbidden');
    }
  });

  it('refuses contradictory Fetch Metadata without spending the ticket', async () => {
    const p = await publish();
    const minted = await mint(binding(p.releaseId));
    const path = target(minted.launchUrl).path;
    const asImage = await server.request('GET', path, {
      host: p.host,
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'image' },
    });
    expect(asImage.status).toBe(403);
    expect(asImage.json().detail).toMatch(/contradictory Fetch Metadata/);
    const asScript = await server.request('GET', path, {
      host: p.host,
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
    });
    expect(asScript.status).toBe(403);
    const jar = new CookieJar();
    expect((await server.request('GET', path, { host: p.host, cookies: jar, headers: FRAME_NAVIGATION })).status).toBe(
      302,
    );
    // Another site may not load the release's files with the grant.
    const foreign = await get(p.host, '/assets/app.js', {
      cookies: jar,
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
    });
    expect(foreign.status).toBe(403);
    expect((await get(p.host, '/assets/app.js', { cookies: jar, headers: OWN_SCRIPT })).status).toBe(200);
    // Native clients send no Fetch Metadata at all.
    expect((await server.request('GET', '/assets/app.js', { host: p.host, cookies: jar })).status).toBe(200);
  });

  it('serves nothing on a host that names no ready release', async () => {
    const unknown = await get(`${'0'.repeat(40)}.release.localhost:${server.port}`, '/');
    expect(unknown.status).toBe(403);
    const malformed = await get(`not-a-label.release.localhost:${server.port}`, '/');
    expect(malformed.status).toBe(403);
  });

  it('treats a client that hangs up mid-download as an ended answer, not an unexpected error', async () => {
    // 30 MB: more than loopback socket buffers hold, so the answer cannot finish by itself.
    const p = await publish([...sampleApp(), { name: 'big.bin', zeros: 30_000_000 }]);
    const { jar } = await launch(p);
    const logged = server.logs.length;
    await new Promise<void>((resolve) => {
      const req = server.rawRequest('GET', '/big.bin', { host: p.host, cookies: jar, headers: OWN_SCRIPT }, (res) => {
        expect(res.statusCode).toBe(200);
        res.destroy();
        resolve();
      });
      req.on('error', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 200));
    const written = server.logs.slice(logged).join('');
    expect(written).toContain('"path":"/big.bin"');
    expect(written).not.toContain('unexpected error');
    expect(written).not.toContain('"level":50');
  });

  it('never writes tickets or grant cookies to the log', async () => {
    const p = await publish();
    const { jar, ticket } = await launch(p);
    await get(p.host, '/assets/app.js', { cookies: jar });
    await server.request('GET', `/?ticket=${ticket}`, { host: p.host, headers: FRAME_NAVIGATION });
    const logs = server.logText();
    expect(logs).toContain('"path":"/"');
    expect(logs).not.toContain(ticket);
    expect(logs).not.toContain(jar.get(p.host, RELEASE_GRANT_COOKIE)!);
    expect(logs).not.toContain('ticket=');
  });
});
