// The dashboard's project routes (/dashboard/v1/*): twins of /api/v1 routes behind the session cookie
// only, with CSRF, the session's project as the tenant, no metering, and the person as actor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAsMember, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { SmtpCapture } from '../mail/mail.fixtures';
import { archiveOf, sampleApp, uploadHeadersOf } from '../applications/archive-fixtures';
import { image, sha256, uploadReady } from '../media/media.fixtures';
import { pairActiveScreen, parseSse, startPairing } from '../pairing/pairing.fixtures';
import { imageDoc } from '../playlists/content.fixtures';
import { dashboardProject } from './dashboard-twin';
import { routeTable } from '../routes';
import type { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { randomKey, TestServer } from '../testing/harness';

let smtp: SmtpCapture;
let server: TestServer;
let token: string;
let otherToken: string;
let ada: DashboardBrowser;
/** Ids of the other project's resources: each must be not_found through Ada's session. */
const theirs = { screen: '', media: '', playlist: '', invitation: '', operation: '', application: '' };
const ours = { screen: '', media: '', playlist: '', application: '' };

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  server = await TestServer.start({ config: { smtpUrl: smtp.url }, tuning: { passwordHash: TEST_PASSWORD_COST } });
  ({ token } = await server.enroll({ project_name: 'Lobby screens' }));
  ({ token: otherToken } = await server.enroll({ project_name: 'Someone else' }));
  ada = await joinAsMember(server, smtp, token, 'ada@example.com', { name: 'Ada' });

  for (const [which, bearer] of [
    [ours, token],
    [theirs, otherToken],
  ] as const) {
    which.screen = (await pairActiveScreen(server, bearer)).screen.id;
    const media = await uploadReady(server, bearer, await image('png'), 'image/png');
    which.media = media.id;
    const playlist = await server.request('POST', '/api/v1/playlists', {
      token: bearer,
      json: imageDoc(media.id),
      idempotencyKey: randomKey(),
    });
    expect(playlist.status, playlist.text).toBe(201);
    which.playlist = playlist.json().id;
  }
  const invited = await server.request('POST', '/api/v1/invitations', {
    token: otherToken,
    idempotencyKey: randomKey(),
    json: { kind: 'project_member', emails: ['eve@example.com'] },
  });
  theirs.invitation = invited.json().items[0].id;
  const media = await server.request('GET', `/api/v1/media/${theirs.media}`, { token: otherToken });
  theirs.operation = media.json().operation_id;
  for (const [which, bearer] of [
    [ours, token],
    [theirs, otherToken],
  ] as const) {
    const app = archiveOf(sampleApp());
    const uploaded = await server.request('POST', '/api/v1/applications', {
      token: bearer,
      headers: uploadHeadersOf(app.declaration),
      body: app.body,
      idempotencyKey: randomKey(),
    });
    expect(uploaded.status, uploaded.text).toBe(202);
    which.application = uploaded.json().id;
  }
  await server.services.operations.idle();
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

/** A takeover of our playlist for an hour from now. */
const takeover = () => ({
  playlist_id: ours.playlist,
  until: new Date(Date.now() + 3_600_000).toISOString(),
  reason: 'Fire drill',
});

/** Every project route of the dashboard, with a body it accepts. */
const twins = () =>
  [
    ['GET', '/dashboard/v1/screens'],
    ['POST', '/dashboard/v1/screens/pair', { code: 'ABCDEF' }],
    ['GET', `/dashboard/v1/screens/${ours.screen}`],
    ['PATCH', `/dashboard/v1/screens/${ours.screen}`, { name: 'Lobby' }],
    ['POST', `/dashboard/v1/screens/${ours.screen}/archive`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/unarchive`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/reload`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/toast`, { level: 'info', text: 'Hello' }],
    ['DELETE', '/dashboard/v1/screens/scr_nothing'],
    ['POST', `/dashboard/v1/screens/${ours.screen}/recovery/confirm`],
    ['POST', '/dashboard/v1/screens/actions', { selector: { tag: 'lobby' }, action: { type: 'reload' } }],
    ['GET', `/dashboard/v1/screens/${ours.screen}/playlist-schedule`],
    ['PUT', `/dashboard/v1/screens/${ours.screen}/playlist-schedule`, { entries: [] }],
    ['DELETE', `/dashboard/v1/screens/${ours.screen}/playlist-schedule`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/takeover`, takeover()],
    ['POST', `/dashboard/v1/screens/${ours.screen}/takeover/clear`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/reboot`],
    ['GET', `/dashboard/v1/screens/${ours.screen}/display`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/display`, { power: 'off' }],
    ['POST', `/dashboard/v1/screens/${ours.screen}/display/clear`],
    ['PUT', `/dashboard/v1/screens/${ours.screen}/display-schedule`, { on: [{ days: ['mon'] }] }],
    ['DELETE', `/dashboard/v1/screens/${ours.screen}/display-schedule`],
    ['POST', `/dashboard/v1/screens/${ours.screen}/screenshot`],
    ['GET', `/dashboard/v1/screens/${ours.screen}/screenshot`],
    ['GET', `/dashboard/v1/screens/${ours.screen}/screenshot/status`],
    ['GET', '/dashboard/v1/playlists'],
    ['GET', `/dashboard/v1/playlists/${ours.playlist}`],
    ['GET', '/dashboard/v1/media'],
    [
      'POST',
      '/dashboard/v1/media/uploads',
      { filename: 'a.png', content_type: 'image/png', bytes: 10, sha256: 'a'.repeat(64) },
    ],
    [
      'POST',
      '/dashboard/v1/media/uploads/upl_nothing/commit',
      { content_type: 'image/png', bytes: 10, sha256: 'a'.repeat(64) },
    ],
    ['GET', `/dashboard/v1/media/${ours.media}`],
    ['DELETE', `/dashboard/v1/media/${ours.media}`],
    ['GET', `/dashboard/v1/media/${ours.media}/content`],
    ['GET', '/dashboard/v1/operations/op_nothing'],
    ['GET', '/dashboard/v1/events'],
    ['GET', '/dashboard/v1/invitations'],
    ['POST', '/dashboard/v1/invitations', { kind: 'project_member', emails: ['x@example.com'] }],
    ['POST', '/dashboard/v1/invitations/inv_nothing/revoke'],
    ['GET', '/dashboard/v1/applications'],
    ['POST', '/dashboard/v1/applications'],
    ['GET', `/dashboard/v1/applications/${ours.application}`],
    ['DELETE', '/dashboard/v1/applications/app_nothing'],
    ['POST', `/dashboard/v1/applications/${ours.application}/releases`],
    ['GET', `/dashboard/v1/applications/${ours.application}/kv`],
    ['GET', `/dashboard/v1/applications/${ours.application}/kv/greeting`],
    [
      'PUT',
      `/dashboard/v1/applications/${ours.application}/kv/greeting`,
      { value_base64: 'aGk=', content_type: 'text/plain' },
    ],
    ['DELETE', `/dashboard/v1/applications/${ours.application}/kv/greeting`],
    ['GET', '/dashboard/v1/playback'],
  ] as [string, string, unknown?][];

describe('the realm: the session cookie only', () => {
  it('refuses every project route without a session, and with a bearer even beside the cookie', async () => {
    for (const [method, path, json] of twins()) {
      const bare = await server.request(method, path, {
        host: ada.host,
        json,
        headers: { origin: ada.origin, 'sec-fetch-site': 'same-origin' },
      });
      expect(bare.status, `${method} ${path} without a cookie`).toBe(401);
      const bearer = await ada.request(method, path, { json, headers: { authorization: `Bearer ${token}` } });
      expect(bearer.status, `${method} ${path} with a bearer`).toBe(401);
    }
  });

  it('refuses every change without the session’s CSRF token or from another origin', async () => {
    for (const [method, path, json] of twins().filter(([m]) => m !== 'GET')) {
      const noToken = await ada.request(method, path, { json, headers: { 'marquee-csrf-token': 'wrong' } });
      expect(noToken.status, `${method} ${path} with a wrong token`).toBe(403);
      const elsewhere = await ada.request(method, path, { json, headers: { origin: 'http://evil.localhost' } });
      expect(elsewhere.status, `${method} ${path} from another origin`).toBe(403);
    }
  });

  it('is not served on the control origin, and /api/v1 never takes the dashboard cookie', async () => {
    expect((await server.request('GET', '/dashboard/v1/screens', { token })).status).toBe(404);
    const cookie = `__Host-marquee-dashboard=${ada.sessionCookie}`;
    const api = await server.request('GET', '/api/v1/screens', { headers: { cookie } });
    expect(api.status).toBe(401);
  });
});

describe('the tenant is the session’s project', () => {
  it('answers not_found for another project’s screen, media, playlist, invitation and operation', async () => {
    const cases: [string, string, unknown?][] = [
      ['GET', `/dashboard/v1/screens/${theirs.screen}`],
      ['PATCH', `/dashboard/v1/screens/${theirs.screen}`, { name: 'Mine now' }],
      ['POST', `/dashboard/v1/screens/${theirs.screen}/archive`],
      ['POST', `/dashboard/v1/screens/${theirs.screen}/reload`],
      ['POST', `/dashboard/v1/screens/${theirs.screen}/toast`, { level: 'info', text: 'Hi' }],
      ['DELETE', `/dashboard/v1/screens/${theirs.screen}`],
      ['POST', `/dashboard/v1/screens/${theirs.screen}/takeover`, { ...takeover(), playlist_id: theirs.playlist }],
      ['POST', `/dashboard/v1/screens/${theirs.screen}/display`, { power: 'off' }],
      ['GET', `/dashboard/v1/screens/${theirs.screen}/playlist-schedule`],
      ['POST', `/dashboard/v1/screens/${theirs.screen}/screenshot`],
      ['GET', `/dashboard/v1/screens/${theirs.screen}/screenshot/status`],
      ['GET', `/dashboard/v1/playlists/${theirs.playlist}`],
      ['GET', `/dashboard/v1/media/${theirs.media}`],
      ['GET', `/dashboard/v1/media/${theirs.media}/content`],
      ['DELETE', `/dashboard/v1/media/${theirs.media}`],
      ['POST', `/dashboard/v1/invitations/${theirs.invitation}/revoke`],
      ['GET', `/dashboard/v1/operations/${theirs.operation}`],
      ['GET', `/dashboard/v1/applications/${theirs.application}`],
      ['GET', `/dashboard/v1/applications/${theirs.application}/kv`],
      [
        'PUT',
        `/dashboard/v1/applications/${theirs.application}/kv/k`,
        { value_base64: 'aGk=', content_type: 'text/plain' },
      ],
      ['DELETE', `/dashboard/v1/applications/${theirs.application}`],
      ['GET', `/dashboard/v1/playback?application_id=${theirs.application}`],
      // A key the handler refuses (a control character): ownership is judged first.
      ['GET', `/dashboard/v1/applications/${theirs.application}/kv/a%00b`],
      [
        'PUT',
        `/dashboard/v1/applications/${theirs.application}/kv/a%00b`,
        { value_base64: 'aGk=', content_type: 'text/plain' },
      ],
    ];
    for (const [method, path, json] of cases) {
      const res = await ada.request(method, path, { json, headers: { 'idempotency-key': randomKey() } });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404);
      expect(res.json().type).toMatch(/not-found$/);
    }
    // Assigning another project's playlist to our screen is refused as well.
    const assign = await ada.request('PATCH', `/dashboard/v1/screens/${ours.screen}`, {
      json: { playlist_id: theirs.playlist },
    });
    expect(assign.status).toBeGreaterThanOrEqual(400);
    expect(assign.status).toBeLessThan(500);
  });

  it('lists what /api/v1 lists for the project, in the same shape, without credit headers', async () => {
    for (const path of ['/screens', '/playlists', '/media']) {
      const mine = await ada.request('GET', `/dashboard/v1${path}`);
      const agent = await server.request('GET', `/api/v1${path}`, { token });
      expect(mine.status).toBe(200);
      expect(mine.json().items, path).toEqual(agent.json().items);
      expect(mine.headers['marquee-credits-remaining']).toBeUndefined();
    }
  });

  it('keeps the project’s data out of every cache: each twin answer is private, no-store unless the route says more', async () => {
    // A browser keeps what it is not told to drop; on a shared computer the next person would find
    // the project's screens, members and events in its disk cache after sign-out (D-472).
    for (const path of [
      '/screens',
      `/screens/${ours.screen}`,
      '/playlists',
      '/media',
      `/media/${ours.media}`,
      '/events',
    ]) {
      const res = await ada.request('GET', `/dashboard/v1${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers['cache-control'], path).toBe('private, no-store');
    }
    const missing = await ada.request('GET', '/dashboard/v1/screens/scr_unknown000000000000');
    expect(missing.status).toBe(404);
    expect(missing.headers['cache-control']).toBe('no-store');
    // And every other twin a browser reads, whatever Cache-Control its route sets of its own.
    const twins = routeTable.filter(
      (e) => e.route.policy.auth === dashboardProject && e.method === 'GET' && !e.path.endsWith('/stream'),
    );
    expect(twins.length).toBeGreaterThan(15);
    const idOf = { screens: ours.screen, playlists: ours.playlist, media: ours.media, applications: ours.application };
    for (const entry of twins) {
      const path = entry.path
        .replace(
          /\/(screens|playlists|media|applications)\/:id/,
          (_m, noun: keyof typeof idOf) => `/${noun}/${idOf[noun]}`,
        )
        .replace(/:[a-z_]+/g, 'x');
      const res = await ada.request('GET', path);
      expect(res.headers['cache-control'], `${path} → ${res.status}`).toMatch(/\bno-store\b/);
    }
  });
});

describe('changes name the person as actor', () => {
  it('pairs a code, assigns a playlist and records both with Ada as actor; agents’ events carry none', async () => {
    const { code } = await startPairing(server);
    const paired = await ada.request('POST', '/dashboard/v1/screens/pair', {
      json: { code, label: 'Reception' },
      headers: { 'idempotency-key': randomKey() },
    });
    expect(paired.status, paired.text).toBe(201);
    const screen = paired.json().screen;
    const assigned = await ada.request('PATCH', `/dashboard/v1/screens/${screen.id}`, {
      json: { playlist_id: ours.playlist, tags: ['lobby'] },
    });
    expect(assigned.status, assigned.text).toBe(200);
    expect(assigned.json()).toMatchObject({ playlist_id: ours.playlist, tags: ['lobby'] });

    const events = (await server.request('GET', '/api/v1/events?limit=200', { token })).json().items as any[];
    const person = (await ada.request('GET', '/dashboard/v1/session')).json();
    const ofScreen = events.filter((e) => e.resource?.id === screen.id);
    expect(ofScreen.map((e) => e.type)).toEqual(expect.arrayContaining(['screen.paired', 'screen.updated']));
    for (const event of ofScreen)
      expect(event.actor, event.type).toEqual({ user_id: person.person_id, display_name: 'Ada' });
    const byAgent = events.find((e) => e.type === 'playlist.created');
    expect(byAgent).toBeDefined();
    expect(byAgent.actor).toBeUndefined();
  });

  it('streams the project’s events and ends the stream when the session signs out', async () => {
    const browser = await joinAsMember(server, smtp, token, 'bo@example.com', { name: 'Bo' });
    let text = '';
    const ended = new Promise<number>((resolve, reject) => {
      server
        .rawRequest(
          'GET',
          '/dashboard/v1/events/stream',
          { host: browser.host, cookies: browser.jar, headers: { 'sec-fetch-site': 'same-origin' } },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve(res.statusCode!));
          },
        )
        .on('error', reject);
    });
    const reload = await ada.request('POST', `/dashboard/v1/screens/${ours.screen}/reload`, {
      headers: { 'idempotency-key': randomKey() },
    });
    expect(reload.status, reload.text).toBe(202);
    await expect.poll(() => parseSse(text).some((f) => f.data?.type === 'player.reload')).toBe(true);
    expect((await browser.request('POST', '/dashboard/v1/logout')).status).toBe(204);
    expect(await ended).toBe(200);
  });
});

describe('fleet control from the dashboard', () => {
  it('runs a fleet action by tag with the answer /api/v1 gives, each screen’s event naming the person', async () => {
    const tagged = await ada.request('PATCH', `/dashboard/v1/screens/${ours.screen}`, { json: { tags: ['foyer'] } });
    expect(tagged.status, tagged.text).toBe(200);
    const action = { selector: { tag: 'foyer' }, action: { type: 'takeover', ...takeover() } };
    const mine = await ada.request('POST', '/dashboard/v1/screens/actions', {
      json: action,
      headers: { 'idempotency-key': randomKey() },
    });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.json()).toMatchObject({ action: 'takeover', succeeded: 1, failed: 0 });
    expect(mine.json().results).toEqual([expect.objectContaining({ screen_id: ours.screen, ok: true })]);
    const agent = await server.request('POST', '/api/v1/screens/actions', {
      token,
      json: { ...action, action: { type: 'takeover_clear' } },
      idempotencyKey: randomKey(),
    });
    expect(agent.json()).toMatchObject({ action: 'takeover_clear', succeeded: 1, failed: 0 });

    const events = (await server.request('GET', '/api/v1/events?limit=200', { token })).json().items as any[];
    const takeovers = events.filter((e) => e.resource?.id === ours.screen && e.type === 'screen.takeover_changed');
    const started = takeovers.find((e) => e.details.reason === 'Fire drill');
    expect(started?.actor?.display_name).toBe('Ada');
    const cleared = takeovers.find((e) => e.details.playlist_id === null);
    expect(cleared).toBeDefined();
    expect(cleared.actor).toBeUndefined();
  });

  it('sets and reads a display state and a playlist schedule through the twins', async () => {
    const off = await ada.request('POST', `/dashboard/v1/screens/${ours.screen}/display`, {
      json: { power: 'off' },
    });
    expect(off.status, off.text).toBe(200);
    // Schedules are evaluated in the screen's time zone: one is set first (else invalid_request on timezone).
    const zone = await ada.request('PATCH', `/dashboard/v1/screens/${ours.screen}`, {
      json: { timezone: 'Europe/Paris' },
    });
    expect(zone.status, zone.text).toBe(200);
    const schedule = { on: [{ days: ['mon', 'tue'], start: '08:00', end: '18:00' }] };
    const put = await ada.request('PUT', `/dashboard/v1/screens/${ours.screen}/display-schedule`, { json: schedule });
    expect(put.status, put.text).toBe(200);
    const display = await ada.request('GET', `/dashboard/v1/screens/${ours.screen}/display`);
    expect(display.json()).toEqual({ power: 'off', schedule });
    const agent = await server.request('GET', `/api/v1/screens/${ours.screen}/display`, { token });
    expect(agent.json()).toEqual(display.json());

    const bad = await ada.request('PUT', `/dashboard/v1/screens/${ours.screen}/playlist-schedule`, {
      json: {
        entries: [
          {
            playlist_id: ours.playlist,
            rule: { enabled: true, windows: [{ days: ['mon'], start: '25:00', end: '26:00' }] },
          },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toContain('entries.0.rule.windows.0.start');
  });
});

describe('media from the dashboard', () => {
  it('uploads through the same declare → signed PUT → commit flow, the PUT on the dashboard origin', async () => {
    const bytes = await image('png', 32, 32);
    const declared = await ada.request('POST', '/dashboard/v1/media/uploads', {
      json: { filename: 'poster.png', content_type: 'image/png', bytes: bytes.length, sha256: sha256(bytes) },
      headers: { 'idempotency-key': randomKey() },
    });
    expect(declared.status, declared.text).toBe(201);
    const session = declared.json();
    const url = new URL(session.upload_url);
    expect(url.origin).toBe(ada.origin);
    const put = await server.request('PUT', url.pathname + url.search, {
      host: ada.host,
      headers: session.headers,
      body: bytes,
    });
    expect(put.status, put.text).toBe(200);
    const committed = await ada.request('POST', `/dashboard/v1/media/uploads/${session.id}/commit`, {
      json: { content_type: 'image/png', bytes: bytes.length, sha256: sha256(bytes) },
      headers: { 'idempotency-key': randomKey() },
    });
    expect(committed.status, committed.text).toBe(202);
    await server.services.operations.idle();
    const op = (await ada.request('GET', `/dashboard/v1/operations/${session.operation.id}`)).json();
    expect(op.state).toBe('succeeded');
    const media = await ada.request('GET', `/dashboard/v1/media/${op.result.media_id}`);
    expect(media.json()).toMatchObject({ filename: 'poster.png', state: 'ready' });
    const content = await ada.request('GET', `/dashboard/v1/media/${op.result.media_id}/content`);
    expect(content.body.equals(bytes)).toBe(true);
  });
});

describe('applications, key/value and proof of play from the dashboard', () => {
  it('uploads an archive and a release, reads and writes its key/value store, and reads proof of play', async () => {
    const archive = archiveOf(sampleApp('from the dashboard'));
    const send = (path: string) =>
      server.request('POST', path, {
        host: ada.host,
        cookies: ada.jar,
        headers: {
          origin: ada.origin,
          'sec-fetch-site': 'same-origin',
          'marquee-csrf-token': ada.csrf,
          'idempotency-key': randomKey(),
          ...uploadHeadersOf(archive.declaration, { 'marquee-application-name': 'Lobby board' }),
        },
        body: archive.body,
      });
    const uploaded = await send('/dashboard/v1/applications');
    expect(uploaded.status, uploaded.text).toBe(202);
    await server.services.operations.idle();
    const { id, release_id, operation_id } = uploaded.json();
    expect((await ada.request('GET', `/dashboard/v1/operations/${operation_id}`)).json().state).toBe('succeeded');
    const app = await ada.request('GET', `/dashboard/v1/applications/${id}`);
    expect(app.json()).toMatchObject({ name: 'Lobby board', state: 'ready', latest_ready_release: release_id });
    const list = (await ada.request('GET', '/dashboard/v1/applications')).json();
    expect(list.items.map((a: { id: string }) => a.id)).toContain(id);

    const release = await send(`/dashboard/v1/applications/${id}/releases`);
    expect(release.status, release.text).toBe(202);
    await server.services.operations.idle();
    const again = (await ada.request('GET', `/dashboard/v1/applications/${id}`)).json();
    expect(again.latest_ready_release).toBe(release.json().release_id);

    const kv = `/dashboard/v1/applications/${id}/kv`;
    const put = await ada.request('PUT', `${kv}/greeting`, {
      json: { value_base64: Buffer.from('hello').toString('base64'), content_type: 'text/plain' },
      headers: { 'idempotency-key': randomKey() },
    });
    expect(put.status, put.text).toBe(200);
    expect((await ada.request('GET', kv)).json().items.map((e: { key: string }) => e.key)).toEqual(['greeting']);
    const read = await ada.request('GET', `${kv}/greeting`);
    expect(Buffer.from(read.json().value_base64, 'base64').toString()).toBe('hello');
    const removed = await ada.request('DELETE', `${kv}/greeting`, {
      headers: { 'idempotency-key': randomKey(), 'if-match': '"1"' },
    });
    expect(removed.status, removed.text).toBe(204);
    const events = (await ada.request('GET', '/dashboard/v1/events?limit=200')).json().items;
    const deleted = events.find((e: { type: string }) => e.type === 'kv.deleted');
    expect(deleted?.actor).toMatchObject({ display_name: 'Ada' });

    const plays = await ada.request('GET', `/dashboard/v1/playback?application_id=${id}`);
    expect(plays.status, plays.text).toBe(200);
    expect(plays.json()).toEqual({ items: [], next_cursor: null });
    const csv = await ada.request('GET', '/dashboard/v1/playback?format=csv');
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.text.split('\r\n')[0]).toMatch(/^day,screen_id,/);
  });
});

describe('the dashboard app', () => {
  it('serves its shell for page paths, framed by no one, and keeps the access page for links and approvals', async () => {
    for (const path of ['/', '/screens', '/screens/scr_x']) {
      const res = await server.request('GET', path, { host: ada.host });
      // 200 once `npm run build:web` ran, 503 with the way to build it before.
      expect([200, 503], path).toContain(res.status);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    for (const path of ['/access', '/connect/agc_x']) {
      const res = await server.request('GET', path, { host: ada.host });
      expect(res.status, path).toBe(200);
      expect(res.text).toContain('/access/access.js');
    }
    expect((await server.request('GET', '/dashboard/v1/nothing', { host: ada.host })).status).toBe(404);
    expect((await server.request('GET', '/assets/..%2F..%2Fpackage.json', { host: ada.host })).status).toBe(404);
  });
});
