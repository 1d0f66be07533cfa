// Feedback: a project files bug reports and feature requests and reads back its own, per kind;
// the operators read every project's in one inbox; capabilities advertise it for the CLI doctor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { runOperatorCommand } from '../operators/operator-cli';
import { TestServer, randomKey, type RequestOptions } from '../testing/harness';

let server: TestServer;
let operator: string;
const clock = new TestClock('2026-11-25T12:00:00Z');

beforeAll(async () => {
  server = await TestServer.start({ clock });
  const lines: string[] = [];
  const env = { MARQUEE_DATA_DIR: server.dataDir, MARQUEE_DATABASE_URL: server.config.databaseUrl };
  expect(await runOperatorCommand(['create', '--name', 'Inbox'], env, (l) => lines.push(l))).toBe(0);
  operator = lines.find((l) => l.startsWith('mq_op_'))!;
});
afterAll(() => server.stop());

const send = (token: string, kind: 'bugs' | 'features', json: unknown, options: RequestOptions = {}) =>
  server.request('POST', `/api/v1/feedback/${kind}`, { token, json, idempotencyKey: randomKey(), ...options });

describe('submitting feedback', () => {
  it('answers 201 with the submission, context included', async () => {
    const { token } = await server.enroll();
    const context = { cli_version: '0.3.0', platform: 'linux/x64', command: 'marquee screens list' };
    const res = await send(token, 'bugs', { title: 'List is slow', body: 'Takes 10 s with 80 screens.', context });
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({
      id: expect.stringMatching(/^fb_/),
      kind: 'bug',
      title: 'List is slow',
      body: 'Takes 10 s with 80 screens.',
      context,
      created_at: '2026-11-25T12:00:00.000Z',
    });
    const feature = await send(token, 'features', { title: 'Dark mode', body: 'Please.' });
    expect(feature.status).toBe(201);
    expect(feature.json()).toMatchObject({ kind: 'feature', context: {} });
  });

  it('refuses out-of-bounds titles and bodies and unknown fields with field errors, writing nothing', async () => {
    const { token } = await server.enroll();
    const cases: [unknown, string][] = [
      [{ title: '', body: 'b' }, 'title'],
      [{ title: 'x'.repeat(121), body: 'b' }, 'title'],
      [{ title: 't', body: '' }, 'body'],
      [{ title: 't', body: 'x'.repeat(4001) }, 'body'],
      [{ title: 't', body: 'b', severity: 'high' }, 'severity'],
      [{ title: 't', body: 'b', context: { platform: 'linux/x64', shell: 'zsh' } }, 'context'],
      [{ title: 't', body: 'b', context: { platform: 'linux' } }, 'context.platform'],
    ];
    for (const [json, field] of cases) {
      const res = await send(token, 'bugs', json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
      expect(
        res
          .json()
          .errors.map((e: any) => e.field)
          .join(' '),
        JSON.stringify(json),
      ).toContain(field);
    }
    expect((await send(token, 'bugs', { title: 'x'.repeat(120), body: 'x'.repeat(4000) })).status).toBe(201);
    expect((await server.request('GET', '/api/v1/feedback/bugs', { token })).json().items).toHaveLength(1);
  });

  it('does its effect once for a retried Idempotency-Key', async () => {
    const { token } = await server.enroll();
    const key = randomKey();
    const first = await send(token, 'bugs', { title: 'Once', body: 'only' }, { idempotencyKey: key });
    const again = await send(token, 'bugs', { title: 'Once', body: 'only' }, { idempotencyKey: key });
    expect(again.status).toBe(201);
    expect(again.json().id).toBe(first.json().id);
    expect((await server.request('GET', '/api/v1/feedback/bugs', { token })).json().items).toHaveLength(1);
  });

  it('holds a project to its hourly budget', async () => {
    const { token } = await server.enroll();
    for (let i = 0; i < 20; i++)
      expect((await send(token, 'features', { title: `f${i}`, body: 'b' })).status).toBe(201);
    const over = await send(token, 'bugs', { title: 'one more', body: 'b' });
    expect(over.status).toBe(429);
    expect(over.json().code).toBe('rate_limited');
  });
});

describe('reading feedback', () => {
  it('lists a project’s own submissions of one kind, newest first, and no other project’s', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    clock.advance(1000);
    const first = (await send(a.token, 'bugs', { title: 'first', body: 'b' })).json();
    clock.advance(1000);
    const second = (await send(a.token, 'bugs', { title: 'second', body: 'b' })).json();
    await send(a.token, 'features', { title: 'wish', body: 'b' });
    const other = (await send(b.token, 'bugs', { title: 'theirs', body: 'b' })).json();

    const bugs = (await server.request('GET', '/api/v1/feedback/bugs', { token: a.token })).json();
    expect(bugs.items.map((f: any) => f.id)).toEqual([second.id, first.id]);
    const features = (await server.request('GET', '/api/v1/feedback/features', { token: a.token })).json();
    expect(features.items.map((f: any) => f.title)).toEqual(['wish']);
    const theirs = (await server.request('GET', '/api/v1/feedback/bugs', { token: b.token })).json();
    expect(theirs.items.map((f: any) => f.id)).toEqual([other.id]);
    expect((await server.request('GET', '/api/v1/feedback/bugs')).status).toBe(401);
  });

  it('lets an account bearer file and read its own', async () => {
    const { token } = await server.createAccount();
    expect((await send(token, 'features', { title: 'from an account', body: 'b' })).status).toBe(201);
    const list = (await server.request('GET', '/api/v1/feedback/features', { token })).json();
    expect(list.items.map((f: any) => f.title)).toEqual(['from an account']);
  });
});

describe('the operators’ inbox', () => {
  const op = (path: string) => server.request('GET', path, { token: operator });

  it('shows every project’s submissions newest first, naming the project, in pages', async () => {
    const a = await server.enroll();
    const b = await server.enroll();
    clock.advance(1000);
    const fromA = (await send(a.token, 'bugs', { title: 'inbox a', body: 'b' })).json();
    clock.advance(1000);
    const fromB = (await send(b.token, 'features', { title: 'inbox b', body: 'b' })).json();

    const res = await op('/operator/v1/feedback?limit=2');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const page = res.json();
    expect(page.items.map((f: any) => [f.id, f.project_id])).toEqual([
      [fromB.id, b.projectId],
      [fromA.id, a.projectId],
    ]);
    expect(page.items[0]).toMatchObject({ kind: 'feature', title: 'inbox b', body: 'b', context: {} });
    const rest = (await op(`/operator/v1/feedback?limit=2&cursor=${page.next_cursor}`)).json();
    expect(rest.items.length).toBeGreaterThan(0);
    expect(rest.items.map((f: any) => f.id)).not.toContain(fromA.id);
    const bugs = (await op('/operator/v1/feedback?kind=bug&limit=1')).json();
    expect(bugs.items.map((f: any) => f.id)).toEqual([fromA.id]);
    expect((await op('/operator/v1/feedback?cursor=nonsense')).json().code).toBe('invalid_request');
  });

  it('is the operator realm only, and the operator cannot file as a project', async () => {
    const project = await server.enroll();
    const account = await server.createAccount();
    for (const token of [project.token, account.token]) {
      expect((await server.request('GET', '/operator/v1/feedback', { token })).status).toBe(401);
    }
    expect((await server.request('GET', '/operator/v1/feedback')).status).toBe(401);
    expect((await server.request('GET', '/api/v1/feedback/bugs', { token: operator })).status).toBe(401);
    expect((await send(operator, 'bugs', { title: 't', body: 'b' })).status).toBe(401);
  });
});

describe('capabilities', () => {
  it('advertise feedback', async () => {
    expect((await server.request('GET', '/api/v1/capabilities')).json().features.feedback).toBe(true);
  });
});
