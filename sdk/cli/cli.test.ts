// The `marquee` command as a subprocess against a real server (one per file), through a loopback
// proxy that can lose connections, slow uploads and cut streams. Every run's JSON envelope is
// checked, and no run may ever print the credential.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStream, startPairing } from '../../server/pairing/pairing.fixtures';
import { clientId, randomKey, TestServer, type CookieJar } from '../../server/testing/harness';
import { createMarqueeClient, type MarqueeClient } from '../client/marquee-client';
import { CLI_VERSION } from './version';
import { envelopeOf, runCli, startCli, type CliEnvelope, type CliResult } from './testing/cli-process';
import { FaultProxy } from './testing/fault-proxy';

// Each run is a Node process with tsx: seconds apiece on a busy machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const KV_COUNTER = path.resolve(import.meta.dirname, '../examples/kv-counter');
const VENDOR_KEY = 'sk-cli-test-vendor-key-0123456789';

let server: TestServer;
let proxy: FaultProxy;
let vendor: http.Server;
let work: string;
/** The main project's config file, enrolled by the first test. */
let configPath: string;
let token: string;
/** The server's own port, for in-process checks that bypass the proxy. */
let direct: MarqueeClient;
/** Everything every run printed, checked for the credential at the end. */
const printed: string[] = [];
/** Ids one describe block makes and a later one uses. */
const shared: { screenId?: string; imageId?: string; playlistId?: string; applicationId?: string } = {};

type Env = Record<string, string | undefined>;

function baseEnv(extra: Env = {}): Env {
  return { MARQUEE_CONFIG: configPath, MARQUEE_API_URL: proxy.origin, ...extra };
}

async function run(args: string[], env: Env = {}, stdin?: string): Promise<CliResult> {
  const result = await runCli(args, { env: baseEnv(env), stdin });
  printed.push(result.stdout, result.stderr);
  return result;
}

/** Runs with --json and answers the exit code and the one envelope. */
async function json(args: string[], env: Env = {}): Promise<CliResult & { envelope: CliEnvelope }> {
  const result = await run([...args, '--json'], env);
  return { ...result, envelope: envelopeOf(result) };
}

/** Runs with --json, expecting success; answers the envelope's data. */
async function ok(args: string[], env: Env = {}, local = false): Promise<any> {
  const result = await json(args, env);
  expect(result.envelope, `${result.stdout}${result.stderr}`).toMatchObject({ ok: true });
  expect(result.code).toBe(0);
  if (local) expect(result.envelope.request_id).toBeNull();
  else expect(result.envelope.request_id).toMatch(/^req_/);
  return result.envelope.data;
}

/** Runs with --json, expecting a failure of this exit code and problem code; answers the error. */
async function fails(args: string[], exitCode: number, code: string, env: Env = {}): Promise<any> {
  const result = await json(args, env);
  expect(result.envelope.ok, result.stdout).toBe(false);
  expect(result.envelope.error!.code, result.stdout).toBe(code);
  expect(result.code, result.stderr).toBe(exitCode);
  return result.envelope.error;
}

function freshConfig(): string {
  return path.join(fs.mkdtempSync(path.join(work, 'config-')), 'marquee', 'config.json');
}

async function png(width: number, height: number, color = '#c04020'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();
}

/** A port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The player's side: after the claim, hear it and complete pairing (runtime plane). */
async function completePairing(cookies: CookieJar): Promise<void> {
  const events = await openStream(server, '/runtime/v1/pairing-events', cookies).done;
  const nonce = events.frames[0]!.data.completion_nonce;
  const done = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
    cookies,
    json: { completion_nonce: nonce },
  });
  expect(done.status, done.text).toBe(200);
}

/** A local stand-in for the image vendor (OpenAI-compatible images API). */
async function startVendor(): Promise<http.Server> {
  const image = (await png(1536, 1024, '#2060c0')).toString('base64');
  const vendorServer = http.createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ created: 1, data: [{ b64_json: image }], usage: { total_tokens: 10 } }));
  });
  await new Promise<void>((resolve) => vendorServer.listen(0, '127.0.0.1', resolve));
  return vendorServer;
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-cli-'));
  configPath = path.join(work, 'home', 'marquee', 'config.json');
  proxy = await FaultProxy.start();
  vendor = await startVendor();
  server = await TestServer.start({
    config: {
      // Signed upload URLs go through the proxy too, so a test can slow an upload down.
      controlOrigin: `http://localhost:${proxy.port}`,
      imageVendorUrl: `http://127.0.0.1:${(vendor.address() as { port: number }).port}/v1`,
      imageVendorKey: VENDOR_KEY,
    },
  });
  proxy.target = server.port;
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await server?.stop();
  await new Promise((resolve) => vendor?.close(resolve));
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('enrollment on first use and the config file', () => {
  it('refuses to guess: with no credential and no --email (and no terminal) it exits 12', async () => {
    const error = await fails(['project', 'show'], 12, 'enrollment_required');
    expect(error.hint).toMatch(/--email/);
    expect(fs.existsSync(configPath)).toBe(false);
  });

  it('enrolls with --email, keeps the token only in an owner-only file, and reuses it', async () => {
    const project = await ok(['project', 'show', '--email', 'owner@example.com']);
    expect(project).toMatchObject({ contact_email: 'owner@example.com', plan: 'signage' });
    expect(fs.statSync(configPath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(configPath)).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(fs.readFileSync(configPath, 'utf8'));
    const entry = stored.servers[proxy.origin];
    expect(entry.project_id).toBe(project.id);
    expect(entry.token).toMatch(/^mq_proj_/);
    expect(entry.pending_enrollment).toBeUndefined();
    expect(stored.client_id).toMatch(/^cli_[A-Za-z0-9_-]{43}$/);
    token = entry.token;
    direct = createMarqueeClient({ baseUrl: `http://127.0.0.1:${server.port}`, token });

    // The next command uses the stored credential: no second enrollment.
    const again = await ok(['enroll']);
    expect(again).toMatchObject({ project_id: project.id, enrolled_now: false });
    const enrollments = proxy.exchanges.filter((e) => e.path === '/api/v1/enrollments');
    expect(enrollments).toHaveLength(1);
    expect(enrollments[0]!.headers['idempotency-key']).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('completes an enrollment whose answer was lost: the rerun repeats it with the same key and gets the same project', async () => {
    const config = freshConfig();
    proxy.drop((e) => e.path === '/api/v1/enrollments', 'after', 3);
    const lost = await fails(['enroll', '--email', 'lost@example.com'], 10, 'network_error', {
      MARQUEE_CONFIG: config,
    });
    expect(lost.detail).toMatch(/after 3 attempts/);
    const pending = JSON.parse(fs.readFileSync(config, 'utf8')).servers[proxy.origin].pending_enrollment;
    expect(pending.request.email).toBe('lost@example.com');

    const done = await ok(['enroll'], { MARQUEE_CONFIG: config });
    expect(done.enrolled_now).toBe(true);
    const sent = proxy.exchanges.filter(
      (e) => e.path === '/api/v1/enrollments' && e.headers['idempotency-key'] === pending.idempotency_key,
    );
    expect(sent).toHaveLength(4); // three lost answers, then the replay
    const projects = await server.services.store.db
      .selectFrom('tenants')
      .select('id')
      .where('client_id', '=', pending.request.client_id)
      .execute();
    expect(projects.map((p) => p.id)).toEqual([done.project_id]);
  });

  it('keeps the config under $XDG_CONFIG_HOME by default, remembers the server, and takes --api-url and --config over the environment', async () => {
    const home = fs.mkdtempSync(path.join(work, 'xdg-'));
    const env = { MARQUEE_CONFIG: undefined, MARQUEE_API_URL: undefined, XDG_CONFIG_HOME: home };
    const enrolled = await ok(['enroll', '--email', 'xdg@example.com', '--api-url', proxy.origin], env);
    const file = path.join(home, 'marquee', 'config.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).api_url).toBe(proxy.origin);
    const closed = `http://127.0.0.1:${await closedPort()}`;
    const [remembered, flagged] = await Promise.all([
      // Neither flag nor variable: the server the config file remembers.
      ok(['project', 'show'], env),
      // --api-url over MARQUEE_API_URL.
      ok(['project', 'show', '--api-url', proxy.origin], { ...env, MARQUEE_API_URL: closed }),
      // --config over MARQUEE_CONFIG: that file holds no credential.
      fails(['project', 'show', '--config', freshConfig()], 12, 'enrollment_required', {
        ...env,
        MARQUEE_CONFIG: file,
      }),
    ]);
    expect(remembered.id).toBe(enrolled.project_id);
    expect(flagged.id).toBe(enrolled.project_id);
  });

  it('refuses a config file that is not JSON with exit 12', async () => {
    const config = freshConfig();
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.writeFileSync(config, '{ not json');
    await fails(['project', 'show'], 12, 'config_invalid', { MARQUEE_CONFIG: config });
  });
});

describe('doctor', () => {
  it('checks reachability, readiness, versions, the clock and the credential', async () => {
    const report = await ok(['doctor']);
    expect(report.cli_version).toBe(CLI_VERSION);
    expect(report.server).toMatchObject({ api_version: report.cli_api_version });
    expect(Math.abs(report.clock_skew_ms)).toBeLessThan(5_000);
    const status = Object.fromEntries(report.checks.map((c: any) => [c.name, c.status]));
    expect(status).toMatchObject({ reachable: 'ok', ready: 'ok', version: 'ok', clock: 'ok', credential: 'ok' });
  });

  it('reads the clock skew from the Date header', async () => {
    proxy.dateOffsetMs = 5 * 60_000;
    try {
      const report = await ok(['doctor']);
      expect(report.clock_skew_ms).toBeGreaterThan(4 * 60_000);
      expect(report.checks.find((c: any) => c.name === 'clock')).toMatchObject({ status: 'warn' });
    } finally {
      proxy.dateOffsetMs = 0;
    }
  });

  it('fails with the network class when nothing answers', async () => {
    const closed = await closedPort();
    const error = await fails(['doctor'], 10, 'doctor_failed', { MARQUEE_API_URL: `http://127.0.0.1:${closed}` });
    expect(error.checks.find((c: any) => c.name === 'reachable')).toMatchObject({ status: 'fail' });
  });
});

describe('the project', () => {
  it('renames with If-Match; a stale revision is 412 with current_revision, exit 6', async () => {
    const before = await ok(['project', 'show']);
    const stale = await fails(
      ['project', 'rename', 'Lobby screens', '--if-match', String(before.revision + 5)],
      6,
      'revision_conflict',
    );
    expect(stale.current_revision).toBe(before.revision);
    expect(stale.status).toBe(412);
    const renamed = await ok(['project', 'rename', 'Lobby screens', '--if-match', String(before.revision)]);
    expect(renamed).toMatchObject({ name: 'Lobby screens', revision: before.revision + 1 });
    const human = await run(['project', 'rename', 'Other', '--if-match', '1']);
    expect(human.code).toBe(6);
    expect(human.stderr).toContain(`retry with --if-match ${renamed.revision}`);
  });

  it('shows the capability areas', async () => {
    const caps = await ok(['project', 'capabilities']);
    expect(caps.effective).toContain('screens');
  });
});

describe('screens', () => {
  let screenId: string;
  let cookies: CookieJar;

  it('pairs the code a player shows; a lost answer is retried with the same key and pairs once', async () => {
    const started = await startPairing(server);
    cookies = started.cookies;
    const shown = `${started.code.slice(0, 3)}-${started.code.slice(3).toLowerCase()}`;
    proxy.drop((e) => e.path === '/api/v1/screens/pair', 'after');
    const result = await json(['screen', 'pair', shown, '--label', 'Lobby']);
    expect(result.code, result.stderr).toBe(0);
    const claim = result.envelope.data;
    expect(claim.screen).toMatchObject({ label: 'Lobby', state: 'pairing_pending' });
    expect(claim.public_url).toBe(`${server.config.playOrigin}/s/${claim.screen.public_id}`);
    const sent = proxy.exchanges.filter((e) => e.path === '/api/v1/screens/pair');
    expect(sent).toHaveLength(2);
    expect(sent[0]!.headers['idempotency-key']).toBe(sent[1]!.headers['idempotency-key']);
    expect(result.stderr).toMatch(/POST \/api\/v1\/screens\/pair got no answer; retrying/);
    const list = (await direct.screens.list()).data;
    expect(list.items.filter((s) => s.label === 'Lobby')).toHaveLength(1);
    screenId = claim.screen.id;
    shared.screenId = screenId;
    await completePairing(cookies);
    expect((await direct.screens.get(screenId)).data.state).toBe('active');
  });

  it('refuses a malformed code locally (exit 2) and a wrong one with not_found (exit 4)', async () => {
    await fails(['screen', 'pair', 'ABC-1'], 2, 'invalid_input');
    await fails(['screen', 'pair', 'ZZZ-ZZZ'], 4, 'not_found');
  });

  it('provisions a screen with a one-time link to open on it', async () => {
    const provisioned = await ok(['screen', 'provision', '--label', 'Window']);
    expect(provisioned.screen.state).toBe('pairing_pending');
    expect(provisioned.provisioning_url).toMatch(new RegExp(`^${provisioned.public_url}#provision=[A-Za-z0-9_-]{43}$`));
    await direct.screens.delete(provisioned.screen.id);
    // -q keeps the link, shown once, on the line after the screen's id.
    const quiet = await run(['screen', 'provision', '--label', 'Door', '-q']);
    expect(quiet.code, quiet.stderr).toBe(0);
    const [id, link] = quiet.stdout.split('\n');
    expect(id).toMatch(/^scr_/);
    expect(link).toMatch(/#provision=[A-Za-z0-9_-]{43}$/);
    expect(quiet.stdout).toBe(`${id}\n${link}\n`);
    await direct.screens.delete(id!);
  });

  it('updates label, timezone and tags; --quiet prints the id alone', async () => {
    const updated = await ok([
      'screen',
      'update',
      screenId,
      '--label',
      'Lobby east',
      '--timezone',
      'Europe/Berlin',
      '--tags',
      'lobby,east',
    ]);
    expect(updated).toMatchObject({ label: 'Lobby east', timezone: 'Europe/Berlin' });
    expect([...updated.tags].sort()).toEqual(['east', 'lobby']);
    const [quiet] = await Promise.all([
      run(['screen', 'list', '--tag', 'east', '-q']),
      fails(['screen', 'update', screenId], 2, 'usage'),
    ]);
    expect(quiet.stdout).toBe(`${screenId}\n`);
  });

  it('puts a screen in a sync group with a wall region, and takes it out again', async () => {
    const walled = await ok([
      'screen',
      'update',
      screenId,
      '--sync-group',
      'wall',
      '--wall-region',
      '1920,0,1920,1080',
    ]);
    expect(walled).toMatchObject({ sync_group: 'wall', wall_region: { x: 1920, y: 0, width: 1920, height: 1080 } });
    const human = await run(['screen', 'show', screenId]);
    expect(human.stdout).toMatch(/sync group:\s+wall/);
    expect(human.stdout).toMatch(/wall region:\s+1920,0,1920,1080/);
    await fails(['screen', 'update', screenId, '--wall-region', '1920,0,1920'], 2, 'invalid_input');
    const refused = await fails(['screen', 'update', screenId, '--wall-region', '0,0,0,1080'], 8, 'invalid_request');
    expect(JSON.stringify(refused)).toContain('wall_region.width');
    const left = await ok(['screen', 'update', screenId, '--sync-group', 'none']);
    expect(left.sync_group).toBeUndefined();
    expect(left.wall_region).toBeUndefined();
    await fails(['screen', 'update', screenId, '--wall-region', '0,0,960,540'], 8, 'invalid_request');
  });

  it('reloads an active screen, archives (quota freed), unarchives, rotates its public id', async () => {
    const [reload, before] = await Promise.all([ok(['screen', 'reload', screenId]), ok(['screen', 'show', screenId])]);
    expect(reload).toMatchObject({ screen_id: screenId, reload_id: expect.any(String) });
    const stale = await fails(
      ['screen', 'archive', screenId, '--if-match', String(before.revision + 1)],
      6,
      'revision_conflict',
    );
    expect(stale.current_revision).toBe(before.revision);
    const archived = await ok(['screen', 'archive', screenId, '--if-match', String(before.revision)]);
    expect(archived).toMatchObject({ state: 'archived', revision: before.revision + 1 });
    expect((await ok(['screen', 'list', '--archived'])).items.map((s: any) => s.id)).toEqual([screenId]);
    // Two filters that contradict each other are refused, not one of them silently dropped.
    await fails(['screen', 'list', '--archived', '--state', 'active'], 2, 'usage');
    expect((await ok(['screen', 'unarchive', screenId])).state).toBe('active');
    const rotated = await ok(['screen', 'rotate', screenId]);
    expect(rotated.public_id).not.toBe(before.public_id);
  });

  it('tags, toasts, turns the display off and on, reboots, and acts on every screen with a tag', async () => {
    const tagged = await ok(['screen', 'tag', screenId, '--add', 'fleetcli', '--remove', 'east']);
    expect(tagged.edits).toMatchObject([
      { action: 'add_tags', tags: ['fleetcli'], results: [{ screen_id: screenId, ok: true }] },
      { action: 'remove_tags', tags: ['east'], results: [{ screen_id: screenId, ok: true }] },
    ]);
    expect(tagged.screen_tags).toEqual(['fleetcli', 'lobby']);
    expect((await direct.screens.get(screenId)).data.tags).toEqual(['fleetcli', 'lobby']);
    // For a person: both edits and what the screen is tagged with now.
    const human = await run(['screen', 'tag', screenId, '--add', 'north', '--remove', 'nothere']);
    expect(human.stdout).toMatch(/add_tags\s+north\s+done/);
    expect(human.stdout).toMatch(/remove_tags\s+nothere\s+done/);
    expect(human.stdout).toMatch(/tags now:\s+fleetcli, lobby, north/);
    await ok(['screen', 'tag', screenId, '--remove', 'north']);
    // An edit the screen refused (here: there is no such screen) fails the command with that
    // problem's exit code; the error keeps every edit's outcome.
    const refused = await fails(['screen', 'tag', 'scr_missing', '--add', 'north'], 4, 'not_found');
    expect(refused).toMatchObject({
      status: 404,
      detail: 'add_tags: screen scr_missing not found',
      edits: [{ action: 'add_tags', tags: ['north'], results: [{ screen_id: 'scr_missing', ok: false }] }],
      screen_tags: null,
    });
    const [toast, off, schedule] = await Promise.all([
      ok(['screen', 'toast', screenId, 'Doors close at 18:00', '--level', 'alert', '--seconds', '5']),
      ok(['screen', 'display', screenId, 'off']),
      ok(['screen', 'schedule', screenId]),
    ]);
    expect(toast.toast_id).toMatch(/^tst_/);
    const short = await fails(['screen', 'toast', screenId, 'Blink', '--seconds', '1'], 2, 'usage');
    expect(short.detail).toBe('--seconds is from 2 to 60');
    expect(off).toEqual({ power: 'off', schedule: null });
    expect(schedule).toMatchObject({ entries: [], takeover: null });
    expect(await ok(['screen', 'display', screenId, 'auto'])).toEqual({ power: null, schedule: null });
    const reboot = await ok(['screen', 'reboot', screenId]);
    expect(reboot).toMatchObject({ screen_id: screenId, reboot_id: expect.stringMatching(/^rbt_/) });
    const fanned = await ok(['screen', 'actions', 'reload', '--tag', 'fleetcli']);
    expect(fanned).toMatchObject({ action: 'reload', succeeded: 1, failed: 0 });
    await fails(['screen', 'actions', 'reload'], 2, 'usage');
  });

  it('answers a conflict with exit 5: reloading a screen that is still pairing', async () => {
    const { code } = await startPairing(server);
    const pending = await ok(['screen', 'pair', code]);
    await fails(['screen', 'reload', pending.screen.id], 5, 'resource_conflict');
    await ok(['screen', 'delete', pending.screen.id]);
    await expect(direct.screens.get(pending.screen.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('shows labels made safe: no control or bidi character reaches the terminal raw', async () => {
    const { code } = await startPairing(server);
    const label = 'Evil\u001b[31m red\u202e txt';
    const pending = await ok(['screen', 'pair', code, '--label', label]);
    const [human, raw] = await Promise.all([
      run(['screen', 'show', pending.screen.id]),
      run(['screen', 'show', pending.screen.id, '--json']),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Evil\\u001b[31m red\\u202e txt');
    expect(human.stdout).not.toMatch(/[\u001b\u202e]/);
    expect(raw.stdout).not.toMatch(/[\u001b\u202e]/);
    expect(envelopeOf(raw).data.label).toBe(label); // the data itself is unchanged
    await direct.screens.delete(pending.screen.id);
  });
});

describe('media', () => {
  let fakeFfmpegDir: string;
  let ffmpegArgs: string;

  beforeAll(async () => {
    // A stand-in ffmpeg on the PATH: records its arguments and writes a real WebP to its output path.
    fakeFfmpegDir = fs.mkdtempSync(path.join(work, 'bin-'));
    ffmpegArgs = path.join(fakeFfmpegDir, 'args.json');
    const webp = path.join(fakeFfmpegDir, 'out.webp');
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#108040' } })
      .webp()
      .toFile(webp);
    fs.writeFileSync(
      path.join(fakeFfmpegDir, 'ffmpeg'),
      `#!${process.execPath}\nconst fs = require('fs');\nconst args = process.argv.slice(2);\nfs.writeFileSync(${JSON.stringify(ffmpegArgs)}, JSON.stringify(args));\nfs.copyFileSync(${JSON.stringify(webp)}, args[args.length - 1]);\n`,
      { mode: 0o755 },
    );
  });

  it('uploads a file with progress and waits until it is ready', async () => {
    const file = path.join(work, 'lobby.png');
    fs.writeFileSync(file, await png(640, 360));
    const result = await json(['media', 'upload', file, '--tag', 'lobby', '--progress']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.envelope.data).toMatchObject({
      filename: 'lobby.png',
      kind: 'image',
      width: 640,
      height: 360,
      tag: 'lobby',
      state: 'ready',
    });
    expect(result.stderr).toMatch(/upload lobby\.png \[#+\] 100%/);
    expect(result.stderr).toMatch(/operation op_\S+ succeeded/);
    shared.imageId = result.envelope.data.id;
  });

  it('transcodes a format the server does not take through the ffmpeg on the PATH', async () => {
    const file = path.join(work, 'scan.tiff');
    // A TIFF's byte-order mark, then anything: the stand-in ffmpeg does not read it.
    fs.writeFileSync(file, Buffer.concat([Buffer.from('II*\0', 'latin1'), crypto.randomBytes(64)]));
    const media = await ok(['media', 'upload', file], { PATH: `${fakeFfmpegDir}:${process.env.PATH}` });
    expect(media).toMatchObject({
      filename: 'scan.webp',
      source_filename: 'scan.tiff',
      content_type: 'image/webp',
      width: 64,
    });
    const args = JSON.parse(fs.readFileSync(ffmpegArgs, 'utf8'));
    expect(args).toEqual(expect.arrayContaining(['-i', file, '-c:v', 'libwebp']));
    await ok(['media', 'delete', media.id]);
    // Without an ffmpeg the local setup is what is missing: exit 12.
    const error = await fails(['media', 'upload', file], 12, 'ffmpeg_not_found', { PATH: '/nonexistent' });
    expect(error.hint).toMatch(/ffmpeg/);
  });

  it('refuses a file that is not media at all, saying so rather than asking for --kind', async () => {
    const readme = path.join(work, 'README.md');
    fs.writeFileSync(readme, '# Lobby screens\n\nWhat plays where.\n');
    const notMedia = await fails(['media', 'upload', readme], 2, 'invalid_input');
    expect(notMedia.detail).toBe('README.md is not an image, video or audio file Marquee plays');
    const unknown = path.join(work, 'capture.raw');
    fs.writeFileSync(unknown, crypto.randomBytes(256));
    expect((await fails(['media', 'upload', unknown], 2, 'invalid_input')).detail).toMatch(
      /pass --kind image or --kind video/,
    );
  });

  it('lists, shows, tags with If-Match, and exports the bytes checked against their SHA-256', async () => {
    const id = shared.imageId!;
    const [list, shown] = await Promise.all([ok(['media', 'list', '--tag', 'lobby']), ok(['media', 'show', id])]);
    expect(list.items.map((m: any) => m.id)).toEqual([id]);
    const stale = await fails(
      ['media', 'tag', id, 'foyer', '--if-match', String(shown.revision + 1)],
      6,
      'revision_conflict',
    );
    expect(stale.current_revision).toBe(shown.revision);
    expect((await ok(['media', 'tag', id, 'foyer', '--if-match', String(shown.revision)])).tag).toBe('foyer');
    expect((await ok(['media', 'tag', id, '--clear'])).tag).toBeUndefined();
    const out = path.join(work, 'exported.png');
    const [tagged, exported] = await Promise.all([
      ok(['media', 'tag', id, 'lobby']),
      ok(['media', 'export', id, '-o', out]),
      fails(['media', 'tag', id], 2, 'invalid_input'),
    ]);
    expect(tagged.tag).toBe('lobby');
    expect(exported).toMatchObject({ file: out, sha256: shown.sha256, bytes: shown.bytes });
    expect(crypto.createHash('sha256').update(fs.readFileSync(out)).digest('hex')).toBe(shown.sha256);
  });

  it('generates an image through the configured vendor', async () => {
    const [media] = await Promise.all([
      ok(['media', 'generate', 'a calm harbour at dawn', '--aspect-ratio', '16:9', '--tag', 'generated']),
      fails(['media', 'generate', 'x', '--aspect-ratio', '5:4'], 8, 'invalid_request'),
    ]);
    expect(media).toMatchObject({
      width: 1920,
      height: 1080,
      tag: 'generated',
      usage: { credits: expect.any(Number) },
    });
    await direct.media.delete(media.id);
  });
});

describe('playlists', () => {
  let document: any;

  beforeAll(() => {
    document = {
      name: 'Lobby loop',
      pages: [
        {
          id: 'welcome',
          canvas: { width: 1920, height: 1080, background: '#000000FF' },
          transition: { type: 'crossfade', duration_ms: 200 },
          advance: { mode: 'duration', after_ms: 8000 },
          placements: [
            {
              id: 'hero',
              content: { type: 'image', selector: { by: 'id', media_id: shared.imageId }, alt: 'Welcome' },
              rect: { x: 0, y: 0, width: 1920, height: 1080 },
              layer: 0,
              content_fit: 'cover',
            },
          ],
        },
      ],
    };
  });

  it('creates from a JSON file, updates with If-Match (412 shows the current revision), shows and lists', async () => {
    const file = path.join(work, 'lobby.json');
    fs.writeFileSync(file, JSON.stringify(document));
    const created = await ok(['playlist', 'create', file]);
    expect(created).toMatchObject({ name: 'Lobby loop', revision: 1 });
    expect(created.pages[0].placements[0].content.items).toEqual([
      { media_id: shared.imageId, intrinsic_size: { width: 640, height: 360 } },
    ]);
    shared.playlistId = created.id;

    fs.writeFileSync(file, JSON.stringify({ ...document, name: 'Lobby loop 2' }));
    const stale = await fails(['playlist', 'update', created.id, file, '--if-match', '7'], 6, 'revision_conflict');
    expect(stale.current_revision).toBe(1);
    const updated = await ok(['playlist', 'update', created.id, file, '--if-match', '1']);
    expect(updated).toMatchObject({ name: 'Lobby loop 2', revision: 2 });

    const broken = path.join(work, 'broken.json');
    fs.writeFileSync(broken, '{"name": ');
    const empty = path.join(work, 'empty.json');
    fs.writeFileSync(empty, JSON.stringify({ name: 'no pages', pages: [] }));
    const [shown, list, human, , invalid, mixed] = await Promise.all([
      ok(['playlist', 'show', created.id]),
      ok(['playlist', 'list']),
      run(['playlist', 'show', created.id]),
      fails(['playlist', 'create', broken], 2, 'invalid_input'),
      fails(['playlist', 'create', empty], 8, 'invalid_request'),
      fails(['playlist', 'create', file, '--media', shared.imageId!], 2, 'usage'),
    ]);
    expect(mixed.detail).toMatch(/give a file or those/);
    expect(shown.pages[0].id).toBe('welcome');
    expect(list.items.map((p: any) => p.id)).toContain(created.id);
    expect(human.stdout).toMatch(/welcome\s+8 s\s+crossfade 200 ms\s+always\s+image med_\S+ \(1\)/);
    expect(invalid.errors[0].field).toMatch(/pages/);
  });

  it('makes a one-page-per-media playlist from ids or a tag (the quick form)', async () => {
    const [quick, tagged] = await Promise.all([
      ok(['playlist', 'create', '--name', 'Quick', '--media', shared.imageId!, '--seconds', '5']),
      ok(['playlist', 'create', '--name', 'Tagged', '--media-tag', 'lobby']),
      fails(['playlist', 'create', '--media-tag', 'lobby'], 2, 'usage'),
      fails(['playlist', 'create', '--name', 'None', '--media-tag', 'nothinghere'], 2, 'invalid_input'),
    ]);
    expect(quick.pages[0]).toMatchObject({ advance: { mode: 'duration', after_ms: 5000 } });
    expect(tagged.pages[0].placements[0].content.selector).toEqual({ by: 'tag', tag: 'lobby', one_at_a_time: true });
    await Promise.all([ok(['playlist', 'delete', quick.id]), direct.playlists.delete(tagged.id)]);
  });

  it('assigns to a screen; deleting a playlist a screen uses is a conflict (exit 5)', async () => {
    const screen = await ok(['screen', 'assign', shared.screenId!, shared.playlistId!]);
    expect(screen.playlist_id).toBe(shared.playlistId);
    await fails(['playlist', 'delete', shared.playlistId!], 5, 'resource_conflict');
  });

  it('replaces the schedule from a file, takes the screen over until a time, and clears both; sets a display schedule', async () => {
    const screen = shared.screenId!;
    const playlist = shared.playlistId!;
    const entries = path.join(work, 'entries.json');
    fs.writeFileSync(
      entries,
      JSON.stringify([
        {
          id: 'always',
          playlist_id: playlist,
          rule: { enabled: true, windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] }] },
        },
      ]),
    );
    const scheduled = await ok(['screen', 'schedule', screen, '--file', entries]);
    expect(scheduled.entries).toMatchObject([{ id: 'always', playlist_id: playlist }]);
    expect(scheduled.effective_playlist).toEqual({ playlist_id: playlist, source: 'schedule' });

    const [taken, , , , notArray] = await Promise.all([
      ok(['screen', 'takeover', screen, playlist, '--until', '90m', '--reason', 'Fire drill']),
      fails(['screen', 'takeover', screen, playlist, '--reason', 'no end'], 2, 'usage'),
      fails(['screen', 'takeover', screen, playlist, '--until', 'someday', '--reason', 'x'], 2, 'invalid_input'),
      // A repeat with the same key would carry another end: refused before anything is sent.
      fails(
        ['screen', 'takeover', screen, playlist, '--until', '90m', '--reason', 'x', '--idempotency-key', 'retry-0001'],
        2,
        'usage',
      ),
      (async () => {
        const object = path.join(work, 'not-entries.json');
        fs.writeFileSync(object, '{"entries": []}');
        return fails(['screen', 'schedule', screen, '--file', object], 2, 'invalid_input');
      })(),
    ]);
    expect(notArray.detail).toMatch(/JSON array/);
    expect(taken.takeover).toMatchObject({ playlist_id: playlist, reason: 'Fire drill' });
    expect(taken.effective_playlist.source).toBe('takeover');
    // 90 minutes from the CLI's clock (this machine's, as the server's here), give or take the run.
    const minutes = (Date.parse(taken.takeover.until) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(80);
    expect(minutes).toBeLessThanOrEqual(90);
    const human = await run(['screen', 'schedule', screen]);
    expect(human.stdout).toMatch(/because of:\s+takeover/);
    expect(human.stdout).toMatch(/takeover reason:\s+Fire drill/);

    // A takeover and --clear at once is refused: the takeover in force stays.
    await fails(['screen', 'takeover', screen, playlist, '--until', '2h', '--reason', 'x', '--clear'], 2, 'usage');
    expect((await ok(['screen', 'schedule', screen])).takeover).toMatchObject({ reason: 'Fire drill' });
    expect((await ok(['screen', 'takeover', screen, '--clear'])).takeover).toBeNull();
    const cleared = await ok(['screen', 'schedule', screen, '--clear']);
    expect(cleared).toMatchObject({ entries: [], effective_playlist: { playlist_id: playlist, source: 'assignment' } });

    const weekly = path.join(work, 'display.json');
    fs.writeFileSync(weekly, JSON.stringify({ on: [{ days: ['mon', 'tue'], start: '07:00', end: '19:00' }] }));
    const display = await ok(['screen', 'display', screen, 'auto', '--schedule', weekly]);
    expect(display).toEqual({
      power: null,
      schedule: { on: [{ days: ['mon', 'tue'], start: '07:00', end: '19:00' }] },
    });
    expect(await ok(['screen', 'display', screen, 'auto', '--schedule', 'none'])).toEqual({
      power: null,
      schedule: null,
    });
  });

  it('exports a playlist with its media to a folder and imports it into another project, reusing media on a rerun', async () => {
    const folder = path.join(work, 'bundle');
    const exported = await ok(['playlist', 'export', shared.playlistId!, folder]);
    expect(exported.media).toHaveLength(1);
    const written = JSON.parse(fs.readFileSync(path.join(folder, 'playlist.json'), 'utf8'));
    expect(written.pages[0].placements[0].content).toEqual({
      type: 'image',
      selector: { by: 'id', media_id: shared.imageId, one_at_a_time: false },
      alt: 'Welcome',
    });
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'media.json'), 'utf8'));
    const file = path.join(folder, 'media', manifest.media[0].file);
    expect(crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')).toBe(manifest.media[0].sha256);
    await fails(['playlist', 'export', shared.playlistId!, folder], 2, 'invalid_input');

    const other = { MARQUEE_CONFIG: freshConfig(), MARQUEE_API_URL: proxy.origin };
    const imported = await ok(['playlist', 'import', folder, '--email', 'other@example.com'], other);
    expect(imported.media).toHaveLength(1);
    expect(imported.media[0]).toMatchObject({ from: shared.imageId, uploaded: true });
    const newId = imported.media[0].to;
    expect(newId).not.toBe(shared.imageId);
    expect(imported.playlist.pages[0].placements[0].content.selector.media_id).toBe(newId);
    expect(imported.playlist.name).toBe('Lobby loop 2');

    const again = await ok(
      ['playlist', 'import', folder, '--replace', imported.playlist.id, '--if-match', '1', '--name', 'Lobby again'],
      other,
    );
    expect(again.media[0]).toMatchObject({ to: newId, uploaded: false });
    expect(again.playlist).toMatchObject({ id: imported.playlist.id, name: 'Lobby again', revision: 2 });
  });
});

describe('applications', () => {
  let runtimeFile: string;

  beforeAll(() => {
    runtimeFile = path.join(work, 'runtime.js');
    fs.writeFileSync(runtimeFile, '/* the app bridge, as built by npm run build:sdk */\n');
  });

  it('packs a directory, uploads the archive and waits until the release is published', async () => {
    const archive = path.join(work, 'kv-counter.tar.gz');
    const packed = await ok(
      ['app', 'pack', KV_COUNTER, '-o', archive, '--runtime-file', runtimeFile, '--name', 'KV counter'],
      {},
      true,
    );
    expect(packed).toMatchObject({ output: archive, file_count: 4 });
    expect(fs.statSync(archive).size).toBe(packed.bytes);

    const uploaded = await ok(['app', 'upload', archive, '--name', 'KV counter']);
    expect(uploaded).toMatchObject({
      operation_state: 'succeeded',
      application: { name: 'KV counter', state: 'ready' },
    });
    expect(uploaded.application.latest_ready_release).toBe(uploaded.release_id);
    shared.applicationId = uploaded.application_id;
  });

  it('uploads a directory with a progress bar; a directory the packer refuses is exit 2 with every rule broken', async () => {
    const result = await json(['app', 'upload', KV_COUNTER, '--runtime-file', runtimeFile, '--progress']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/upload \[#+\] 100%/);
    expect(result.stderr).toMatch(/operation op_\S+ succeeded/);
    await ok(['app', 'delete', result.envelope.data.application_id]);

    const empty = fs.mkdtempSync(path.join(work, 'no-index-'));
    fs.writeFileSync(path.join(empty, 'app.js'), '');
    const refused = await fails(['app', 'upload', empty], 2, 'invalid_input');
    expect(refused.errors.map((e: any) => e.code)).toContain('index_missing');
  });

  it('reports an archive the server rejects as a failed operation (exit 13) with the rule it broke', async () => {
    const { default: tar } = await import('tar-stream');
    const zlib = await import('node:zlib');
    const pack = tar.pack();
    pack.entry({ name: 'readme.txt' }, 'no index.html here');
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack) chunks.push(chunk as Buffer);
    const archive = path.join(work, 'bad.tar.gz');
    fs.writeFileSync(archive, zlib.gzipSync(Buffer.concat(chunks)));
    const result = await json(['app', 'upload', archive]);
    expect(result.code).toBe(13);
    expect(result.envelope.error).toMatchObject({ operation_id: expect.stringMatching(/^op_/) });
    expect(result.envelope.error!.detail).toMatch(/index\.html/);
  });

  it('lists and shows; a new release guards the revision with If-Match; delete', async () => {
    const id = shared.applicationId!;
    const [list, app] = await Promise.all([ok(['app', 'list']), ok(['app', 'show', id])]);
    expect(list.items.map((a: any) => a.id)).toContain(id);
    const stale = await fails(
      ['app', 'release', id, KV_COUNTER, '--runtime-file', runtimeFile, '--if-match', String(app.revision + 3)],
      6,
      'revision_conflict',
    );
    expect(stale.current_revision).toBe(app.revision);
    const release = await ok([
      'app',
      'release',
      id,
      KV_COUNTER,
      '--runtime-file',
      runtimeFile,
      '--if-match',
      String(app.revision),
    ]);
    expect(release.release_id).not.toBe(app.latest_ready_release);
    expect(release.application.latest_ready_release).toBe(release.release_id);
  });
});

describe('key/value', () => {
  it('creates, refuses an overwrite without --if-match (412 with the revision), updates, reads, lists and deletes', async () => {
    const app = shared.applicationId!;
    expect(await ok(['kv', 'set', app, 'greeting', 'hello'])).toMatchObject({ key: 'greeting', revision: 1 });
    const exists = await fails(['kv', 'set', app, 'greeting', 'again'], 6, 'revision_conflict');
    expect(exists.current_revision).toBe(1);
    expect((await ok(['kv', 'set', app, 'greeting', 'hallo', '--if-match', '1'])).revision).toBe(2);
    const binary = path.join(work, 'blob.bin');
    fs.writeFileSync(binary, Buffer.from([0, 255, 7, 1]));
    const [human] = await Promise.all([
      run(['kv', 'get', app, 'greeting']),
      ok(['kv', 'set', app, 'blob', '--file', binary]),
      fails(['kv', 'delete', app, 'greeting'], 2, 'usage'),
    ]);
    expect(human.stdout).toMatch(/value:\s+hallo/);

    const out = path.join(work, 'blob.out');
    const [entry, list] = await Promise.all([ok(['kv', 'get', app, 'blob', '-o', out]), ok(['kv', 'list', app])]);
    expect(entry.content_type).toBe('application/octet-stream');
    expect([...fs.readFileSync(out)]).toEqual([0, 255, 7, 1]);
    expect(list.items.map((e: any) => e.key)).toEqual(['blob', 'greeting']);

    await ok(['kv', 'delete', app, 'greeting', '--if-match', '2']);
    await expect(direct.kv.get(app, 'greeting')).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('events', () => {
  it('lists events with their cursor', async () => {
    const list = await ok(['events', 'list', '--limit', '5']);
    expect(list.items.length).toBeGreaterThan(0);
    expect(list.next_cursor).toEqual(expect.any(String));
  });

  it('follows new events and resumes from the last id after the connection drops, missing and repeating none', async () => {
    const app = shared.applicationId!;
    // The stream is cut after its first event; the follow reconnects with after=<that event's id>.
    proxy.cutStream((e) => e.path.startsWith('/api/v1/events/stream'), 1);
    const started = Date.now();
    const follow = startCli(['events', 'follow', '--count', '3', '--type', 'kv.', '--timeout', '60', '--json'], {
      env: baseEnv(),
    });
    await proxy.waitFor((e) => e.path.startsWith('/api/v1/events/stream') && e.status === 200);
    for (const key of ['a', 'b', 'c']) await ok(['kv', 'set', app, `follow-${key}`, key]);
    const result = await follow.done;
    printed.push(result.stdout, result.stderr);
    expect(result.code, result.stderr).toBe(0);
    const data = envelopeOf(result).data;
    expect(data.items.map((e: any) => e.resource?.id ?? e.details?.key ?? e.type)).toHaveLength(3);
    expect(data.items.map((e: any) => e.type)).toEqual(['kv.created', 'kv.created', 'kv.created']);
    expect(new Set(data.items.map((e: any) => e.cursor)).size).toBe(3);
    // The first connection was cut after one frame; the next asked for what came after that frame.
    const streams = proxy.exchanges.filter((e) => e.path.startsWith('/api/v1/events/stream') && e.at >= started);
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams[0]!.frameIds).toHaveLength(1);
    expect(new URL(streams[1]!.path, 'http://x').searchParams.get('after')).toBe(streams[0]!.frameIds[0]);
    const delivered = streams.flatMap((e) => e.frameIds);
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(data.cursor).toBe(data.items[2].cursor);
  });

  it('goes on at the newest event when the cursor given cannot be resumed, and says so with that cursor', async () => {
    const followed = await ok(['events', 'follow', '--after', 'not-a-cursor', '--timeout', '1']);
    expect(followed.resync).toEqual({ reason: 'invalid' });
    expect(followed.cursor).not.toBe('not-a-cursor');
    // The cursor handed back is one to resume after, not the refused one again.
    await ok(['events', 'list', '--after', followed.cursor]);
  });

  it('continues where the last --resume follow stopped', async () => {
    const app = shared.applicationId!;
    await ok(['events', 'follow', '--resume', '--timeout', '1']); // from the oldest retained; remembers the head
    await ok(['kv', 'set', app, 'resume-me', 'x']);
    const next = await ok(['events', 'follow', '--resume', '--count', '1']);
    expect(next.items.map((e: any) => e.type)).toEqual(['kv.created']);
  });

  it('stops a replay at --count events, with the cursor of the last one it printed', async () => {
    const replay = await ok(['events', 'follow', '--from-start', '--type', 'kv.', '--count', '2']);
    expect(replay.items).toHaveLength(2);
    expect(replay.items.every((e: any) => e.type.startsWith('kv.'))).toBe(true);
    expect(replay.cursor).toBe(replay.items[1].cursor);
  });
});

describe('operations', () => {
  it('shows, cancels and waits for an operation; a cancelled one ends the wait with exit 13', async () => {
    const declared = await direct.media.declare({
      filename: 'never.png',
      content_type: 'image/png',
      bytes: 10,
      sha256: 'a'.repeat(64),
    });
    const id = declared.data.operation.id;
    expect((await ok(['operation', 'show', id])).state).toBe('receiving');
    expect((await ok(['operation', 'cancel', id])).state).toBe('cancelled');
    const wait = await json(['operation', 'wait', id]);
    expect(wait.code).toBe(13);
    expect(wait.envelope.error).toMatchObject({ code: 'operation_cancelled', operation_id: id });
  });
});

describe('people and access', () => {
  it('invites by email (sending an outstanding one again), makes a link, lists and revokes', async () => {
    const first = await ok(['invitation', 'create', 'ana@example.com', 'ben@example.com']);
    expect(first.items.map((i: any) => [i.email, i.status, i.reused])).toEqual([
      ['ana@example.com', 'outstanding', false],
      ['ben@example.com', 'outstanding', false],
    ]);
    const again = await ok(['invitation', 'create', 'ana@example.com']);
    expect(again.items[0]).toMatchObject({ id: first.items[0].id, reused: true });

    const link = await run(['invitation', 'create', '--link']);
    expect(link.code, link.stderr).toBe(0);
    expect(link.stdout).toMatch(/shown once/);
    expect(link.stdout).toMatch(/#invite=[A-Za-z0-9_-]{43}/);

    const revoked = await ok(['invitation', 'revoke', first.items[1].id]);
    expect(revoked).toEqual({ id: first.items[1].id, status: 'revoked' });
    const [outstanding, gone] = await Promise.all([
      ok(['invitation', 'list', '--status', 'outstanding']),
      ok(['invitation', 'list', '--status', 'revoked', '--all']),
    ]);
    // The test clock stands still, so both share created_at: compare as a set.
    expect(outstanding.items.map((i: any) => String(i.email)).sort()).toEqual(['ana@example.com', 'null']);
    expect(gone.items.map((i: any) => i.id)).toEqual([first.items[1].id]);
    await fails(['invitation', 'revoke', 'inv_nothing'], 4, 'not_found');
  });

  it('refuses an invitation with neither addresses nor --link, or an ad buyer without a scope (exit 2)', async () => {
    await Promise.all([
      fails(['invitation', 'create'], 2, 'usage'),
      fails(['invitation', 'create', 'a@example.com', '--link'], 2, 'usage'),
      fails(['invitation', 'create', 'a@example.com', '--kind', 'ad_buyer'], 2, 'usage'),
      fails(['invitation', 'create', 'a@example.com', '--screen', 'scr_x'], 2, 'usage'),
    ]);
  });

  it('shows the balance in credits and the statement; a limit the server refuses is exit 8', async () => {
    const balance = await ok(['billing', 'balance']);
    expect(balance).toMatchObject({ rails_available: false, balance_millicredits: expect.stringMatching(/^-?\d+$/) });
    const human = await run(['billing', 'balance']);
    expect(human.stdout).toMatch(/payment rails:\s+not available yet/);
    const [statement, first] = await Promise.all([
      ok(['billing', 'statement']),
      ok(['billing', 'statement', '--limit', '1']),
    ]);
    expect(statement.items.map((e: any) => e.kind)).toContain('included_grant');
    // Amounts move with every request (each is metered): compare the rows by day and kind.
    const key = (e: any) => `${e.day} ${e.kind}`;
    expect(first.items.map(key)).toEqual([key(statement.items[0])]);
    // The month's grant and today's requests at least: a page of one is not all of it.
    expect(statement.items.length).toBeGreaterThan(1);
    const next = await ok(['billing', 'statement', '--limit', '1', '--cursor', first.next_cursor]);
    expect(next.items.map(key)).toEqual([key(statement.items[1])]);
    const all = await ok(['billing', 'statement', '--limit', '1', '--all']);
    expect(all.items.map(key)).toEqual(statement.items.map(key));
    expect(all.next_cursor).toBeNull();
    await fails(['billing', 'statement', '--limit', '500'], 8, 'invalid_request');
  });

  it("shows this installation; disconnecting the project's last one needs --allow-last-agent, then forgets the token", async () => {
    const self = await ok(['agent', 'show']);
    expect(self.agent).toMatchObject({ state: 'active', agent_type: 'cli' });
    const refused = await fails(['agent', 'disconnect'], 5, 'agent_lockout_risk');
    expect(refused.status).toBe(409);
    expect((await direct.project.get()).data.id).toEqual(expect.any(String));

    const config = freshConfig();
    const env = { MARQUEE_CONFIG: config };
    await ok(['enroll', '--email', 'leaving@example.com'], env);
    const leaving = JSON.parse(fs.readFileSync(config, 'utf8')).servers[proxy.origin].token as string;
    const done = await ok(['agent', 'disconnect', '--allow-last-agent'], env);
    expect(done).toMatchObject({ agent_id: expect.stringMatching(/^agt_/), disconnected: true });
    expect(JSON.parse(fs.readFileSync(config, 'utf8')).servers[proxy.origin]).toBeUndefined();
    const revoked = createMarqueeClient({ baseUrl: `http://127.0.0.1:${server.port}`, token: leaving });
    await expect(revoked.project.get()).rejects.toMatchObject({ status: 401 });
    for (const output of printed) expect(output).not.toContain(leaving);
  });
});

describe('usage and the network', () => {
  it('answers usage errors with exit 2 and an envelope', async () => {
    const [unknown, , , help] = await Promise.all([
      fails(['screen', 'frobnicate'], 2, 'usage'),
      fails(['screen', 'show'], 2, 'usage'),
      fails(['screen', 'archive', 'scr_x', '--if-match', 'abc'], 2, 'usage'),
      run(['--help']),
      fails(['screen'], 2, 'usage'),
    ]);
    expect(unknown.detail).toMatch(/frobnicate/);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes: 0 ok/);
  });

  it('gives up with exit 10 when the server cannot be reached', async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const config = freshConfig();
    fs.mkdirSync(path.dirname(config), { recursive: true, mode: 0o700 });
    fs.writeFileSync(config, JSON.stringify({ version: 1, servers: { [unreachable]: { token: 'mq_proj_unused' } } }), {
      mode: 0o600,
    });
    const error = await fails(['screen', 'list'], 10, 'network_error', {
      MARQUEE_API_URL: unreachable,
      MARQUEE_CONFIG: config,
    });
    expect(error.detail).toMatch(/ECONNREFUSED/);
  });
});

describe('rate limits', () => {
  /** A config file whose installation id is `client`, so its enrollments share one budget. */
  function configFor(client: string): string {
    const file = freshConfig();
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, JSON.stringify({ version: 1, client_id: client, servers: {} }), { mode: 0o600 });
    return file;
  }

  async function exhaustEnrollments(client: string): Promise<void> {
    for (let i = 0; i < 5; i++) {
      const res = await server.request('POST', '/api/v1/enrollments', {
        host: `127.0.0.1:${server.port}`,
        json: { client_id: client, email: `n${i}@example.com` },
        idempotencyKey: randomKey(),
      });
      expect(res.status, res.text).toBe(201);
    }
  }

  it('fails at once with exit 7 and retry_after when the wait would be longer than --max-retry-wait', async () => {
    const hour = 3_600_000;
    server.clock.set(Math.ceil(server.clock.now() / hour) * hour + 600_000); // ten minutes into a window
    const client = clientId();
    await exhaustEnrollments(client);
    const config = configFor(client);
    const error = await fails(['enroll', '--email', 'sixth@example.com'], 7, 'rate_limited', {
      MARQUEE_CONFIG: config,
    });
    expect(error.retry_after).toBeGreaterThan(30);
    expect(error.status).toBe(429);
  });

  it('honours Retry-After: waits, then repeats the request with the same key and succeeds', async () => {
    // The budget's window ends one second from the server's now.
    const hour = 3_600_000;
    server.clock.set(Math.ceil((server.clock.now() + 2000) / hour) * hour - 1000);
    const client = clientId();
    await exhaustEnrollments(client);
    const config = configFor(client);
    const started = Date.now();
    const running = startCli(['enroll', '--email', 'patient@example.com', '--json'], {
      env: baseEnv({ MARQUEE_CONFIG: config }),
    });
    const refused = await proxy.waitFor((e) => e.path === '/api/v1/enrollments' && e.status === 429 && e.at >= started);
    server.clock.advance(1000); // the window turns over while the CLI waits
    const result = await running.done;
    printed.push(result.stdout, result.stderr);
    expect(result.code, result.stderr).toBe(0);
    expect(envelopeOf(result).data.enrolled_now).toBe(true);
    expect(result.stderr).toMatch(/answered 429 rate_limited; retrying in 1 s/);
    const attempts = proxy.exchanges.filter((e) => e.path === '/api/v1/enrollments' && e.at >= started);
    expect(attempts.map((e) => e.status)).toEqual([429, 201]);
    expect(attempts[1]!.headers['idempotency-key']).toBe(refused.headers['idempotency-key']);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(900);
  });
});

describe('Ctrl-C', () => {
  it('stops an upload half way with exit 130: the upload is cancelled, nothing is stored or reserved', async () => {
    const file = path.join(work, 'big.bin.png');
    const bytes = crypto.randomBytes(2 * 1024 * 1024);
    fs.writeFileSync(file, bytes);
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    proxy.throttle((e) => e.path.startsWith('/private-storage/'), 128 * 1024);
    try {
      const running = startCli(['media', 'upload', file, '--json'], { env: baseEnv() });
      const put = await proxy.waitFor((e) => e.path.startsWith('/private-storage/') && e.sent >= 256 * 1024, 30_000);
      running.child.kill('SIGINT');
      const result = await running.done;
      printed.push(result.stdout, result.stderr);
      expect(result.code).toBe(130);
      expect(envelopeOf(result)).toMatchObject({ ok: false, error: { code: 'interrupted' } });
      expect(put.sent).toBeLessThan(bytes.length);

      const declared = proxy.exchanges.filter((e) => e.path === '/api/v1/media/uploads' && e.at <= put.at).at(-1)!;
      const session = JSON.parse(declared.body!);
      const operation = (await direct.operations.get(session.operation.id)).data;
      expect(operation.state).toBe('cancelled');
      const media = (await direct.media.list({ limit: 100 })).data.items;
      expect(media.some((m) => m.sha256 === sha256)).toBe(false);
      expect((await direct.project.get()).data.reserved_bytes).toBe(0);
    } finally {
      proxy.reset();
    }
  });
});

describe('secrets', () => {
  it('never printed the credential, in any run', () => {
    expect(token).toMatch(/^mq_proj_/);
    expect(printed.length).toBeGreaterThan(50);
    for (const output of printed) expect(output).not.toContain(token);
  });
});
