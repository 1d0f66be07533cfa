// The CLI's account and comment commands against a real server, run in-process: `account show`,
// `dashboard`, `auth revoke --yes`, and `comment show|set|delete` on screens, playlists and pages.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairActiveScreen } from '../../server/pairing/pairing.fixtures';
import { iframePlacement, page } from '../../server/playlists/content.fixtures';
import { randomKey, TestServer } from '../../server/testing/harness';
import { jsonInProcess, runInProcess } from './testing/cli-in-process';

let server: TestServer;
let work: string;

beforeAll(async () => {
  server = await TestServer.start();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-cli-account-'));
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

function newConfig(): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(work, 'config-'));
  return { MARQUEE_CONFIG: path.join(dir, 'config.json'), MARQUEE_API_URL: server.origin, HOME: dir };
}

async function ok(args: string[], env: Record<string, string>): Promise<any> {
  const { envelope, code, stderr } = await jsonInProcess(args, env);
  expect(envelope.ok, `${JSON.stringify(envelope)} ${stderr}`).toBe(true);
  expect(code).toBe(0);
  return envelope.data;
}

/** An enrolled config and the token it stored (read back from the owner-only file). */
async function enrolled(): Promise<{ env: Record<string, string>; token: string; projectId: string }> {
  const env = newConfig();
  const data = await ok(['enroll', '--email', 'ops@example.com'], env);
  const config = JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8'));
  const entry = Object.values(config.servers)[0] as { token: string };
  return { env, token: entry.token, projectId: data.project_id };
}

describe('account commands', () => {
  it('account show reads the project through the account shape', async () => {
    const { env, projectId } = await enrolled();
    const account = await ok(['account', 'show'], env);
    expect(account).toMatchObject({ id: projectId, email: 'ops@example.com', status: 'active' });
    const human = await runInProcess(['account', 'show'], env);
    expect(human.stdout).toContain(projectId);
    expect(human.stdout).toMatch(/credits:\s+\d+/);
  });

  it('dashboard prints a single-use link to the dashboard origin', async () => {
    const { env } = await enrolled();
    const link = await ok(['dashboard'], env);
    expect(link.url).toMatch(/\/#link=[A-Za-z0-9_-]{43}$/);
    expect(link.url.startsWith(server.config.dashboardOrigin)).toBe(true);
    const human = await runInProcess(['dashboard'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/#link=[A-Za-z0-9_-]{43}\n.*single use; expires/);
  });

  it('auth revoke needs --yes, then revokes the credential and forgets it', async () => {
    const { env, token } = await enrolled();
    const refused = await jsonInProcess(['auth', 'revoke'], env);
    expect(refused.code).toBe(2);
    expect((await server.request('GET', '/api/v1/project', { token })).status).toBe(200);
    expect(await ok(['auth', 'revoke', '--yes'], env)).toEqual({ revoked: true });
    expect((await server.request('GET', '/api/v1/project', { token })).status).toBe(401);
    const config = JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8'));
    expect(Object.keys(config.servers)).toEqual([]);
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
    const human = await runInProcess(['comment', 'show', 'screen', screen.id], env);
    expect(human.stdout).toContain('"owner": "facilities"');
    await ok(['comment', 'delete', 'screen', screen.id], env);
    expect((await runInProcess(['comment', 'show', 'screen', screen.id], env)).stdout).toContain('no comments');
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
      const result = await jsonInProcess(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.envelope.ok).toBe(false);
    }
    const missing = await jsonInProcess(['comment', 'show', 'screen', 'scr_missing'], env);
    expect(missing.code).toBe(4);
    expect(missing.envelope.error!.code).toBe('not_found');
  });
});
