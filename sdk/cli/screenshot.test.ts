// `marquee screen screenshot` as a subprocess against a real server: it waits for the player's
// answer and writes the WebP checked against the status's SHA-256; a request nobody answers ends
// with exit 11 and the reason. `screen show` and `screen list` print the screen's health.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SCREENSHOT_TTL_MS } from '../contract/screen-health';
import { TestClock } from '../../server/clock';
import { imageDoc } from '../../server/playlists/content.fixtures';
import {
  createPlaylist,
  pairedPlayer,
  patchScreen,
  report,
  storedMedia,
  validManifest,
  type Player,
} from '../../server/runtime/runtime.fixtures';
import { TestServer } from '../../server/testing/harness';
import { normalizeApiUrl } from './config-file';
import { envelopeOf, runCli, startCli } from './testing/cli-process';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let server: TestServer;
let token: string;
let projectId: string;
let work: string;
let env: Record<string, string>;
const clock = new TestClock('2026-11-25T09:00:00Z');

beforeAll(async () => {
  server = await TestServer.start({ clock });
  ({ token, projectId } = await server.enroll());
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-cli-shot-'));
  const config = path.join(work, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ version: 1, servers: { [normalizeApiUrl(server.origin)]: { token } } }));
  env = { MARQUEE_CONFIG: config, MARQUEE_API_URL: server.origin };
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Waits until the screen has a pending request, and answers its capture id. */
async function pendingCapture(screenId: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const status = (await server.request('GET', `/api/v1/screens/${screenId}/screenshot/status`, { token })).json();
    if (status.state === 'pending') return status.capture_id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the CLI never asked for a screenshot');
}

function answer(p: Player, captureId: string, image: Buffer) {
  return server.request('PUT', '/runtime/v1/screenshot', {
    cookies: p.cookies,
    body: image,
    headers: { 'content-type': 'image/webp', 'marquee-capture-id': captureId },
  });
}

describe('marquee screen screenshot', () => {
  // -o/--output as every command that writes a file; --out, its first name, still works.
  it.each(['--output', '--out'])(
    'waits for the player and writes the still it sent (%s), checked against its SHA-256',
    async (flag) => {
      const p = await pairedPlayer(server, token);
      const out = path.join(work, `glass${flag}.webp`);
      const cli = startCli(['screen', 'screenshot', p.screen.id, flag, out, '--json'], { env });
      const captureId = await pendingCapture(p.screen.id);
      const still = await sharp({ create: { width: 80, height: 45, channels: 3, background: '#3366ff' } })
        .webp()
        .toBuffer();
      expect((await answer(p, captureId, still)).status).toBe(204);
      const result = await cli.done;
      const envelope = envelopeOf(result);
      expect(result.code, result.stderr).toBe(0);
      expect(envelope.data).toMatchObject({
        capture_id: captureId,
        file: out,
        width: 80,
        height: 45,
        method: 'composed',
      });
      const written = fs.readFileSync(out);
      const { data } = await sharp(written).raw().toBuffer({ resolveWithObject: true });
      expect([data[0]! < 0x40, data[2]! > 0xe0]).toEqual([true, true]); // the blue it was sent
    },
  );

  it('ends with exit 11 and the reason when no player answered', async () => {
    const p = await pairedPlayer(server, token);
    const cli = startCli(['screen', 'screenshot', p.screen.id, '--json'], { env });
    await pendingCapture(p.screen.id);
    clock.advance(SCREENSHOT_TTL_MS);
    const result = await cli.done;
    expect(result.code, result.stderr).toBe(11);
    const error = envelopeOf(result).error!;
    expect(error.code).toBe('screenshot_timed_out');
    expect(error.detail).toMatch(/offline/);
  });
});

describe('screen health in screen show and screen list', () => {
  it('prints presence, last seen, the player and the surface', async () => {
    const p = await pairedPlayer(server, token);
    await server.request('PUT', '/runtime/v1/observation', {
      cookies: p.cookies,
      json: {
        observed_at: '2026-11-25T09:00:00.000Z',
        surfaces: [{ id: 'primary', width: 1920, height: 1080, pixel_ratio: 1, presentation: 'output' }],
      },
      headers: { 'marquee-player': 'browser/0.1.0' },
    });
    const show = await runCli(['screen', 'show', p.screen.id], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/presence:\s+offline/);
    expect(show.stdout).toMatch(/player:\s+browser 0\.1\.0/);
    expect(show.stdout).toMatch(/surface:\s+1920×1080 @1x output/);
    const list = await runCli(['screen', 'list', '--json'], { env });
    const item = (envelopeOf(list).data as { items: { id: string; health: unknown }[] }).items.find(
      (s) => s.id === p.screen.id,
    );
    expect(item?.health).toMatchObject({ player: { kind: 'browser', version: '0.1.0' } });
    const table = await runCli(['screen', 'list'], { env });
    expect(table.stdout).toMatch(/LAST SEEN\s+PLAYER/);
  });

  it('lists what the player reported on glass apart from the assignment', async () => {
    const p = await pairedPlayer(server, token);
    const shown = await createPlaylist(server, token, imageDoc(await storedMedia(server, projectId, Buffer.from('a'))));
    await patchScreen(server, token, p.screen.id, { playlist_id: shown });
    const { manifest } = await validManifest(server, p);
    const activated = await report(server, p, {
      severity: 'info',
      code: 'manifest.activated',
      context: { manifest_revision: manifest.manifestRevision },
    });
    expect(activated.status).toBe(202);
    // Assigned anew; the player has not shown it yet.
    const next = await createPlaylist(server, token, imageDoc(await storedMedia(server, projectId, Buffer.from('b'))));
    await patchScreen(server, token, p.screen.id, { playlist_id: next });
    const table = await runCli(['screen', 'list'], { env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/NOW PLAYING\s+ASSIGNED/);
    const row = table.stdout.split('\n').find((line) => line.startsWith(p.screen.id))!;
    expect(row.indexOf(shown)).toBeGreaterThan(-1);
    expect(row.indexOf(shown)).toBeLessThan(row.indexOf(next));
  });
});
