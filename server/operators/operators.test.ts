// Operators: a bearer of its own realm, made on the server host and shown once; routes to list
// projects, suspend (ending open streams) and resume one, change its plan and grant credits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { joinAsMember, TEST_PASSWORD_COST } from '../invitations/invitations.fixtures';
import { SmtpCapture } from '../mail/mail.fixtures';
import { pairedPlayer } from '../runtime/runtime.fixtures';
import { sha256Hex } from '../keys';
import { TestServer, randomKey, type RequestOptions } from '../testing/harness';
import { runOperatorCommand } from './operator-cli';

let smtp: SmtpCapture;
let server: TestServer;
let operator: string;
const clock = new TestClock('2026-11-25T12:00:00Z');

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  server = await TestServer.start({
    clock,
    config: { smtpUrl: smtp.url },
    tuning: { passwordHash: TEST_PASSWORD_COST },
  });
  operator = (await makeOperator('Night shift')).token;
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
});

const env = () => ({ MARQUEE_DATA_DIR: server.dataDir, MARQUEE_DATABASE_URL: server.config.databaseUrl });

async function makeOperator(name: string): Promise<{ id: string; token: string; lines: string[] }> {
  const lines: string[] = [];
  expect(await runOperatorCommand(['create', '--name', name], env(), (l) => lines.push(l))).toBe(0);
  const token = lines.find((l) => l.startsWith('mq_op_'))!;
  const id = /Operator (opr_\S+)/.exec(lines[0]!)![1]!;
  return { id, token, lines };
}

const op = (method: string, path: string, options: RequestOptions = {}) =>
  server.request(method, path, { token: operator, ...options });

/** Resolves with the status when the server ends the stream. */
function streamEnds(path: string, options: RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = server.rawRequest('GET', path, options, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
  });
}

describe('the operator bearer', () => {
  it('is made by `npm run operator -- create`, shown once, stored only as its hash', async () => {
    const made = await makeOperator('Day shift');
    expect(made.token).toMatch(/^mq_op_[A-Za-z0-9_-]{43}$/);
    const row = await server.services.store.db
      .selectFrom('operators')
      .selectAll()
      .where('id', '=', made.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256Hex(made.token));
    expect(JSON.stringify(row)).not.toContain(made.token);
    const listed: string[] = [];
    await runOperatorCommand(['list'], env(), (l) => listed.push(l));
    expect(listed.join('\n')).toContain(made.id);
    expect(listed.join('\n')).not.toContain(made.token);
    expect((await server.request('GET', '/operator/v1/projects', { token: made.token })).status).toBe(200);
    expect(await runOperatorCommand(['revoke', made.id], env(), () => {})).toBe(0);
    expect((await server.request('GET', '/operator/v1/projects', { token: made.token })).status).toBe(401);
    expect(await runOperatorCommand(['nonsense'], env(), () => {})).toBe(2);
  });

  it('works on operator routes only, and nothing else works there', async () => {
    const project = await server.enroll();
    const account = await server.createAccount();
    for (const token of [project.token, account.token, `mq_op_${'x'.repeat(43)}`]) {
      expect((await server.request('GET', '/operator/v1/projects', { token })).status).toBe(401);
    }
    for (const path of ['/api/v1/project', '/api/v1/account', '/api/v1/screens', '/api/v1/agents/self']) {
      expect((await op('GET', path)).status, path).toBe(401);
    }
    expect((await op('GET', '/dashboard/v1/session', { host: `dashboard.localhost:${server.port}` })).status).toBe(401);
  });
});

describe('projects', () => {
  it('lists projects newest first with their counts, in pages', async () => {
    clock.advance(1000);
    const a = await server.enroll({ project_name: 'Operator A', email: 'a@example.com' });
    await joinAsMember(server, smtp, a.token, 'member-a@example.com');
    clock.advance(1000);
    const b = await server.enroll({ project_name: 'Operator B' });
    const list = (await op('GET', '/operator/v1/projects?limit=2')).json();
    expect(list.items.map((p: any) => p.id)).toEqual([b.projectId, a.projectId]);
    const rest = (await op('GET', `/operator/v1/projects?limit=2&cursor=${list.next_cursor}`)).json();
    expect(rest.items.map((p: any) => p.id)).not.toContain(a.projectId);
    expect(rest.items.length).toBeGreaterThan(0);
    const one = (await op('GET', `/operator/v1/projects/${a.projectId}`)).json();
    expect(one).toMatchObject({
      name: 'Operator A',
      status: 'active',
      plan: 'signage',
      contact_email: 'a@example.com',
      member_count: 1,
      active_agent_count: 1,
    });
    expect((await op('GET', '/operator/v1/projects/prj_nothing')).status).toBe(404);
    expect((await op('GET', '/operator/v1/projects?limit=500')).status).toBe(400);
  });

  it('suspends a project: its open streams end, its credentials are refused, and resuming restores them', async () => {
    const p = await server.enroll();
    const member = await joinAsMember(server, smtp, p.token, 'suspended-member@example.com');
    const player = await pairedPlayer(server, p.token);
    const control = streamEnds('/api/v1/events/stream', { token: p.token });
    const runtime = streamEnds('/runtime/v1/events', {
      cookies: player.cookies,
      headers: { accept: 'text/event-stream' },
    });
    await new Promise((r) => setTimeout(r, 300));
    const res = await op('POST', `/operator/v1/projects/${p.projectId}/suspend`, { json: { reason: 'unpaid' } });
    expect(res.status).toBe(200);
    expect(res.json().status).toBe('suspended');
    expect(await control).toBe(200);
    expect(await runtime).toBe(200);
    const refused = await server.request('GET', '/api/v1/project', { token: p.token });
    expect(refused.status).toBe(403);
    expect(refused.json().detail).toContain('suspended');
    expect((await server.request('GET', '/runtime/v1/manifest', { cookies: player.cookies })).status).toBe(401);
    expect((await member.request('GET', '/dashboard/v1/members')).status).toBe(403);
    expect((await op('POST', `/operator/v1/projects/${p.projectId}/suspend`)).json().status).toBe('suspended');
    const resumed = await op('POST', `/operator/v1/projects/${p.projectId}/resume`);
    expect(resumed.json().status).toBe('active');
    expect((await server.request('GET', '/api/v1/project', { token: p.token })).status).toBe(200);
    expect((await member.request('GET', '/dashboard/v1/members')).status).toBe(200);
    const types = (await server.request('GET', '/api/v1/events', { token: p.token }))
      .json()
      .items.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['account.suspended', 'account.resumed']));
  });

  it('suspends and resumes once when the same request arrives twice at the same moment', async () => {
    const p = await server.enroll();
    const typesOf = async () =>
      (
        await server.services.store.db
          .selectFrom('events')
          .select('type')
          .where('tenant_id', '=', p.projectId)
          .where('type', 'in', ['account.suspended', 'account.resumed'])
          .orderBy('position')
          .execute()
      ).map((e) => e.type);
    for (const action of ['suspend', 'resume']) {
      const answers = await Promise.all(
        [1, 2, 3].map(() => op('POST', `/operator/v1/projects/${p.projectId}/${action}`)),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    }
    expect(await typesOf()).toEqual(['account.suspended', 'account.resumed']);
  });

  it('changes a plan to one of the catalog (the capability set follows at once)', async () => {
    const p = await server.enroll();
    expect((await op('PUT', `/operator/v1/projects/${p.projectId}/plan`, { json: { plan: 'gold' } })).status).toBe(400);
    const before = (await server.request('GET', '/api/v1/project/capabilities', { token: p.token })).json();
    expect(before.effective).not.toContain('advertising');
    const res = await op('PUT', `/operator/v1/projects/${p.projectId}/plan`, { json: { plan: 'advertising' } });
    expect(res.json().plan).toBe('advertising');
    const after = (await server.request('GET', '/api/v1/project/capabilities', { token: p.token })).json();
    expect(after.effective).toContain('advertising');
    expect(after.revision).toBe(before.revision + 1);
  });

  it('grants credits once per Idempotency-Key, in the ledger as operator_grant', async () => {
    const p = await server.enroll();
    expect(
      (await op('POST', `/operator/v1/projects/${p.projectId}/credit-grants`, { json: { credits: 5, reason: 'x' } }))
        .status,
    ).toBe(400);
    const key = randomKey();
    const grant = () =>
      op('POST', `/operator/v1/projects/${p.projectId}/credit-grants`, {
        idempotencyKey: key,
        json: { credits: 500, reason: 'pilot' },
      });
    const first = await grant();
    expect(first.status).toBe(201);
    expect(first.json().granted_millicredits).toBe('500000');
    expect((await grant()).json()).toEqual(first.json());
    const statement = (await server.request('GET', '/api/v1/billing/statement', { token: p.token })).json().items;
    expect(statement).toContainEqual(
      expect.objectContaining({ kind: 'operator_grant', amount_millicredits: '500000', count: 1 }),
    );
    const bad = await op('POST', `/operator/v1/projects/${p.projectId}/credit-grants`, {
      idempotencyKey: randomKey(),
      json: { credits: 0.5, reason: 'x' },
    });
    expect(bad.status).toBe(400);
  });
});
