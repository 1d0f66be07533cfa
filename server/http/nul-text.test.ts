// U+0000 in a request (D-471): PostgreSQL's text cannot hold or even compare it, so before this a
// NUL in a screen name, a takeover reason, an enrollment field, a public id, a path id or a cursor
// was a 500 there (and stored on SQLite). It is refused alike on every store: a body string as
// invalid_request, a path id as not_found, a cursor as one this server never issued.
import { beforeAll, describe, expect, it } from 'vitest';
import { imageDoc } from '../playlists/content.fixtures';
import { createPlaylist, pairedPlayer, storedMedia, useEnrolledServer, type Player } from '../runtime/runtime.fixtures';
import { runOperatorCommand } from '../operators/operator-cli';
import { clientId, randomKey } from '../testing/harness';

const env = useEnrolledServer();
let player: Player;
let playlist: string;

beforeAll(async () => {
  player = await pairedPlayer(env.server, env.token);
  playlist = await createPlaylist(
    env.server,
    env.token,
    imageDoc(await storedMedia(env.server, env.tenantId, Buffer.from('x'))),
  );
});

const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('a NUL character in a request', () => {
  it('in a body string is invalid_request, on bearer, anonymous and runtime routes alike', async () => {
    const { server, token } = env;
    const cases: [string, string, unknown, { token?: string; cookies?: Player['cookies'] }][] = [
      ['PATCH', `/api/v1/screens/${player.screen.id}`, { name: 'Lobby\u0000' }, { token }],
      [
        'POST',
        `/api/v1/screens/${player.screen.id}/takeover`,
        { playlist_id: playlist, until: '2026-11-21T13:00:00Z', reason: 'fire\u0000drill' },
        { token },
      ],
      ['POST', '/api/v1/enrollments', { client_id: clientId(), email: 'nul@example.com', platform: 'linux\u0000' }, {}],
      ['POST', '/runtime/v1/sessions', { public_id: 'abc\u0000' }, {}],
      [
        'POST',
        '/runtime/v1/reports',
        { severity: 'info', code: 'x', context: { 'k\u0000': 1 } },
        { cookies: player.cookies },
      ],
    ];
    for (const [method, path, json, credential] of cases) {
      const res = await server.request(method, path, { ...credential, json, idempotencyKey: randomKey() });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(400);
      expect(res.json().code).toBe('invalid_request');
      expect(res.json().errors[0]).toMatchObject({ field: 'body', code: 'invalid_unicode' });
    }
    const screen = await server.request('GET', `/api/v1/screens/${player.screen.id}`, { token });
    expect(screen.json().name).not.toContain('\u0000');
  });

  it('in a path id is not_found before any lookup, on routes of every realm', async () => {
    const { server, token } = env;
    const lines: string[] = [];
    const dir = { MARQUEE_DATA_DIR: server.dataDir, MARQUEE_DATABASE_URL: server.config.databaseUrl };
    await runOperatorCommand(['create', '--name', 'Nul'], dir, (l) => lines.push(l));
    const operator = lines.find((l) => l.startsWith('mq_op_'))!;
    const cases: [string, { token?: string; cookies?: Player['cookies'] }][] = [
      ['/api/v1/screens/scr_a%00b', { token }],
      ['/api/v1/playlists/pl_a%00b', { token }],
      ['/api/v1/media/med_a%00b', { token }],
      ['/api/v1/operations/op_a%00b', { token }],
      ['/api/v1/applications/app_a%00b/kv', { token }],
      ['/api/v1/comment/screen/scr_a%00b', { token }],
      // Ids no ownership check names: on PostgreSQL their lookups failed on the NUL (D-482).
      ['/operator/v1/projects/prj_a%00b', { token: operator }],
      ['/content/v1/manifests/mr_a%00b/releases/rel_a/package', { cookies: player.cookies }],
    ];
    for (const [path, credential] of cases) {
      const res = await server.request('GET', path, credential);
      expect(res.status, `${path}: ${res.text}`).toBe(404);
      // The rule's own answer, not a lookup's that found nothing (which on PostgreSQL fails instead).
      expect(res.json().detail, path).toMatch(/no id holds U\+0000/);
    }
  });

  it('in a cursor is a cursor this server never issued', async () => {
    for (const path of [
      `/api/v1/media?cursor=${cursor([1, 'med_\u0000'])}`,
      `/api/v1/invitations?cursor=${cursor([1, 'inv_\u0000'])}`,
      `/api/v1/billing/statement?cursor=${cursor(['2026-11-01\u0000', 'api'])}`,
      `/api/v1/playback?cursor=${cursor(['2026-11-01', 'scr_\u0000', 'x'])}`,
    ]) {
      const res = await env.server.request('GET', path, { token: env.token });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.json().errors[0].field).toBe('cursor');
    }
  });
});
