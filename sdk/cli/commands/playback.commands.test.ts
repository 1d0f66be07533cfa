// `marquee playback` as a subprocess against a real server: the table's rows, and --csv exactly as
// the server writes it (printed, and verbatim with --output).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { imageDoc } from '../../../server/playlists/content.fixtures';
import {
  createPlaylist,
  pairedPlayer,
  patchScreen,
  storedMedia,
  validManifest,
  type Player,
} from '../../../server/runtime/runtime.fixtures';
import { TestServer } from '../../../server/testing/harness';
import { envelopeOf, runCli } from '../testing/cli-process';

// Each run is a Node process with tsx: seconds apiece on a busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let server: TestServer;
let work: string;
let env: Record<string, string>;
let player: Player;
let mediaId: string;

beforeAll(async () => {
  server = await TestServer.start();
  const { token, projectId } = await server.enroll();
  player = await pairedPlayer(server, token);
  mediaId = await storedMedia(server, projectId, crypto.randomBytes(8));
  await server.services.store.db
    .updateTable('media')
    .set({ filename: 'spring, "sale".png' })
    .where('id', '=', mediaId)
    .execute();
  await patchScreen(server, token, player.screen.id, {
    playlist_id: await createPlaylist(server, token, imageDoc(mediaId)),
  });
  const { manifest } = await validManifest(server, player);
  const started = server.clock.now() - 60_000;
  const reports = [0, 1, 2].map((i) => ({
    id: crypto.randomUUID(),
    manifest_revision: manifest.manifestRevision,
    page_id: 'welcome',
    placement_id: 'hero',
    media_id: mediaId,
    started_at: new Date(started + i * 10_000).toISOString(),
    ended_at: new Date(started + i * 10_000 + 10_000).toISOString(),
    outcome: i === 2 ? 'interrupted' : 'complete',
  }));
  const res = await server.request('POST', '/runtime/v1/playback', { cookies: player.cookies, json: { reports } });
  expect(res.json().counted).toBe(3);

  work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-playback-cli-'));
  const apiUrl = `http://127.0.0.1:${server.port}`;
  const config = path.join(work, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ version: 1, servers: { [apiUrl]: { token } } }), { mode: 0o600 });
  env = { MARQUEE_CONFIG: config, MARQUEE_API_URL: apiUrl };
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('marquee playback', () => {
  it('lists the rows (JSON envelope and table)', async () => {
    const result = await runCli(['playback', '--screen', player.screen.id, '--json'], { env });
    const envelope = envelopeOf(result);
    expect(envelope.ok, result.stderr).toBe(true);
    expect(envelope.data.items).toEqual([
      expect.objectContaining({
        screen_id: player.screen.id,
        media_id: mediaId,
        filename: 'spring, "sale".png',
        play_count: 3,
        played_seconds: 30,
        interrupted_count: 1,
      }),
    ]);
    const human = await runCli(['playback', '--media', mediaId], { env });
    expect(human.code, human.stderr).toBe(0);
    const [header, row] = human.stdout.trim().split('\n');
    expect(header).toMatch(/^DAY\s+SCREEN\s+CONTENT\s+FILENAME\s+PLAYS\s+SECONDS\s+INTERRUPTED\s+IMPRESSIONS/);
    expect(row).toContain(player.screen.id);
    expect(row!.split(/\s{2,}/).slice(4, 8)).toEqual(['3', '30', '1', '0']);
  });

  it('prints the CSV, and writes it verbatim with --output', async () => {
    const printed = await runCli(['playback', '--csv', '--screen', player.screen.id], { env });
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      'day,screen_id,media_id,application_id,filename,play_count,played_seconds,complete_count,interrupted_count,impression_count,first_started_at,last_started_at,last_page_id,last_manifest_revision',
    );
    expect(lines[1]).toContain(`${player.screen.id},${mediaId},,"spring, ""sale"".png",3,30,2,1,0,`);
    expect(lines).toHaveLength(2);

    const file = path.join(work, 'plays.csv');
    const written = await runCli(['playback', '--csv', '-o', file], { env });
    expect(written.code, written.stderr).toBe(0);
    const direct = await server.request('GET', '/api/v1/playback?format=csv', {
      token: JSON.parse(fs.readFileSync(env.MARQUEE_CONFIG!, 'utf8')).servers[env.MARQUEE_API_URL!].token,
    });
    expect(fs.readFileSync(file, 'utf8')).toBe(direct.text);
  });

  it('refuses --output without --csv as a usage error', async () => {
    const result = await runCli(['playback', '--output', path.join(work, 'x.csv'), '--json'], { env });
    expect(result.code).toBe(2);
    expect(envelopeOf(result).error?.code).toBe('usage');
  });
});
