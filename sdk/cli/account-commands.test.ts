// The CLI's account, agent, invitation, link, feedback and comment commands as subprocesses of the
// built command against a real server: `account show`, `dashboard`, `auth revoke --yes`, `agent
// connect` (a member approves by code, denies, or the CLI is stopped while it waits), `invitation
// create` for a member, `screen link`, `feedback send|list`, and `comment show|set|delete` on
// screens, playlists and pages. No run prints a token.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pairActiveScreen } from '../../server/pairing/pairing.fixtures';
import { iframePlacement, page } from '../../server/playlists/content.fixtures';
import { CookieJar, randomKey, TestServer } from '../../server/testing/harness';
import { joinAsMember, TEST_PASSWORD_COST } from '../../server/invitations/invitations.fixtures';
import { SmtpCapture } from '../../server/mail/mail.fixtures';
import { envelopeOf, runCli, startCli, type CliEnvelope, type CliResult } from './testing/cli-process';

// A Node process per run: a second or more apiece on a busy machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let server: TestServer;
let smtp: SmtpCapture;
let work: string;
/** Everything every run printed, checked for the tokens at the end. */
const printed: string[] = [];
const tokens: string[] = [];

function remember(result: CliResult): CliResult {
  printed.push(result.stdout, result.stderr);
  return result;
}

async function run(args: string[], env: Record<string, string>): Promise<CliResult> {
  return remember(await runCli(args, { env }));
}

async function json(args: string[], env: Record<string, string>): Promise<CliResult & { envelope: CliEnvelope }> {
  const result = await run([...args, '--json'], env);
  return { ...result, envelope: envelopeOf(result) };
}

beforeAll(async () => {
  smtp = await SmtpCapture.start();
  server = await TestServer.start({ config: { smtpUrl: smtp.url }, tuning: { passwordHash: TEST_PASSWORD_COST } });
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-cli-account-'));
});
afterAll(async () => {
  await server.stop();
  await smtp.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

function newConfig(): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(work, 'config-'));
  return { MARQUEE_CONFIG: path.join(dir, 'config.json'), MARQUEE_API_URL: server.origin, HOME: dir };
}

async function ok(args: string[], env: Record<string, string>): Promise<any> {
  const { envelope, code, stderr } = await json(args, env);
  expect(envelope.ok, `${JSON.stringify(envelope)} ${stderr}`).toBe(true);
  expect(code).toBe(0);
  expect(envelope.request_id).toMatch(/^req_/);
  return envelope.data;
}

/** An enrolled config and the token it stored (read back from the owner-only file). */
async function enrolled(): Promise<{ env: Record<string, string>; token: string; projectId: string }> {
  const env = newConfig();
  const data = await ok(['enroll', '--email', 'ops@example.com'], env);
  const config = JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8'));
  const entry = Object.values(config.servers)[0] as { token: string };
  tokens.push(entry.token);
  return { env, token: entry.token, projectId: data.project_id };
}

describe('account commands', () => {
  it('account show reads the project through the account shape', async () => {
    const { env, projectId } = await enrolled();
    const account = await ok(['account', 'show'], env);
    expect(account).toMatchObject({ id: projectId, email: 'ops@example.com', status: 'active' });
    const human = await run(['account', 'show'], env);
    expect(human.stdout).toContain(projectId);
    expect(human.stdout).toMatch(/credits:\s+\d+/);
    // `auth status` is the same command under the reference client's other name.
    expect(await ok(['auth', 'status'], env)).toEqual(await ok(['account', 'show'], env));
  });

  it('dashboard prints a single-use link to the dashboard origin', async () => {
    const { env } = await enrolled();
    const link = await ok(['dashboard'], env);
    expect(link.url).toMatch(/\/#link=[A-Za-z0-9_-]{43}$/);
    expect(link.url.startsWith(server.config.dashboardOrigin)).toBe(true);
    const human = await run(['dashboard'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/#link=[A-Za-z0-9_-]{43}\n.*single use; expires/);
  });

  it('dashboard -q prints the link alone: the essential value, never nothing', async () => {
    const { env } = await enrolled();
    const quiet = await run(['dashboard', '-q'], env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^\S+\/#link=[A-Za-z0-9_-]{43}\n$/);
  });

  it('auth revoke needs --yes, then revokes the credential and forgets it', async () => {
    const { env, token } = await enrolled();
    const refused = await json(['auth', 'revoke'], env);
    expect(refused.code).toBe(2);
    expect((await server.request('GET', '/api/v1/project', { token })).status).toBe(200);
    expect(await ok(['auth', 'revoke', '--yes'], env)).toEqual({ revoked: true });
    expect((await server.request('GET', '/api/v1/project', { token })).status).toBe(401);
    const config = JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8'));
    expect(Object.keys(config.servers)).toEqual([]);
  });

  it('says how to get past a stored credential the server no longer accepts', async () => {
    const { env } = await enrolled();
    // Another copy of the config file revokes it (another machine, a member in the dashboard).
    const copy = path.join(path.dirname(env.MARQUEE_CONFIG!), 'copy.json');
    fs.copyFileSync(env.MARQUEE_CONFIG!, copy);
    await ok(['auth', 'revoke', '--yes'], { ...env, MARQUEE_CONFIG: copy });
    const stale = await json(['screen', 'list'], env);
    expect(stale.code).toBe(3);
    expect(stale.envelope.error).toMatchObject({
      code: 'unauthorized',
      hint: expect.stringContaining('auth revoke --yes'),
    });
    expect((await run(['screen', 'list'], env)).stderr).toContain('marquee auth revoke --yes removes it');
    // As said: revoking the revoked credential drops it, and the next command enrolls anew.
    await ok(['auth', 'revoke', '--yes'], env);
    expect(await ok(['enroll', '--email', 'ops@example.com'], env)).toMatchObject({ enrolled_now: true });
  });
});

describe('agent connect', () => {
  let owner: Awaited<ReturnType<typeof enrolled>>;
  let member: Awaited<ReturnType<typeof joinAsMember>>;

  beforeAll(async () => {
    owner = await enrolled();
    member = await joinAsMember(server, smtp, owner.token, 'ada@example.com', { name: 'Ada' });
  });

  /** Starts `agent connect --json` and answers the approval URL's connection id and the code, once printed. */
  async function connecting(env: Record<string, string>, args: string[] = []) {
    const cli = startCli(['agent', 'connect', ...args, '--json'], { env });
    await expect
      .poll(() => cli.stderr, { timeout: 20_000 })
      .toMatch(/type the code [2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}/);
    const url = /open (\S+)\n/.exec(cli.stderr)![1]!;
    const code = /type the code (\S+)\./.exec(cli.stderr)![1]!;
    expect(url).toMatch(new RegExp(`^${server.config.dashboardOrigin.replace(/[.]/g, '\\.')}/connect/agc_`));
    return { cli, id: url.split('/connect/')[1]!, code };
  }

  it('prints the approval URL and code, waits for the member, and stores the activated credential', async () => {
    const env = newConfig();
    const { cli, id, code } = await connecting(env, ['--name', 'Build bot', '--areas', 'screens,playlists']);
    const approved = await member.request('POST', `/dashboard/v1/agent-connections/${id}/approve`, {
      json: { user_code: code },
    });
    expect(approved.status, approved.text).toBe(200);
    const result = remember(await cli.done);
    expect(result.code, result.stderr).toBe(0);
    const envelope = envelopeOf(result);
    expect(envelope.request_id).toMatch(/^req_/);
    expect(envelope.data).toMatchObject({
      project_id: owner.projectId,
      agent: { name: 'Build bot', agent_type: 'cli', state: 'active', capabilities: ['screens', 'playlists'] },
    });
    const config = JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8'));
    const stored = config.servers[server.origin];
    expect(stored.project_id).toBe(owner.projectId);
    tokens.push(stored.token);
    expect(fs.statSync(env.MARQUEE_CONFIG!).mode & 0o777).toBe(0o600);
    // The stored credential works, within the areas asked for.
    expect((await ok(['screen', 'list'], env)).items).toEqual([]);
    const outside = await json(['billing', 'balance'], env);
    expect(outside.code).toBe(3);
  });

  it('ends with exit 3 (connection_denied) and stores nothing when the member denies', async () => {
    const env = newConfig();
    const { cli, id } = await connecting(env);
    const denied = await member.request('POST', `/dashboard/v1/agent-connections/${id}/deny`);
    expect(denied.status, denied.text).toBe(200);
    const result = remember(await cli.done);
    expect(result.code, result.stderr).toBe(3);
    expect(envelopeOf(result).error).toMatchObject({ code: 'connection_denied' });
    expect(
      fs.existsSync(env.MARQUEE_CONFIG!) ? JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8')).servers : {},
    ).toEqual({});
  });

  it('withdraws the request when stopped with Ctrl-C while waiting (exit 130)', async () => {
    const env = newConfig();
    const { cli, id } = await connecting(env);
    cli.child.kill('SIGINT');
    const result = remember(await cli.done);
    expect(result.code, result.stderr).toBe(130);
    expect(envelopeOf(result).error).toMatchObject({ code: 'interrupted' });
    const shown = await member.request('GET', `/dashboard/v1/agent-connections/${id}`);
    expect(shown.json().state, shown.text).toBe('cancelled');
  });

  it('prints the approval URL and code even with -q: the member cannot decide without them', async () => {
    const env = newConfig();
    const { cli } = await connecting(env, ['-q']);
    cli.child.kill('SIGINT');
    expect(remember(await cli.done).code).toBe(130);
  });

  it('refuses to replace a credential the config already holds, and an unknown area', async () => {
    const { env } = await enrolled();
    const held = await json(['agent', 'connect'], env);
    expect(held.code).toBe(12);
    expect(held.envelope.error!.code).toBe('already_connected');
    const wrong = await json(['agent', 'connect', '--areas', 'screens,everything'], newConfig());
    expect(wrong.code).toBe(2);
  });
});

describe('invitation create', () => {
  let owner: Awaited<ReturnType<typeof enrolled>>;

  beforeAll(async () => {
    owner = await enrolled();
    await joinAsMember(server, smtp, owner.token, 'grace@example.com', { name: 'Grace' });
  });

  const outstanding = async () =>
    (await ok(['invitation', 'list', '--status', 'outstanding', '--all'], owner.env)).items.map((i: any) => i.email);

  it('says a member is a member already, and does not invite it again', async () => {
    const made = await ok(['invitation', 'create', 'Grace@Example.com'], owner.env);
    expect(made.items).toEqual([]);
    expect(made.already_members).toEqual(['Grace@Example.com']);
    const human = await run(['invitation', 'create', 'grace@example.com'], owner.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/grace@example\.com is already a member: not invited again/);
    expect(await outstanding()).toEqual([]);
  });

  it('invites the others named with a member', async () => {
    const made = await ok(['invitation', 'create', 'grace@example.com', 'hopper@example.com'], owner.env);
    expect(made.items.map((i: any) => [i.email, i.status])).toEqual([['hopper@example.com', 'outstanding']]);
    expect(made.already_members).toEqual(['grace@example.com']);
    expect(await outstanding()).toEqual(['hopper@example.com']);
  });

  it('--link -q prints the link, shown once, rather than the id', async () => {
    const quiet = await run(['invitation', 'create', '--link', '-q'], owner.env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^\S+\/#invite=[A-Za-z0-9_-]{43}\n$/);
  });
});

describe('screen link', () => {
  it('claims the setup code a browser shows, dashed or not, and the browser continues to its player', async () => {
    const { env } = await enrolled();
    const jar = new CookieJar();
    const code = (await server.request('POST', '/runtime/v1/browser-links', { cookies: jar })).json().code as string;
    const claimed = await ok(['screen', 'link', code.replace('-', '').toLowerCase(), '--label', 'Reception TV'], env);
    expect(claimed).toMatchObject({ status: 'claimed', screen: { state: 'pairing_pending' } });
    const next = await server.request('GET', '/runtime/v1/browser-links/continue', { cookies: jar });
    expect(next.status).toBe(303);
    expect(next.headers.location).toContain(`${claimed.screen.public_url}#provision=`);
    const shown = await ok(['screen', 'show', claimed.screen.id], env);
    expect(shown.label).toBe('Reception TV');
    const again = await json(['screen', 'link', code], env);
    expect(again.code).toBe(5);
  });
});

describe('feedback commands', () => {
  it('send a bug report and a feature request with the CLI context, and list them newest first', async () => {
    const { env } = await enrolled();
    const bug = await ok(['feedback', 'send', 'bug', 'Toast cut off', '--body', 'The third line is missing.'], env);
    expect(bug).toMatchObject({
      kind: 'bug',
      title: 'Toast cut off',
      context: { platform: expect.stringContaining('/') },
    });
    expect(bug.context.cli_version).toMatch(/\d+\.\d+\.\d+/);
    await ok(['feedback', 'send', 'feature', 'Weekly report', '--body', 'A PDF each Monday.'], env);
    const list = await ok(['feedback', 'list'], env);
    expect(list.items.map((f: any) => f.kind).sort()).toEqual(['bug', 'feature']);
    const times = list.items.map((f: any) => f.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await json(['feedback', 'send', 'praise', 'Nice'], env)).code).toBe(2);
    expect((await json(['feedback', 'send', 'bug', 'No body'], env)).code).toBe(2);
    const long = await json(['feedback', 'send', 'bug', 'x'.repeat(121), '--body', 'b'], env);
    expect(long.code).toBe(8);
    expect(long.envelope.error!.code).toBe('invalid_request');
  });
});

describe('comment commands', () => {
  it('set, show and delete comments on a screen, a playlist and a page', async () => {
    const { env, token } = await enrolled();
    const { screen } = await pairActiveScreen(server, token);
    const created = await server.request('POST', '/api/v1/playlists', {
      token,
      idempotencyKey: randomKey(),
      json: { name: 'Foyer', pages: [page('welcome', [iframePlacement('ticker')])] },
    });
    const playlistId = created.json().id as string;
    expect(await ok(['comment', 'show', 'screen', screen.id], env)).toEqual({ comments: null });
    expect(await ok(['comment', 'set', 'screen', screen.id, '{"owner":"facilities"}'], env)).toEqual({
      comments: { owner: 'facilities' },
    });
    const file = path.join(work, 'note.json');
    fs.writeFileSync(file, JSON.stringify({ approved_by: 'Ana' }));
    await ok(['comment', 'set', 'playlist', playlistId, '--page', 'welcome', '--file', file], env);
    expect(await ok(['comment', 'show', 'playlist', playlistId, '--page', 'welcome'], env)).toEqual({
      comments: { approved_by: 'Ana' },
    });
    expect(await ok(['comment', 'show', 'playlist', playlistId], env)).toEqual({ comments: null });
    const human = await run(['comment', 'show', 'screen', screen.id], env);
    expect(human.stdout).toBe('{\n  "owner": "facilities"\n}\n');
    await ok(['comment', 'delete', 'screen', screen.id], env);
    expect((await run(['comment', 'show', 'screen', screen.id], env)).stdout).toContain('no comments');
  });

  it('refuses what is not a JSON object, a wrong target, and a page of a screen, before any request', async () => {
    const { env } = await enrolled();
    for (const args of [
      ['comment', 'set', 'screen', 'scr_x', '[1,2]'],
      ['comment', 'set', 'screen', 'scr_x', 'not json'],
      ['comment', 'set', 'screen', 'scr_x'],
      ['comment', 'show', 'media', 'med_x'],
      ['comment', 'show', 'screen', 'scr_x', '--page', 'welcome'],
    ]) {
      const result = await json(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.envelope.ok).toBe(false);
    }
    const missing = await json(['comment', 'show', 'screen', 'scr_missing'], env);
    expect(missing.code).toBe(4);
    expect(missing.envelope.error!.code).toBe('not_found');
  });
});

describe('secrets', () => {
  it('never printed a token, in any run', () => {
    expect(tokens.length).toBeGreaterThan(5);
    for (const output of printed) for (const token of tokens) expect(output).not.toContain(token);
  });
});
