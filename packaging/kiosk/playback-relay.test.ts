// The kiosk relays the player's proof of play upstream while it is online; offline it answers 503,
// so the player's own IndexedDB queue keeps the reports until a later upload is acknowledged.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imagePlacement, page } from '../../server/playlists/content.fixtures';
import { createPlaylist, patchScreen, storedMedia } from '../../server/runtime/runtime.fixtures';
import { TestServer } from '../../server/testing/harness';
import type { KioskAgent } from './agent';
import { Renderer, startAgent, tempDataDir, until } from './agent.fixtures';
import { mediaOf } from './local-manifest';

let server: TestServer;
let token: string;
let tenantId: string;
const agents: KioskAgent[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  ({ token, projectId: tenantId } = await server.enroll());
});
afterAll(async () => {
  for (const agent of agents) await agent.stop().catch(() => undefined);
  await server.stop();
});

describe('proof of play through the kiosk', () => {
  it('goes upstream while online, counted once, and is refused with 503 (kept by the player) while offline', async () => {
    const dataDir = tempDataDir();
    const agent = await startAgent(server.origin, dataDir);
    agents.push(agent);
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    const mediaId = await storedMedia(server, tenantId, crypto.randomBytes(500));
    await patchScreen(server, token, screen.id, {
      playlist_id: await createPlaylist(server, token, {
        name: 'Kiosk proof',
        pages: [page('still', [imagePlacement('hero', { by: 'id', media_id: mediaId })])],
      }),
    });
    const revision = await until(() => {
      const active = agent.book.active()?.manifest;
      return active && mediaOf(active, mediaId) ? active.manifestRevision : undefined;
    });
    const started = server.clock.now() - 10_000;
    const report = {
      id: crypto.randomUUID(),
      manifest_revision: revision,
      page_id: 'still',
      placement_id: 'hero',
      media_id: mediaId,
      started_at: new Date(started).toISOString(),
      ended_at: new Date(started + 8000).toISOString(),
      outcome: 'complete',
    };
    const first = await renderer.post('/runtime/v1/playback', { reports: [report] });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ counted: 1, duplicates: 0, refused: [] });
    const again = await renderer.post('/runtime/v1/playback', { reports: [report] });
    expect(await again.json()).toEqual({ counted: 0, duplicates: 1, refused: [] });
    const rows = (await server.request('GET', `/api/v1/playback?screen_id=${screen.id}`, { token })).json();
    expect(rows.items).toEqual([expect.objectContaining({ media_id: mediaId, play_count: 1 })]);

    await agent.stop();
    const offline = await startAgent('http://127.0.0.1:9', dataDir);
    agents.push(offline);
    const refused = await new Renderer(offline).post('/runtime/v1/playback', {
      reports: [{ ...report, id: crypto.randomUUID() }],
    });
    expect(refused.status).toBe(503);
  });
});
