// The order of refusals, over every route of the table: who is asking (401, 403) and whether what
// the path names is theirs (404) come before anything about the request itself (400 for a body, a
// query or a missing If-Match or Idempotency-Key, 412). Another tenant learns nothing from a
// route, not even which checks its request would have passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairPendingScreen } from '../pairing/pairing.fixtures';
import { imageDoc, insertMedia, insertRelease } from '../playlists/content.fixtures';
import { routeTable } from '../routes';
import { TestServer } from '../testing/harness';
import { accountBearer, anyBearer, projectBearer } from './auth';
import type { RouteEntry } from './dispatch';
import type { Authenticator } from './route';

let server: TestServer;
/** Tenant A (Model P) owns the resources; B is another project; the accounts are Model A tenants. */
let a: { token: string; projectId: string };
let b: { token: string };
let accountA: { token: string; accountId: string };
let accountB: { token: string };
/** Tenant A's ids (and account A's), by the resource kind a path names. */
const owned: Record<string, string> = {};

/** Each entry's own authenticator; the table's are wrapped to record which requests passed them. */
const originalAuth = new Map<RouteEntry, Authenticator | undefined>();
/** The X-Matrix-Case values of requests whose caller the route's authenticator accepted. */
const authenticated = new Set<string>();

beforeAll(async () => {
  for (const entry of routeTable) {
    const auth = entry.route.policy.auth as Authenticator | undefined;
    originalAuth.set(entry, auth);
    if (!auth) continue;
    const recording: Authenticator = {
      realm: auth.realm,
      async authenticate(ctx) {
        const principal = await auth.authenticate(ctx);
        const matrixCase = ctx.req.headers['x-matrix-case'];
        if (typeof matrixCase === 'string') authenticated.add(matrixCase);
        return principal;
      },
    };
    entry.route = { ...entry.route, policy: { ...entry.route.policy, auth: recording } };
  }
  server = await TestServer.start();
  a = await server.enroll();
  b = await server.enroll();
  accountA = await server.createAccount();
  accountB = await server.createAccount();
  owned.screen = (await pairPendingScreen(server, a.token)).id;
  owned.accountScreen = (await pairPendingScreen(server, accountA.token)).id;
  owned.media = await insertMedia(server, a.projectId);
  owned.accountMedia = await insertMedia(server, accountA.accountId);
  owned.application = (await insertRelease(server, a.projectId)).applicationId;
  owned.accountApplication = (await insertRelease(server, accountA.accountId)).applicationId;
  const playlist = await server.request('POST', '/api/v1/playlists', {
    token: a.token,
    json: imageDoc(owned.media, 'Owned by A'),
    idempotencyKey: 'matrix-playlist-a',
  });
  if (playlist.status !== 201) throw new Error(`playlist: ${playlist.status} ${playlist.text}`);
  owned.playlist = playlist.json().id;
  // Nested kinds too, so another tenant's case names a real row of A rather than an unknown id.
  const upload = await server.request('POST', '/api/v1/media/uploads', {
    token: a.token,
    json: { filename: 'a.png', content_type: 'image/png', bytes: 10, sha256: 'a'.repeat(64) },
    idempotencyKey: 'matrix-upload-a',
  });
  if (upload.status !== 201) throw new Error(`upload: ${upload.status} ${upload.text}`);
  owned.upload = upload.json().id;
  owned.operation = upload.json().operation.id;
  const invitation = await server.request('POST', '/api/v1/invitations', {
    token: a.token,
    json: { kind: 'project_member', delivery: 'link' },
    idempotencyKey: 'matrix-invitation-a',
  });
  if (invitation.status !== 201) throw new Error(`invitation: ${invitation.status} ${invitation.text}`);
  owned.invitation = invitation.json().items[0].id;
}, 60_000);
afterAll(async () => {
  for (const [entry, auth] of originalAuth) entry.route = { ...entry.route, policy: { ...entry.route.policy, auth } };
  await server.stop();
});

type Credential = 'none' | 'wrong realm' | 'another tenant';

const bearerRoutes = new Set<Authenticator>([accountBearer, anyBearer, projectBearer] as Authenticator[]);

/** The concrete path: tenant A's resource where the path names one of its kinds, else an unknown id. */
function concrete(entry: RouteEntry, forAccount: boolean): string {
  const kind = (segment: string) => {
    const key = forAccount ? `account${segment[0]!.toUpperCase()}${segment.slice(1)}` : segment;
    return owned[key] ?? owned[segment];
  };
  return entry.path
    .replace(/\/(screens|screen)\/:id/, () =>
      `/screens/${kind('screen')}`.replace(
        '/screens/',
        entry.path.includes('/comment/screen') ? '/screen/' : '/screens/',
      ),
    )
    .replace(/\/(playlists|playlist)\/:id/, (_m, noun: string) => `/${noun}/${owned.playlist}`)
    .replace(/\/media\/uploads\/:id/, () => `/media/uploads/${owned.upload}`)
    .replace(/\/media\/:id/, () => `/media/${kind('media')}`)
    .replace(/\/operations\/:id/, () => `/operations/${owned.operation}`)
    .replace(/\/invitations\/:id/, () => `/invitations/${owned.invitation}`)
    .replace(/\/applications\/:id/, () => `/applications/${kind('application')}`)
    .replace(/:key\b/, 'matrix-key')
    .replace(/:[a-z_]+/g, 'xx_unknown0000000000000000')
    .replace(/\{?\*[a-z_]+\}?/g, 'matrix/file.txt');
}

function hostOf(entry: RouteEntry): string {
  return entry.plane === 'dashboard' ? `dashboard.localhost:${server.port}` : server.host;
}

/** The credential a case sends, and the statuses the spec allows for it; undefined: not applicable. */
function credentialFor(entry: RouteEntry, credential: Credential): { token?: string; allowed: number[] } | undefined {
  const auth = originalAuth.get(entry);
  if (!auth) return undefined;
  const bearer = bearerRoutes.has(auth);
  if (credential === 'none') return { allowed: [401] };
  if (credential === 'wrong realm') {
    if (auth === accountBearer) return { token: b.token, allowed: [403] };
    if (auth === projectBearer) return { token: accountB.token, allowed: [403] };
    if (bearer) return undefined; // both bearers are its realm
    // An anonymous route (realm none: native identity, agent connections) has no realm to be wrong
    // about; refusing a stray credential there is part of judging the request.
    if (auth.realm === 'none') return undefined;
    return { token: b.token, allowed: [401, 403] };
  }
  if (!bearer || !/:[a-z_]+/.test(entry.path)) return undefined;
  return { token: auth === accountBearer ? accountB.token : b.token, allowed: [403, 404] };
}

/**
 * What may answer a caller the route did not accept: a refusal of the caller (401, 403), or the
 * authenticator's own answer about its credential (410 for a lapsed link, 404 for an unknown one),
 * never an answer about the request's content or a success.
 */
function isCallerRefusal(status: number): boolean {
  return status === 401 || status === 403 || status === 404 || status === 410;
}

interface Payload {
  name: string;
  headers: Record<string, string>;
  body?: string;
  query: string;
}

/** Requests wrong in themselves, each without If-Match and Idempotency-Key. */
function payloadsFor(entry: RouteEntry): Payload[] {
  if (entry.method === 'GET' || entry.method === 'HEAD')
    return [{ name: 'unknown query field', headers: {}, query: '?zz_unknown=1' }];
  const json = { 'content-type': 'application/json' };
  return [
    { name: 'malformed JSON body', headers: json, body: '{"broken', query: '' },
    { name: 'invalid body, no If-Match', headers: json, body: '{"zz_unknown":true}', query: '' },
  ];
}

describe('authorization before validation, on every route', () => {
  it('answers 401, 403 or 404 before 400 or 412 to every credential case', async () => {
    const refusals: string[] = [];
    let checked = 0;
    let applicable = 0;
    for (const entry of routeTable) {
      for (const credential of ['none', 'wrong realm', 'another tenant'] as Credential[]) {
        const cred = credentialFor(entry, credential);
        if (!cred) continue;
        const path = concrete(entry, originalAuth.get(entry) === accountBearer);
        for (const payload of payloadsFor(entry)) {
          const matrixCase = String(++checked);
          const res = await server.request(entry.method, `${path}${payload.query}`, {
            host: hostOf(entry),
            token: cred.token,
            headers: { ...payload.headers, 'x-matrix-case': matrixCase },
            body: payload.body,
          });
          // A route that admits callers without this credential (anonymous pairing, link pages)
          // rightly judges the request next; only the other tenant's case always applies.
          if (credential !== 'another tenant' && authenticated.has(matrixCase)) continue;
          applicable++;
          const refused =
            credential === 'another tenant' ? !cred.allowed.includes(res.status) : !isCallerRefusal(res.status);
          if (refused) {
            const code = res.headers['content-type']?.includes('json') ? res.json().code : res.text.slice(0, 40);
            refusals.push(`${entry.method} ${entry.path} [${credential}; ${payload.name}] → ${res.status} ${code}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
    expect(applicable).toBeGreaterThan(250);
    expect(refusals).toEqual([]);
  }, 120_000);

  it('answers 403 or 404 to another tenant whose request passes the pipeline and is refused by the handler', async () => {
    // Idempotency-Key and If-Match present, so the pipeline's own checks pass, and path values the
    // handler refuses (a key with a control character, a malformed page id, an upload's headers).
    const refusals: string[] = [];
    let checked = 0;
    for (const entry of routeTable) {
      const cred = credentialFor(entry, 'another tenant');
      if (!cred) continue;
      const path = concrete(entry, originalAuth.get(entry) === accountBearer)
        .replace('/matrix-key', '/a%00b')
        .replace(/\/page\/[^/]+/, '/page/1bad');
      const raw = entry.route.policy.body === 'raw';
      const read = entry.method === 'GET' || entry.method === 'HEAD';
      checked++;
      const res = await server.request(entry.method, path, {
        host: hostOf(entry),
        token: cred.token,
        headers: read
          ? {}
          : {
              'content-type': raw ? 'application/gzip' : 'application/json',
              'idempotency-key': `matrix-handler-${checked}`,
              'if-match': '"1"',
            },
        body: read ? undefined : raw ? 'not an archive' : '{}',
      });
      if (!cred.allowed.includes(res.status)) {
        const code = res.headers['content-type']?.includes('json') ? res.json().code : res.text.slice(0, 40);
        refusals.push(`${entry.method} ${entry.path} → ${res.status} ${code}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(refusals).toEqual([]);
  }, 120_000);

  it('refuses a query parameter an API route does not take, as the routes that take some do', async () => {
    for (const path of [
      '/api/v1/playlists?limit=abc',
      '/api/v1/applications?cursor=x',
      `/api/v1/playlists/${owned.playlist}?zz=1`,
      '/api/v1/playlists?__proto__=x',
      '/api/v1/playlists?constructor=1',
    ]) {
      const res = await server.request('GET', path, { token: a.token });
      expect(res.status, path).toBe(400);
      expect(res.json().errors[0].code, path).toBe('unknown_field');
    }
    expect((await server.request('GET', '/api/v1/playlists', { token: a.token })).status).toBe(200);
    // A parameter the route takes, given no number, says so (not that it is missing).
    const notANumber = await server.request('GET', '/api/v1/media?limit=abc', { token: a.token });
    expect(notANumber.status).toBe(400);
    expect(notANumber.json().detail).toBe('limit: must be a number');
  });

  it('still validates the request of the rightful owner', async () => {
    const res = await server.request('PATCH', `/api/v1/screens/${owned.screen}`, {
      token: a.token,
      json: { zz_unknown: true },
    });
    expect(res.status).toBe(400);
  });
});
