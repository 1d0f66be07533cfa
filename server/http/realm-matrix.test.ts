// The realm matrix (spec Authentication rule 1), over every route of the table: each credential of
// one realm, carried as its owner carries it, is refused (401 or 403) by every route of another
// realm: never a success, never a look at what the path names (404), never a 500. The routes come
// from the table itself, so a new route is in the matrix the day it is added.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collectEnvelope,
  generateRecipientKey,
  openEnvelope,
  requestConnection,
} from '../../sdk/client/agent-connection';
import { AGENT_CONNECT_SCHEME } from '../../sdk/contract/agents';
import { PLACEMENT_CAPABILITY_HEADER } from '../../sdk/contract/kv';
import { placementOf } from '../../sdk/contract/manifest';
import { CSRF_HEADER } from '../../sdk/contract/people';
import { TestClock } from '../clock';
import { joinAsMember, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { SmtpCapture } from '../mail/mail.fixtures';
import { runOperatorCommand } from '../operators/operator-cli';
import { DEVICE_COOKIE, PAIRING_COOKIE, RUNTIME_COOKIE } from '../pairing/pairing-cookies';
import { NativeDevice } from '../pairing/native.fixtures';
import { startPairing } from '../pairing/pairing.fixtures';
import { imagePlacement, page } from '../playlists/content.fixtures';
import { RELEASE_GRANT_COOKIE } from '../release-host/release-grant-cookie';
import { routeTable } from '../routes';
import { SESSION_COOKIE, SIGNUP_COOKIE } from '../sign-in/dashboard-cookies';
import { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import {
  appPage,
  createPlaylist,
  pairedPlayer,
  patchScreen,
  publishApp,
  storedMedia,
  validManifest,
} from '../runtime/runtime.fixtures';
import { CookieJar, randomKey, TestServer } from '../testing/harness';
import type { RouteEntry } from './dispatch';
import type { Realm } from './route';

let smtp: SmtpCapture;
let server: TestServer;

/** One credential as its holder sends it: a header, or a cookie on the host of the route asked. */
interface Credential {
  name: string;
  /** The realms whose routes accept it (or judge it as their own, as release hosts do their grant). */
  realms: Realm[];
  headers?: Record<string, string>;
  cookie?: [string, string];
  /** The CSRF token a dashboard cookie's changes carry (the matrix sends a wrong one: the realm refuses first). */
  csrf?: string;
}
const credentials: Credential[] = [];
/** Every secret the setup saw besides the credentials: codes, tickets, link tokens, public ids. */
const secrets: Record<string, string> = {};
/** The project's real ids, so a route that wrongly let a caller in would answer 2xx rather than 404. */
const ids: Record<string, string> = {};
let releaseHost = '';
/** A member of another project, signed in to the dashboard with that project selected. */
let stranger: DashboardBrowser;

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  server = await TestServer.start({
    clock: new TestClock('2026-11-25T12:00:00Z'),
    // The most verbose level: the log test below reads every line the matrix made the server write.
    config: { smtpUrl: smtp.url, logLevel: 'trace' },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  const project = await server.enroll();
  const account = await server.createAccount();
  const member = await joinAsMember(server, smtp, project.token, 'matrix@example.com');
  stranger = await joinAsMember(server, smtp, (await server.enroll()).token, 'stranger@example.com');

  // A link invitation claimed but not yet signed up: the browser holds only the signup cookie.
  const link = await server.request('POST', '/api/v1/invitations', {
    token: project.token,
    idempotencyKey: randomKey(),
    json: { kind: 'project_member', delivery: 'link' },
  });
  const signup = new DashboardBrowser(server);
  const linkToken = new URL(link.json().link_url).hash.replace(/^#invite=/, '');
  expect((await signup.request('POST', '/dashboard/v1/links/claim', { json: { token: linkToken } })).status).toBe(200);

  const lines: string[] = [];
  await runOperatorCommand(
    ['create', '--name', 'Matrix'],
    { MARQUEE_DATA_DIR: server.dataDir, MARQUEE_DATABASE_URL: server.config.databaseUrl },
    (l) => lines.push(l),
  );
  const key = await generateRecipientKey();
  const start = await requestConnection({ baseUrl: server.origin }, { name: 'Matrix bot' }, key);
  await member.request('POST', `/dashboard/v1/agent-connections/${start.connection.id}/approve`, {
    json: { user_code: start.user_code },
  });
  // A second connection, approved but not collected, keeps a live connect token.
  const open = await requestConnection({ baseUrl: server.origin }, { name: 'Matrix bot 2' }, key);
  const collection = await collectEnvelope({ baseUrl: server.origin }, start);
  const pending = (await openEnvelope(collection.envelope, collection.connection_id, key.privateKey)).token;

  const player = await pairedPlayer(server, project.token);
  const pairing = await startPairing(server);
  // A native player: one paired and holding a session, one still pairing.
  const native = await NativeDevice.create(server);
  await native.pair(project.token);
  const nativePairing = await NativeDevice.create(server);
  await nativePairing.start();
  const app = await publishApp(server, project.token, 'matrix');
  const media = await storedMedia(server, project.projectId, Buffer.from('matrix media'));
  const playlist = await createPlaylist(server, project.token, {
    name: 'Matrix',
    pages: [appPage('board', app.releaseId), page('pic', [imagePlacement('pic', { by: 'id', media_id: media })])],
  });
  await patchScreen(server, project.token, player.screen.id, { playlist_id: playlist });
  const { manifest } = await validManifest(server, player);
  const board = placementOf(manifest.pages[0]!.placements[0]!, 'application');
  const launch = await server.request('POST', board.content.launchUrl, { cookies: player.cookies });
  const launchUrl = new URL(launch.json().launch_url);
  releaseHost = launchUrl.host;
  const frame = new CookieJar();
  const consumed = await server.request('GET', launchUrl.pathname + launchUrl.search, {
    host: releaseHost,
    cookies: frame,
    headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'cross-site' },
  });
  expect(consumed.status).toBe(302);
  Object.assign(secrets, {
    linkToken,
    userCode: start.user_code,
    spentConnectToken: start.connect_token,
    openUserCode: open.user_code,
    pairingCode: pairing.code,
    publicId: player.screen.public_id,
    ticket: launchUrl.searchParams.get('ticket')!,
    csrf: member.csrf,
  });

  // An upload declared, never sent: its id and its operation's are the project's too.
  const upload = await server.request('POST', '/api/v1/media/uploads', {
    token: project.token,
    idempotencyKey: randomKey(),
    json: { filename: 'matrix.png', content_type: 'image/png', bytes: 10, sha256: 'a'.repeat(64) },
  });
  expect(upload.status, upload.text).toBe(201);

  Object.assign(ids, {
    screen: player.screen.id,
    playlist,
    media,
    application: app.applicationId,
    release: app.releaseId,
    manifest: manifest.manifestRevision,
    project: project.projectId,
    connection: open.connection.id,
    invitation: link.json().items[0].id,
    upload: upload.json().id,
    operation: upload.json().operation.id,
    // GET /dashboard/v1/session names no id: the list of the member's sessions does.
    session: (await member.request('GET', '/dashboard/v1/sessions'))
      .json()
      .items.find((s: { current: boolean }) => s.current).id,
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  credentials.push(
    { name: 'project bearer', realms: ['project', 'account', 'agent'], headers: bearer(project.token) },
    { name: 'account bearer', realms: ['project', 'account'], headers: bearer(account.token) },
    { name: 'operator bearer', realms: ['operator'], headers: bearer(lines.find((l) => l.startsWith('mq_op_'))!) },
    { name: 'pending agent bearer', realms: ['agent'], headers: bearer(pending) },
    {
      name: 'agent connection authorization',
      realms: ['agent-connect'],
      headers: { authorization: `${AGENT_CONNECT_SCHEME} ${open.connect_token}` },
    },
    {
      name: 'dashboard session cookie',
      realms: ['dashboard', 'signup'],
      cookie: [SESSION_COOKIE, member.sessionCookie!],
      csrf: member.csrf,
    },
    {
      name: 'signup cookie',
      realms: ['signup', 'dashboard'],
      cookie: [SIGNUP_COOKIE, signup.signupCookie!],
      csrf: signup.csrf,
    },
    {
      name: 'pairing cookie',
      realms: ['pairing'],
      cookie: [PAIRING_COOKIE, pairing.cookies.get(server.host, PAIRING_COOKIE)!],
    },
    {
      name: 'device cookie',
      realms: ['device', 'runtime'],
      cookie: [DEVICE_COOKIE, player.cookies.get(server.host, DEVICE_COOKIE)!],
    },
    {
      name: 'runtime cookie',
      realms: ['runtime', 'device'],
      cookie: [RUNTIME_COOKIE, player.cookies.get(server.host, RUNTIME_COOKIE)!],
    },
    { name: 'native pairing credential', realms: ['pairing'], headers: nativePairing.pairingHeaders() },
    { name: 'native session credential', realms: ['runtime', 'device'], headers: native.sessionHeaders() },
    { name: 'placement capability', realms: [], headers: { [PLACEMENT_CAPABILITY_HEADER]: board.capabilityHandle } },
    {
      name: 'release grant cookie',
      realms: ['release'],
      cookie: [RELEASE_GRANT_COOKIE, frame.get(releaseHost, RELEASE_GRANT_COOKIE)!],
    },
  );
}, 120_000);
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

/** The realm a route's caller must belong to; release hosts judge their grant cookie themselves. */
function realmOf(entry: RouteEntry): Realm | undefined {
  if (entry.plane === 'release') return 'release';
  return entry.route.policy.auth?.realm;
}

/** The path with the project's real ids in it (an unknown id where the project has none of that kind). */
function concrete(entry: RouteEntry): string {
  return entry.path
    .replace(/\/(screens|screen)\/:id/, (_m, noun: string) => `/${noun}/${ids.screen}`)
    .replace(/\/(playlists|playlist)\/:id/, (_m, noun: string) => `/${noun}/${ids.playlist}`)
    .replace(/\/media\/uploads\/:id/, `/media/uploads/${ids.upload}`)
    .replace(/\/media\/:id/, `/media/${ids.media}`)
    .replace(/\/operations\/:id/, `/operations/${ids.operation}`)
    .replace(/\/invitations\/:id/, `/invitations/${ids.invitation}`)
    .replace(/\/applications\/:id/, `/applications/${ids.application}`)
    .replace(/\/projects\/:id/, `/projects/${ids.project}`)
    .replace(/\/agent-connections\/:id/, `/agent-connections/${ids.connection}`)
    .replace(/\/sessions\/:id/, `/sessions/${ids.session}`)
    .replace(':manifest_revision', ids.manifest!)
    .replace(':release_id', ids.release!)
    .replace(':media_id', ids.media!)
    .replace(':application_id', ids.application!)
    .replace(':page_id', 'pic')
    .replace(':key', 'matrix-key')
    .replace(/:[a-z_]+/g, 'xx_unknown0000000000000000')
    .replace(/\{?\*[a-z_]+\}?/g, 'index.html');
}

function hostOf(entry: RouteEntry): string {
  if (entry.plane === 'dashboard') return `dashboard.localhost:${server.port}`;
  if (entry.plane === 'release') return releaseHost;
  return server.host;
}

/**
 * The route asked with the credential as its holder carries it, with an empty body. Every credential
 * comes to the dashboard as its page sends a session, Origin and CSRF header included (a non-browser
 * sets them at will): a dashboard change refuses a request without them before it looks at any
 * credential, and then the realm would never be asked.
 */
function send(entry: RouteEntry, credential: Credential, csrf: string) {
  const host = hostOf(entry);
  const cookies = new CookieJar();
  if (credential.cookie) cookies.set(host, ...credential.cookie);
  return server.request(entry.method, concrete(entry), {
    host,
    cookies,
    headers: {
      ...credential.headers,
      ...(entry.plane === 'dashboard'
        ? { origin: server.config.dashboardOrigin, [CSRF_HEADER.toLowerCase()]: csrf }
        : {}),
    },
    idempotencyKey: entry.method === 'GET' ? undefined : randomKey(),
    json: entry.method === 'GET' ? undefined : {},
  });
}

describe('the realm matrix', () => {
  it('refuses every credential on every route of another realm with 401 or 403', async () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const entry of routeTable) {
      const realm = realmOf(entry);
      // Routes anyone may call (status, pages, anonymous starts) have no realm to be wrong about.
      if (realm === undefined || realm === 'none') continue;
      for (const credential of credentials) {
        if (credential.realms.includes(realm)) continue;
        const res = await send(entry, credential, 'x');
        checked++;
        const problem = res.headers['content-type']?.includes('json') ? res.json() : undefined;
        // A refusal of where the request came from is not the realm's: the credential was never asked.
        const unasked = res.status === 403 && /origin|fetch metadata/i.test(problem?.detail ?? '');
        if ((res.status !== 401 && res.status !== 403) || unasked) {
          const why = problem ? `${problem.code}: ${problem.detail}` : res.text.slice(0, 40);
          wrong.push(`${entry.method} ${entry.path} [${realm}] with the ${credential.name} → ${res.status} ${why}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(1500);
    expect(wrong).toEqual([]);
  }, 300_000);

  it("answers a member of another project not_found (or forbidden) on every dashboard route naming the project's ids", async () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const entry of routeTable) {
      if (entry.plane !== 'dashboard' || entry.route.policy.auth?.realm !== 'dashboard') continue;
      // A pending agent connection belongs to no project until a member approves it with its code.
      if (entry.path.includes('/agent-connections/')) continue;
      const path = concrete(entry);
      if (!Object.values(ids).some((id) => path.includes(id))) continue;
      const res = await stranger.request(entry.method, path, { json: entry.method === 'GET' ? undefined : {} });
      checked++;
      if (res.status !== 404 && res.status !== 403)
        wrong.push(`${entry.method} ${entry.path} → ${res.status} ${res.text.slice(0, 80)}`);
    }
    expect(checked).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
  });

  it('writes none of the credentials, codes or tickets it carried to the log, even at trace level', async () => {
    // Failing requests too: a spent ticket again, a token in a query string, a mangled bearer.
    const { ticket, spentConnectToken, publicId } = secrets;
    await server.request('GET', `/index.html?ticket=${ticket}`, { host: releaseHost });
    await server.request('GET', `/api/v1/screens?token=${spentConnectToken}&ticket=${ticket}`);
    await server.request('GET', `/api/v1/%E0%A4%A/screens?ticket=${ticket}`);
    await server.request('GET', '/api/v1/screens', { headers: { authorization: `Bearer ${spentConnectToken}x` } });
    await server.request('GET', `/s/${publicId}`);
    const log = server.logText();
    expect(log.length).toBeGreaterThan(1000);
    const carried = [
      ...Object.values(secrets),
      ...credentials.flatMap((c) => [
        ...Object.values(c.headers ?? {}).map((h) => h.replace(/^\S+ /, '')),
        ...(c.cookie ? [c.cookie[1]] : []),
      ]),
    ];
    expect(carried.length).toBeGreaterThan(20);
    for (const secret of carried) expect(log.includes(secret), `the log holds ${secret.slice(0, 12)}…`).toBe(false);
  });

  // Last: the requests below may spend a credential (an activation, a cancel), which the matrix above needs.
  it('carries only credentials their own realm accepts, or a row of the matrix could not fail', async () => {
    const dead: string[] = [];
    for (const credential of credentials.filter((c) => c.realms.length > 0)) {
      let accepted = false;
      for (const entry of routeTable) {
        const realm = realmOf(entry);
        // Streams stay open when they accept: the realm's other routes are enough to tell.
        if (
          accepted ||
          realm === undefined ||
          !credential.realms.includes(realm) ||
          /(events|stream)$/.test(entry.path)
        )
          continue;
        const res = await send(entry, credential, credential.csrf ?? 'x');
        accepted = res.status !== 401 && res.status !== 403;
      }
      if (!accepted) dead.push(credential.name);
    }
    expect(dead).toEqual([]);
  });
});
