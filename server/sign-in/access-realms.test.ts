// Realm separation for the credentials of people and access (spec Authentication rule 1): the
// dashboard's cookies, the operator bearer, the agent connection credential and the pending agent
// bearer each authorize their own routes and nothing else; a dashboard cookie never opens a bearer
// route, and no bearer (agent, project, operator) works on the dashboard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateRecipientKey,
  openEnvelope,
  collectEnvelope,
  requestConnection,
} from '../../sdk/client/agent-connection';
import { TestClock } from '../clock';
import { joinAsMember, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { SmtpCapture } from '../mail/mail.fixtures';
import { runOperatorCommand } from '../operators/operator-cli';
import { RUNTIME_COOKIE } from '../pairing/pairing-cookies';
import { pairedPlayer, type Player } from '../runtime/runtime.fixtures';
import { CookieJar, TestServer, randomKey } from '../testing/harness';
import { SESSION_COOKIE, SIGNUP_COOKIE } from './dashboard-cookies';
import type { DashboardBrowser } from './dashboard.fixtures';

let smtp: SmtpCapture;
let server: TestServer;
let member: DashboardBrowser;
let player: Player;
const creds = {} as {
  project: string;
  account: string;
  operator: string;
  connect: string;
  pending: string;
  connectionId: string;
};

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  server = await TestServer.start({
    clock: new TestClock('2026-11-25T12:00:00Z'),
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  const { token } = await server.enroll();
  creds.project = token;
  creds.account = (await server.createAccount()).token;
  member = await joinAsMember(server, smtp, token, 'ada@example.com');
  player = await pairedPlayer(server, token);
  const lines: string[] = [];
  await runOperatorCommand(
    ['create', '--name', 'Ops'],
    { MARQUEE_DATA_DIR: server.dataDir, MARQUEE_DATABASE_URL: server.config.databaseUrl },
    (l) => lines.push(l),
  );
  creds.operator = lines.find((l) => l.startsWith('mq_op_'))!;
  const key = await generateRecipientKey();
  const start = await requestConnection({ baseUrl: server.origin }, { name: 'Realm bot' }, key);
  creds.connect = start.connect_token;
  creds.connectionId = start.connection.id;
  await member.request('POST', `/dashboard/v1/agent-connections/${start.connection.id}/approve`, {
    json: { user_code: start.user_code },
  });
  const collection = await collectEnvelope({ baseUrl: server.origin }, start);
  creds.pending = (await openEnvelope(collection.envelope, collection.connection_id, key.privateKey)).token;
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

const CONTROL_ROUTES: [string, string][] = [
  ['GET', '/api/v1/project'],
  ['GET', '/api/v1/screens'],
  ['GET', '/api/v1/invitations'],
  ['POST', '/api/v1/invitations'],
  ['GET', '/api/v1/billing/balance'],
  ['GET', '/api/v1/agents/self'],
  ['GET', '/api/v1/events'],
  ['GET', '/api/v1/account'],
];
const DASHBOARD_ROUTES: [string, string][] = [
  ['GET', '/dashboard/v1/session'],
  ['GET', '/dashboard/v1/members'],
  ['GET', '/dashboard/v1/balance'],
  ['POST', '/dashboard/v1/logout'],
];

const dashboardHost = () => `dashboard.localhost:${server.port}`;

/** A jar holding the member's dashboard cookies for `host`. */
function dashboardJar(host: string): CookieJar {
  const jar = new CookieJar();
  jar.set(host, SESSION_COOKIE, member.sessionCookie!);
  return jar;
}

describe('dashboard cookies', () => {
  it('never authorize a control-plane bearer route, on any host', async () => {
    for (const host of [server.host, dashboardHost()]) {
      for (const [method, path] of CONTROL_ROUTES) {
        const res = await server.request(method, path, {
          host,
          cookies: dashboardJar(host),
          headers: { origin: member.origin, 'marquee-csrf-token': member.csrf },
          idempotencyKey: randomKey(),
          json: method === 'POST' ? { kind: 'project_member', delivery: 'link' } : undefined,
        });
        // On the dashboard host the control paths do not exist at all.
        expect(res.status, `${method} ${path} on ${host}`).toBe(host === server.host ? 401 : 404);
      }
    }
  });

  it('never authorize the runtime plane or the operator routes', async () => {
    const jar = dashboardJar(server.host);
    expect((await server.request('GET', '/runtime/v1/manifest', { cookies: jar })).status).toBe(401);
    // Operator routes refuse any cookie outright (forbidden), before looking for their bearer.
    expect((await server.request('GET', '/operator/v1/projects', { cookies: jar })).status).toBe(403);
    expect((await server.request('GET', '/operator/v1/projects', { cookies: jar, token: creds.operator })).status).toBe(
      403,
    );
  });

  it('a signup cookie opens no session route', async () => {
    const jar = new CookieJar();
    jar.set(dashboardHost(), SIGNUP_COOKIE, 'x'.repeat(43));
    for (const [method, path] of DASHBOARD_ROUTES) {
      const res = await server.request(method, path, {
        host: dashboardHost(),
        cookies: jar,
        headers: { origin: member.origin },
      });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });
});

describe('no bearer works on the dashboard', () => {
  it('refuses every Authorization header, even beside a valid session cookie', async () => {
    const authorizations = [
      `Bearer ${creds.project}`,
      `Bearer ${creds.account}`,
      `Bearer ${creds.operator}`,
      `Bearer ${creds.pending}`,
      `Marquee-Agent-Connect ${creds.connect}`,
    ];
    for (const authorization of authorizations) {
      for (const [method, path] of DASHBOARD_ROUTES) {
        const res = await member.request(method, path, { headers: { authorization } });
        expect(res.status, `${authorization.slice(0, 20)} ${method} ${path}`).toBe(401);
      }
    }
    expect((await member.request('GET', '/dashboard/v1/session')).status).toBe(200);
  });

  it('and the player’s runtime cookie is not a dashboard credential', async () => {
    const jar = new CookieJar();
    jar.set(dashboardHost(), RUNTIME_COOKIE, player.cookies.get(server.host, RUNTIME_COOKIE)!);
    expect((await server.request('GET', '/dashboard/v1/session', { host: dashboardHost(), cookies: jar })).status).toBe(
      401,
    );
  });
});

describe('the operator bearer', () => {
  it('authorizes no /api/v1, runtime or dashboard route', async () => {
    for (const [method, path] of CONTROL_ROUTES) {
      expect(
        (await server.request(method, path, { token: creds.operator, idempotencyKey: randomKey() })).status,
        path,
      ).toBe(401);
    }
    expect(
      (await server.request('GET', '/runtime/v1/manifest', { token: creds.operator, cookies: player.cookies })).status,
    ).toBe(401);
  });

  it('is the only credential of the operator routes', async () => {
    for (const token of [creds.project, creds.account, creds.pending]) {
      expect((await server.request('GET', '/operator/v1/projects', { token })).status).toBe(401);
    }
    const connect = await server.request('GET', '/operator/v1/projects', {
      headers: { authorization: `Marquee-Agent-Connect ${creds.connect}` },
    });
    expect(connect.status).toBe(401);
    expect((await server.request('GET', '/operator/v1/projects', { token: creds.operator })).status).toBe(200);
  });
});

describe('agent credentials', () => {
  it('the connection credential opens its own connection only, and no bearer route', async () => {
    const asBearer = await server.request('GET', '/api/v1/project', { token: creds.connect });
    expect(asBearer.status).toBe(401);
    const asScheme = await server.request('GET', '/api/v1/project', {
      headers: { authorization: `Marquee-Agent-Connect ${creds.connect}` },
    });
    expect(asScheme.status).toBe(401);
    for (const token of [creds.project, creds.pending, creds.operator]) {
      const res = await server.request('POST', `/api/v1/agent-connections/${creds.connectionId}/credential`, { token });
      expect(res.status).toBe(401);
    }
  });

  it('the pending bearer authorizes activation only', async () => {
    for (const [method, path] of CONTROL_ROUTES) {
      expect(
        (await server.request(method, path, { token: creds.pending, idempotencyKey: randomKey() })).status,
        path,
      ).toBe(401);
    }
    expect((await server.request('POST', '/api/v1/agents/self/disconnect', { token: creds.pending })).status).toBe(401);
    expect(
      (await server.request('GET', '/runtime/v1/manifest', { token: creds.pending, cookies: player.cookies })).status,
    ).toBe(401);
  });

  it('an account bearer is no agent: activation and disconnection refuse it', async () => {
    expect((await server.request('POST', '/api/v1/agents/self/activate', { token: creds.account })).status).toBe(401);
    expect((await server.request('POST', '/api/v1/agents/self/disconnect', { token: creds.account })).status).toBe(401);
  });
});
