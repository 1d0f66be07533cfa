// Agent installations (spec: Agent installations; States / Agent; Events rule 4; Authentication
// rule 3), end to end with the SDK's envelope client: request, member approval within 24 hours,
// the status stream, collection of the sealed credential (and failure with any other key),
// activation, self status, disconnection, and capability areas as data on each credential.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activateBearer,
  collectEnvelope,
  connectAgent,
  EnvelopeError,
  generateRecipientKey,
  openEnvelope,
  requestConnection,
  waitForDecision,
} from '../../sdk/client/agent-connection';
import type { AgentConnectionStart } from '../../sdk/contract/agents';
import { TestClock } from '../clock';
import { joinAsMember, TEST_PASSWORD, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { SmtpCapture } from '../mail/mail.fixtures';
import { parseSse } from '../pairing/pairing.fixtures';
import type { DashboardBrowser } from '../sign-in/dashboard.fixtures';
import { TestServer, randomKey } from '../testing/harness';
import {
  AGENT_APPROVAL_WINDOW_MS,
  AGENT_DELIVERY_WINDOW_MS,
  approveConnection,
  expireConnections,
} from './agent-connections';

let smtp: SmtpCapture;
let server: TestServer;
let clock: TestClock;
let token: string;
let projectId: string;
let member: DashboardBrowser;

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  clock = new TestClock('2026-11-25T12:00:00Z');
  server = await TestServer.start({
    clock,
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  ({ token, projectId } = await server.enroll({
    project_name: 'Lobby screens',
    name: 'Ops laptop',
    agent_type: 'claude',
  }));
  member = await joinAsMember(server, smtp, token, 'ada@example.com', { name: 'Ada' });
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

const client = () => ({ baseUrl: server.origin });

/** The member's browser, signed in again when the test clock ended its session. */
async function signedInMember(): Promise<DashboardBrowser> {
  if ((await member.request('GET', '/dashboard/v1/session')).status === 401)
    await member.signIn('ada@example.com', TEST_PASSWORD);
  return member;
}

async function approve(start: AgentConnectionStart, code = start.user_code) {
  const by = await signedInMember();
  return by.request('POST', `/dashboard/v1/agent-connections/${start.connection.id}/approve`, {
    json: { user_code: code },
  });
}

/** A new connection request from a fresh key. */
async function requested(request: Record<string, unknown> = {}) {
  const key = await generateRecipientKey();
  const start = await requestConnection(client(), { name: 'Build bot', ...request }, key);
  return { key, start };
}

/** Reads the status stream to its end (it ends by itself on the final states). */
function readStatus(
  start: AgentConnectionStart,
  headers: Record<string, string> = { authorization: `Marquee-Agent-Connect ${start.connect_token}` },
) {
  return new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = server.rawRequest(
      'GET',
      `/api/v1/agent-connections/${start.connection.id}/events`,
      { headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
  });
}

describe('connecting an agent installation', () => {
  it('runs the whole flow through the SDK client: approve by code, collect, open, activate', async () => {
    const states: string[] = [];
    let start: AgentConnectionStart | undefined;
    const connected = await connectAgent(
      client(),
      { name: 'Build bot', agent_type: 'ci', platform: 'linux/x64', version: '1.2.3' },
      {
        onStart: (s) => {
          start = s;
          void approve(s).then((res) => expect(res.status, res.text).toBe(200));
        },
        onChange: (c) => states.push(c.state),
      },
    );
    expect(start!.approval_url).toBe(`${server.config.dashboardOrigin}/connect/${start!.connection.id}`);
    expect(start!.approval_url).not.toContain(start!.connect_token);
    expect(start!.user_code).toMatch(/^[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/);
    expect(states.at(-1)).toBe('approved');
    expect(connected.credential).toMatchObject({ project_id: projectId, control_origin: server.origin });
    expect(connected.credential.token).toMatch(/^mq_proj_[A-Za-z0-9_-]{43}$/);
    expect(connected.credential.capabilities).toHaveLength(6);
    expect(connected.agent).toMatchObject({
      name: 'Build bot',
      agent_type: 'ci',
      platform: 'linux/x64',
      version: '1.2.3',
      state: 'active',
    });
    const project = await server.request('GET', '/api/v1/project', { token: connected.credential.token });
    expect(project.json().id).toBe(projectId);
    const events = (await server.request('GET', '/api/v1/events', { token })).json().items;
    const approval = events.find((e: any) => e.type === 'agent.connection_approved');
    expect(approval.details.approved_by.display_name).toBe('Ada');
    expect(events.map((e: any) => e.type)).toContain('agent.activated');
  });

  it('answers the start with no-store and no referrer, and refuses every credential, an Origin, a query and an Idempotency-Key', async () => {
    const key = await generateRecipientKey();
    const body = { recipient_public_key: key.publicJwk };
    const ok = await server.request('POST', '/api/v1/agent-connections', { json: body });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(ok.headers['referrer-policy']).toBe('no-referrer');
    const refusals: [Record<string, unknown>, number][] = [
      [{ token }, 400],
      [{ headers: { cookie: '__Host-marquee-dashboard=x' } }, 403],
      [{ headers: { origin: server.config.dashboardOrigin } }, 403],
      [{ idempotencyKey: randomKey() }, 400],
    ];
    for (const [options, status] of refusals) {
      const res = await server.request('POST', '/api/v1/agent-connections', { json: body, ...options });
      expect(res.status, JSON.stringify(options)).toBe(status);
    }
    expect((await server.request('POST', '/api/v1/agent-connections?token=x', { json: body })).status).toBe(400);
  });

  it('refuses a private key, a key no agreement can use, and a bad capability list', async () => {
    const key = await generateRecipientKey();
    const x = key.publicJwk.x;
    for (const json of [
      { recipient_public_key: { ...key.publicJwk, d: x } },
      { recipient_public_key: { kty: 'OKP', crv: 'X25519', x: Buffer.alloc(32).toString('base64url') } },
      { recipient_public_key: { kty: 'EC', crv: 'P-256', x } },
      { recipient_public_key: key.publicJwk, capabilities: [] },
      { recipient_public_key: key.publicJwk, capabilities: ['screens', 'screens'] },
      { recipient_public_key: key.publicJwk, capabilities: ['billing'] },
      { recipient_public_key: key.publicJwk, name: '' },
    ]) {
      const res = await server.request('POST', '/api/v1/agent-connections', { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });
});

describe('the status stream', () => {
  it('carries AgentConnection metadata only and closes on approved', async () => {
    const { start } = await requested();
    const reading = readStatus(start);
    await new Promise((r) => setTimeout(r, 200));
    expect((await approve(start)).status).toBe(200);
    const { status, text, headers } = await reading;
    expect(status).toBe(200);
    expect(headers['content-type']).toContain('text/event-stream');
    expect(headers['x-accel-buffering']).toBe('no');
    const frames = parseSse(text);
    expect(frames.map((f) => f.data.state)).toEqual(['pending', 'approved']);
    for (const frame of frames) {
      expect(frame.event).toBe('agent_connection');
      expect(Object.keys(frame.data).sort()).toEqual(
        [
          'agent_type',
          'capabilities',
          'created_at',
          'delivery_expires_at',
          'expires_at',
          'id',
          'name',
          'platform',
          'state',
          'version',
        ].sort(),
      );
    }
    for (const secret of [start.connect_token, projectId, 'envelope', 'mq_proj_', 'nonce', 'cookie', start.user_code])
      expect(text).not.toContain(secret);
  });

  it('closes on denied and on cancelled, and tells an expired request as expired', async () => {
    const denied = await requested();
    const reading = readStatus(denied.start);
    await new Promise((r) => setTimeout(r, 200));
    const deny = await (await signedInMember()).request(
      'POST',
      `/dashboard/v1/agent-connections/${denied.start.connection.id}/deny`,
    );
    expect(deny.json().state).toBe('denied');
    expect(parseSse((await reading).text).map((f) => f.data.state)).toEqual(['pending', 'denied']);
    expect((await approve(denied.start)).json().code).toBe('resource_conflict');

    const cancelled = await requested();
    const cancelling = readStatus(cancelled.start);
    await new Promise((r) => setTimeout(r, 200));
    const res = await server.request('POST', `/api/v1/agent-connections/${cancelled.start.connection.id}/cancel`, {
      headers: { authorization: `Marquee-Agent-Connect ${cancelled.start.connect_token}` },
    });
    expect(res.status).toBe(204);
    expect(parseSse((await cancelling).text).map((f) => f.data.state)).toEqual(['pending', 'cancelled']);

    const late = await requested();
    clock.advance(AGENT_APPROVAL_WINDOW_MS);
    expect(parseSse((await readStatus(late.start)).text).map((f) => f.data.state)).toEqual(['expired']);
  });

  it('needs the connection’s own Marquee-Agent-Connect credential', async () => {
    const one = await requested();
    const two = await requested();
    const none = await readStatus(one.start, {});
    expect(none.status).toBe(401);
    const other = await readStatus(one.start, { authorization: `Marquee-Agent-Connect ${two.start.connect_token}` });
    expect(other.status).toBe(401);
    const bearer = await readStatus(one.start, { authorization: `Bearer ${token}` });
    expect(bearer.status).toBe(401);
  });
});

describe('approval', () => {
  it('needs the code the agent shows, from a signed-in project member, within 24 hours', async () => {
    const { start } = await requested();
    const wrong = await approve(start, 'ZZZZ-ZZZZ');
    expect(wrong.status).toBe(403);
    expect((await approve(start, start.user_code.toLowerCase().replace('-', ' '))).status).toBe(200);

    const anonymous = await requested();
    const res = await server.request(
      'POST',
      `/dashboard/v1/agent-connections/${anonymous.start.connection.id}/approve`,
      {
        host: member.host,
        headers: { origin: member.origin },
        json: { user_code: anonymous.start.user_code },
      },
    );
    expect(res.status).toBe(401);

    const late = await requested();
    clock.advance(AGENT_APPROVAL_WINDOW_MS - 1);
    const shown = await (await signedInMember()).request(
      'GET',
      `/dashboard/v1/agent-connections/${late.start.connection.id}`,
    );
    expect(shown.json()).toMatchObject({ state: 'pending', name: 'Build bot' });
    expect(shown.text).not.toContain(late.start.user_code);
    clock.advance(1);
    const expired = await approve(late.start);
    expect(expired.status).toBe(410);
    expect(expired.json().code).toBe('link_expired');
  });

  it('stops taking codes for a connection after five tries a day', async () => {
    const { start } = await requested();
    for (let i = 0; i < 5; i++) expect((await approve(start, 'ZZZZ-ZZZZ')).status).toBe(403);
    expect((await approve(start)).status).toBe(429);
  });
});

describe('decisions arriving together', () => {
  /** Approves the connection as Ada in a transaction, and sends `request` while it is still open. */
  async function whileApproving(start: AgentConnectionStart, request: () => Promise<{ status: number; json(): any }>) {
    const { services } = server;
    const person = await services.store.db
      .selectFrom('people')
      .selectAll()
      .where('email', '=', 'ada@example.com')
      .executeTakeFirstOrThrow();
    let answer: Promise<{ status: number; json(): any }> | undefined;
    await services.store.transaction(async (work) => {
      const input = { id: start.connection.id, userCode: start.user_code, tenantId: projectId, person, requestId: 'r' };
      await approveConnection(services, work, input, clock.now());
      answer = request();
      await new Promise((r) => setTimeout(r, 300));
    });
    return answer!;
  }

  const connection = (id: string) =>
    server.services.store.db.selectFrom('agent_connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('refuses a deny that arrives while the connection is being approved, which stands', async () => {
    const { start } = await requested();
    const by = await signedInMember();
    const deny = await whileApproving(start, () =>
      by.request('POST', `/dashboard/v1/agent-connections/${start.connection.id}/deny`),
    );
    expect(deny.status).toBe(409);
    expect(deny.json().code).toBe('resource_conflict');
    expect((await connection(start.connection.id)).state).toBe('approved');
  });

  it('revokes the agent an approval made when the agent cancels at the same moment', async () => {
    const { start } = await requested();
    const cancel = await whileApproving(start, () =>
      server.request('POST', `/api/v1/agent-connections/${start.connection.id}/cancel`, {
        headers: { authorization: `Marquee-Agent-Connect ${start.connect_token}` },
      }),
    );
    expect(cancel.status).toBe(204);
    const row = await connection(start.connection.id);
    expect(row).toMatchObject({ state: 'cancelled', envelope: null });
    const agent = await server.services.store.db
      .selectFrom('agents')
      .innerJoin('credentials', 'credentials.id', 'agents.credential_id')
      .select(['agents.state', 'credentials.status'])
      .where('agents.id', '=', row.agent_id!)
      .executeTakeFirstOrThrow();
    expect(agent).toEqual({ state: 'revoked', status: 'revoked' });
  });
});

describe('collection and activation', () => {
  it('refuses collection before approval and opens the envelope only with the recipient’s private key', async () => {
    const { key, start } = await requested();
    const early = await server.request('POST', `/api/v1/agent-connections/${start.connection.id}/credential`, {
      headers: { authorization: `Marquee-Agent-Connect ${start.connect_token}` },
    });
    expect(early.status).toBe(409);
    await approve(start);
    const collection = await collectEnvelope(client(), start);
    expect(JSON.stringify(collection)).not.toMatch(/mq_proj_/);
    expect(collection.envelope.alg).toBe('X25519+HKDF-SHA-256+A256GCM');
    const stranger = await generateRecipientKey();
    await expect(
      openEnvelope(collection.envelope, collection.connection_id, stranger.privateKey),
    ).rejects.toBeInstanceOf(EnvelopeError);
    await expect(openEnvelope(collection.envelope, 'agc_other', key.privateKey)).rejects.toBeInstanceOf(EnvelopeError);
    // Another first character (one in 64 ciphertexts already starts with A: no tampering at all).
    const first = collection.envelope.ciphertext[0] === 'A' ? 'B' : 'A';
    const tampered = { ...collection.envelope, ciphertext: `${first}${collection.envelope.ciphertext.slice(1)}` };
    await expect(openEnvelope(tampered, collection.connection_id, key.privateKey)).rejects.toBeInstanceOf(
      EnvelopeError,
    );
    const credential = await openEnvelope(collection.envelope, collection.connection_id, key.privateKey);
    expect(credential.project_id).toBe(projectId);
  });

  it('lets the pending bearer activate and nothing else; activation repeats safely; the envelope is then gone', async () => {
    const { key, start } = await requested();
    await approve(start);
    const collection = await collectEnvelope(client(), start);
    const { token: pending } = await openEnvelope(collection.envelope, collection.connection_id, key.privateKey);
    expect((await server.request('GET', '/api/v1/project', { token: pending })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/agents/self', { token: pending })).status).toBe(401);
    const first = await server.request('POST', '/api/v1/agents/self/activate', { token: pending });
    expect(first.status, first.text).toBe(200);
    expect(first.json().state).toBe('active');
    expect(first.headers['marquee-credits-remaining']).toBeUndefined();
    const again = await server.request('POST', '/api/v1/agents/self/activate', { token: pending });
    expect(again.json()).toEqual(first.json());
    expect((await server.request('GET', '/api/v1/project', { token: pending })).status).toBe(200);
    const gone = await server.request('POST', `/api/v1/agent-connections/${start.connection.id}/credential`, {
      headers: { authorization: `Marquee-Agent-Connect ${start.connect_token}` },
    });
    expect(gone.status).toBe(409);
    expect(parseSse((await readStatus(start)).text).map((f) => f.data.state)).toEqual(['connected']);
  });

  it('answers two activations of one bearer arriving together alike', async () => {
    const { key, start } = await requested();
    await approve(start);
    const collection = await collectEnvelope(client(), start);
    const { token: pending } = await openEnvelope(collection.envelope, collection.connection_id, key.privateKey);
    const answers = await Promise.all(
      [1, 2, 3].map(() => server.request('POST', '/api/v1/agents/self/activate', { token: pending })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[1]!.json()).toEqual(answers[0]!.json());
    expect(answers[2]!.json()).toEqual(answers[0]!.json());
  });

  it('closes the delivery window 24 hours after approval: no collection, no activation', async () => {
    const { key, start } = await requested();
    await approve(start);
    const collection = await collectEnvelope(client(), start);
    const { token: pending } = await openEnvelope(collection.envelope, collection.connection_id, key.privateKey);
    clock.advance(AGENT_DELIVERY_WINDOW_MS);
    const collect = await server.request('POST', `/api/v1/agent-connections/${start.connection.id}/credential`, {
      headers: { authorization: `Marquee-Agent-Connect ${start.connect_token}` },
    });
    expect(collect.status).toBe(410);
    expect(collect.json().code).toBe('credential_issuance_expired');
    const activate = await server.request('POST', '/api/v1/agents/self/activate', { token: pending });
    expect(activate.status).toBe(410);
    // Housekeeping then deletes the envelope and revokes the pending bearer for good.
    await expireConnections(server.services.store, clock.now());
    const row = await server.services.store.db
      .selectFrom('agent_connections')
      .selectAll()
      .where('id', '=', start.connection.id)
      .executeTakeFirstOrThrow();
    expect(row.envelope).toBeNull();
    const agent = await server.services.store.db
      .selectFrom('agents')
      .select('state')
      .where('id', '=', row.agent_id!)
      .executeTakeFirstOrThrow();
    expect(agent.state).toBe('revoked');
    expect((await server.request('POST', '/api/v1/agents/self/activate', { token: pending })).status).toBe(409);
  });
});

describe('an agent and its project', () => {
  it('sees itself, and whether a member can sign in (connection_ready), without a meter debit', async () => {
    const fresh = await server.enroll({ name: 'Fresh CLI', agent_type: 'cli' });
    const before = await server.request('GET', '/api/v1/agents/self', { token: fresh.token });
    expect(before.status).toBe(200);
    expect(before.json()).toMatchObject({
      agent: { name: 'Fresh CLI', agent_type: 'cli', state: 'active' },
      connection_ready: false,
    });
    const again = await server.request('GET', '/api/v1/agents/self', { token: fresh.token });
    expect(again.headers['marquee-credits-remaining']).toBe(before.headers['marquee-credits-remaining']);
    await joinAsMember(server, smtp, fresh.token, 'first@example.com');
    expect((await server.request('GET', '/api/v1/agents/self', { token: fresh.token })).json().connection_ready).toBe(
      true,
    );
  });

  it('disconnects itself, but not the last active agent unless allowed; a revoked bearer’s repeat is a no-op', async () => {
    const own = await server.enroll();
    const last = await server.request('POST', '/api/v1/agents/self/disconnect', { token: own.token });
    expect(last.status).toBe(409);
    expect(last.json().code).toBe('agent_lockout_risk');
    expect((await server.request('GET', '/api/v1/project', { token: own.token })).status).toBe(200);
    const forced = await server.request('POST', '/api/v1/agents/self/disconnect', {
      token: own.token,
      json: { allow_last_agent: true },
    });
    expect(forced.status).toBe(204);
    expect(forced.headers['cache-control']).toBe('private, no-store');
    expect((await server.request('GET', '/api/v1/project', { token: own.token })).status).toBe(401);
    expect((await server.request('POST', '/api/v1/agents/self/disconnect', { token: own.token })).status).toBe(204);
    const bad = await server.request('POST', '/api/v1/agents/self/disconnect', {
      token: own.token,
      json: { allow_last_agent: 'yes' },
    });
    expect(bad.status).toBe(400);
  });

  it('disconnects one of two agents without the flag and ends the event streams its bearer opened', async () => {
    const second = await connectAgent(client(), { name: 'Second' }, { onStart: (s) => void approve(s) });
    const stream = new Promise<number>((resolve, reject) => {
      const req = server.rawRequest('GET', '/api/v1/events/stream', { token: second.credential.token }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 300));
    const res = await server.request('POST', '/api/v1/agents/self/disconnect', { token: second.credential.token });
    expect(res.status).toBe(204);
    expect(await stream).toBe(200);
    expect((await server.request('GET', '/api/v1/project', { token })).status).toBe(200);
  });

  it('keeps one of two agents that disconnect at the same moment without the flag (agent_lockout_risk)', async () => {
    const first = await server.enroll();
    const owner = await joinAsMember(server, smtp, first.token, 'pair-owner@example.com');
    const second = await connectAgent(
      client(),
      { name: 'Second of two' },
      {
        onStart: (s) =>
          void owner.request('POST', `/dashboard/v1/agent-connections/${s.connection.id}/approve`, {
            json: { user_code: s.user_code },
          }),
      },
    );
    const answers = await Promise.all(
      [first.token, second.credential.token].map((t) =>
        server.request('POST', '/api/v1/agents/self/disconnect', { token: t }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([204, 409]);
    expect(answers.find((a) => a.status === 409)!.json().code).toBe('agent_lockout_risk');
  });

  it('holds a connected agent to the capability areas it asked for (403 naming the missing one)', async () => {
    const narrow = await connectAgent(
      client(),
      { name: 'Screens only', capabilities: ['screens'] },
      { onStart: (s) => void approve(s) },
    );
    expect(narrow.credential.capabilities).toEqual(['screens']);
    const t = narrow.credential.token;
    expect((await server.request('GET', '/api/v1/screens', { token: t })).status).toBe(200);
    const playlists = await server.request('GET', '/api/v1/playlists', { token: t });
    expect(playlists.status).toBe(403);
    expect(playlists.json().detail).toContain('playlists');
    expect(playlists.json().missing_capability).toBe('playlists');
    const invitations = await server.request('GET', '/api/v1/invitations', { token: t });
    expect(invitations.json().missing_capability).toBe('project');
    const capabilities = await server.request('GET', '/api/v1/project/capabilities', {
      token: narrow.credential.token,
    });
    expect(capabilities.status).toBe(403);
    const reader = await connectAgent(
      client(),
      { name: 'Reader', capabilities: ['reports'] },
      { onStart: (s) => void approve(s) },
    );
    expect((await server.request('GET', '/api/v1/playlists', { token: reader.credential.token })).status).toBe(200);
    const write = await server.request('POST', '/api/v1/playlists', {
      token: reader.credential.token,
      idempotencyKey: randomKey(),
      json: { name: 'x', pages: [] },
    });
    expect(write.json().missing_capability).toBe('playlists');
  });

  it('follows the status stream until a member decides, then activates the collected bearer', async () => {
    const key = await generateRecipientKey();
    const start = await requestConnection(client(), { name: 'Patient' }, key);
    setTimeout(() => void approve(start), 400);
    const decided = await waitForDecision(client(), start);
    expect(decided.state).toBe('approved');
    const agent = await activateBearer(
      client(),
      (await openEnvelope((await collectEnvelope(client(), start)).envelope, start.connection.id, key.privateKey))
        .token,
    );
    expect(agent.state).toBe('active');
  });
});
