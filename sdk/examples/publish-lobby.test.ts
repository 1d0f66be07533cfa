// The publish-lobby example, run as its users run it (a child process) against a real server.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, startPairing } from '../../server/pairing/pairing.fixtures';
import { TestServer } from '../../server/testing/harness';

const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, 'publish-lobby.ts');
const ROOT = path.resolve(import.meta.dirname, '../..');

let server: TestServer;
let work: string;
let runtimeFile: string;

beforeAll(async () => {
  server = await TestServer.start();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'publish-lobby-'));
  runtimeFile = path.join(work, 'runtime.js');
  fs.writeFileSync(runtimeFile, '/* stand-in for dist/sdk/marquee-app.js */\n');
});
afterAll(async () => {
  await server?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

function example(args: string[], env: Record<string, string> = {}) {
  return run(
    process.execPath,
    ['--import', 'tsx', SCRIPT, '--server', `http://127.0.0.1:${server.port}`, '--runtime-file', runtimeFile, ...args],
    {
      cwd: ROOT,
      env: { ...process.env, MARQUEE_TOKEN: '', ...env },
    },
  );
}

describe('sdk/examples/publish-lobby.ts', () => {
  it('enrolls, uploads the kv-counter app and a drawn image, and prints a playlist of both', async () => {
    const { stdout, stderr } = await example(['--email', 'lobby@example.com']);
    const playlist = JSON.parse(stdout);
    expect(playlist.name).toBe('Lobby');
    expect(playlist.pages.map((p: any) => [p.id, p.placements[0].content.type])).toEqual([
      ['welcome', 'image'],
      ['counter', 'application'],
    ]);
    const token = /export MARQUEE_TOKEN=(\S+)/.exec(stderr)![1]!;
    const app = (
      await server.request('GET', `/api/v1/applications/${playlist.pages[1].placements[0].content.application_id}`, {
        token,
      })
    ).json();
    expect(app).toMatchObject({
      name: 'KV counter',
      state: 'ready',
      latest_ready_release: playlist.pages[1].placements[0].content.release_id,
    });
    const media = (
      await server.request('GET', `/api/v1/media/${playlist.pages[0].placements[0].content.items[0].media_id}`, {
        token,
      })
    ).json();
    expect(media).toMatchObject({ filename: 'welcome.png', width: 1920, height: 1080 });
    expect(stderr).toMatch(/kv-counter: sent \d+ of \d+ bytes/);
  }, 60_000);

  it('takes a token and an image file, and pairs and assigns a screen', async () => {
    const { token } = await server.enroll();
    const image = path.join(work, 'lobby.jpg');
    fs.writeFileSync(
      image,
      await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#884422' } })
        .jpeg()
        .toBuffer(),
    );
    const { code, cookies } = await startPairing(server);

    const { stdout } = await example(['--image', image, '--pair', code], { MARQUEE_TOKEN: token });
    const playlist = JSON.parse(stdout);
    const screens = (await server.request('GET', '/api/v1/screens', { token })).json().items;
    expect(screens).toHaveLength(1);
    expect(screens[0]).toMatchObject({ label: 'Lobby', playlist_id: playlist.id, state: 'pairing_pending' });
    const media = (
      await server.request('GET', `/api/v1/media/${playlist.pages[0].placements[0].content.items[0].media_id}`, {
        token,
      })
    ).json();
    expect(media).toMatchObject({ filename: 'lobby.jpg', content_type: 'image/jpeg', width: 1280 });
    // The player heard the claim.
    const events = await openStream(server, '/runtime/v1/pairing-events', cookies).done;
    expect(events.frames[0]?.event).toBe('pairing.claimed');
  }, 60_000);

  it('says what is missing and exits 1 without a token or an email', async () => {
    const failure = (await example([]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain('pass --token');
  }, 60_000);
});
