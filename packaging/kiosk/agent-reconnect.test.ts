import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../sdk/client/runtime';
import { parseRuntimeEvent } from '../../sdk/contract/event-types';
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
  const project = await server.enroll();
  token = project.token;
  tenantId = project.projectId;
});
afterAll(async () => {
  for (const agent of agents) await agent.stop().catch(() => undefined);
  await server.stop();
});

function showing(agent: KioskAgent, mediaId: string, ms?: number): Promise<string> {
  return until(() => {
    const active = agent.book.active()?.manifest;
    return active && mediaOf(active, mediaId) ? active.manifestRevision : undefined;
  }, ms);
}

async function showImage(screenId: string, bytes: Buffer): Promise<string> {
  const mediaId = await storedMedia(server, tenantId, bytes);
  const playlistId = await createPlaylist(server, token, {
    name: `Kiosk ${crypto.randomUUID()}`,
    pages: [page('still', [imagePlacement('hero', { by: 'id', media_id: mediaId })])],
  });
  await patchScreen(server, token, screenId, { playlist_id: playlistId });
  return mediaId;
}

describe('after an outage of the server and a restart of the agent', () => {
  it('the renderer hears of a new assignment on the stream it kept following', async () => {
    const dataDir = tempDataDir();
    let agent = await startAgent(server.origin, dataDir);
    agents.push(agent);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await showing(agent, await showImage(screen.id, crypto.randomBytes(1000)));
    // The renderer follows the agent as the player does, with the player's client and parser.
    const heard: string[] = [];
    const resyncs: string[] = [];
    const stream = new RuntimeClient({ runtimeOrigin: agent.origin }).events({
      cursor: agent.events.head(),
      initialDelayMs: 100,
      maxDelayMs: 500,
      onEvent: (message) => void heard.push(parseRuntimeEvent(message.data)?.type ?? 'unparsed'),
      onResync: (resync) => void resyncs.push(resync.cursor),
    });
    try {
      await server.server.stop(2000);
      await until(() => !agent.isOnline);
      const port = agent.listeningPort;
      await agent.stop();
      agent = await startAgent(server.origin, dataDir, { port });
      agents.push(agent);
      // A cursor of the agent's last run: the renderer is told to refetch and resumes at the new head.
      await until(() => resyncs.length > 0);
      server = await TestServer.start({ dataDir: server.dataDir, config: { port: server.port } });
      await until(() => agent.isOnline);
      await showing(agent, await showImage(screen.id, crypto.randomBytes(1000)));
      await until(() => heard.includes('screen.manifest_changed'));
      expect(heard.filter((type) => type === 'unparsed')).toEqual([]);
    } finally {
      stream.close();
    }
  });
});
