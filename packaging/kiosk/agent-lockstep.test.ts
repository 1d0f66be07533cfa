// The kiosk agent in a sync group, against a real server: the group's LAN key comes over the
// runtime plane, the renderer's clock exchanges and advances go to the agent, and with the server
// stopped two kiosks still hold one clock and one barrier over the LAN. Also: archive notices reach
// the renderer as the web player hears them.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRuntimeEvent, type RuntimeEvent } from '../../sdk/contract/event-types';
import { RuntimeClient } from '../../sdk/client/runtime';
import { timelineKey } from '../../sdk/lockstep/timeline';
import { imagePlacement, page } from '../../server/playlists/content.fixtures';
import { createPlaylist, patchScreen, storedMedia } from '../../server/runtime/runtime.fixtures';
import { randomKey, TestServer } from '../../server/testing/harness';
import type { KioskAgent } from './agent';
import { Renderer, startAgent, tempDataDir, until } from './agent.fixtures';
import type { LanSettings } from './lan-lockstep';

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
  await server?.stop().catch(() => undefined);
});

async function pairedAgent(extra: { lan?: LanSettings; clockSkewMs?: number } = {}) {
  const agent = await startAgent(server.origin, tempDataDir(), extra);
  agents.push(agent);
  const renderer = new Renderer(agent);
  const { screen } = await renderer.pair(server.origin, token);
  return { agent, renderer, screenId: screen.id };
}

/** What the renderer hears on the agent's runtime stream, parsed by the player's own code. */
function listen(agent: KioskAgent) {
  const heard: RuntimeEvent[] = [];
  const stream = new RuntimeClient({ runtimeOrigin: agent.origin }).events({
    cursor: agent.events.head(),
    onEvent: (message) => {
      const event = parseRuntimeEvent(message.data);
      if (event) heard.push(event);
    },
  });
  return { heard, close: () => stream.close() };
}

describe('the kiosk agent and its screen’s state', () => {
  it('tells the renderer its screen was archived and unarchived, as the web player hears it', async () => {
    const { agent, screenId } = await pairedAgent();
    await until(() => agent.book.active());
    const stream = listen(agent);
    try {
      const archive = await server.request('POST', `/api/v1/screens/${screenId}/archive`, {
        token,
        idempotencyKey: randomKey(),
      });
      expect(archive.status, archive.text).toBe(200);
      await until(() => stream.heard.some((e) => e.type === 'screen.archived'));
      await until(() => agent.book.active()?.manifest.darkened === true);
      const unarchive = await server.request('POST', `/api/v1/screens/${screenId}/unarchive`, {
        token,
        idempotencyKey: randomKey(),
      });
      expect(unarchive.status, unarchive.text).toBe(200);
      await until(() => stream.heard.some((e) => e.type === 'screen.unarchived'));
      await until(() => agent.book.active()?.manifest.darkened !== true);
    } finally {
      stream.close();
    }
  });
});

describe('a wall of kiosks', () => {
  it('holds one clock and one barrier over the LAN with the server stopped', async () => {
    const lead = await pairedAgent({ lan: { listen: { host: '127.0.0.1', port: 0 }, peers: [] } });
    const url = `ws://127.0.0.1:${lead.agent.lockstep.lanAddress!.port}`;
    const member = await pairedAgent({
      lan: { listen: { host: '127.0.0.1', port: 0 }, peers: [url] },
      clockSkewMs: 4_000,
    });
    // The lead is the kiosk with the smaller screen id (nobody was configured as the lead).
    const [first, second] = lead.screenId < member.screenId ? [lead, member] : [member, lead];
    const mediaId = await storedMedia(server, tenantId, crypto.randomBytes(2000));
    const playlistId = await createPlaylist(server, token, {
      name: 'Wall',
      pages: [page('still', [imagePlacement('hero', { by: 'id', media_id: mediaId })])],
    });
    for (const k of [lead, member])
      await patchScreen(server, token, k.screenId, { playlist_id: playlistId, sync_group: 'wall' });
    await until(() => [lead, member].every((k) => k.agent.book.active()?.manifest.sync?.group === 'wall'), 20_000);
    // The kiosk with the smaller screen id leads once both are in (one that started alone may lead
    // itself for a moment until the other is on its clock).
    await until(
      () =>
        [lead, member].every(
          (k) => k.agent.status().lockstep.linked.length === 1 && k.agent.status().lockstep.lead === first.screenId,
        ),
      30_000,
    );
    const timeline = timelineKey(first.agent.book.active()!.manifest)!;

    await server.stop();
    await until(() => !first.agent.isOnline && !second.agent.isOnline, 20_000);
    const lanClocks = () => Math.abs(first.agent.lockstep.clock.now() - second.agent.lockstep.clock.now());
    // One process, one monotonic clock: the agents' clocks compare exactly. Within 10 ms (loopback
    // ws bounds the error well under a millisecond; the margin is for a loaded machine).
    await until(() => second.agent.status().lockstep.may_lead && lanClocks() < 10, 15_000);
    expect(second.agent.status().lockstep).toMatchObject({ lead: first.screenId, reference: `lan:${first.screenId}` });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(lanClocks()).toBeLessThan(10);

    // The renderers' exchanges are answered from their agent's clock, on 127.0.0.1.
    for (const k of [first, second]) {
      const before = k.agent.lockstep.clock.now();
      const res = await k.renderer.fetch('/runtime/v1/time');
      const after = k.agent.lockstep.clock.now();
      expect(res.status).toBe(200);
      const stamps = (await res.json()) as { received_at_ms: number; sent_at_ms: number };
      expect(stamps.received_at_ms).toBeGreaterThanOrEqual(before);
      expect(stamps.sent_at_ms).toBeGreaterThanOrEqual(stamps.received_at_ms);
      expect(stamps.sent_at_ms).toBeLessThanOrEqual(after);
    }

    // The lead's application advances; the follower's asks too and gets nothing of its own.
    const streams = [first, second].map((k) => listen(k.agent));
    try {
      const decided = await first.renderer.post('/runtime/v1/sync/advance', { timeline, page_index: 0 });
      expect(decided.status).toBe(202);
      const { barrier } = (await decided.json()) as { barrier: { at: string } };
      expect(barrier).toMatchObject({ timeline, page_index: 0 });
      const ignored = await second.renderer.post('/runtime/v1/sync/advance', { timeline, page_index: 0 });
      expect(await ignored.json()).toEqual({ barrier: null });
      for (const s of streams) await until(() => s.heard.some((e) => e.type === 'screen.sync_barrier'), 5_000);
      for (const s of streams)
        expect(s.heard.filter((e) => e.type === 'screen.sync_barrier')).toEqual([
          { type: 'screen.sync_barrier', details: { group: 'wall', ...barrier } },
        ]);
      // A renderer that reloads asks its agent for the last one.
      const last = await second.renderer.fetch('/runtime/v1/sync/barrier');
      expect(await last.json()).toEqual({ barrier });
    } finally {
      for (const s of streams) s.close();
    }
  }, 90_000);
});
