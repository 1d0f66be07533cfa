// Display power on a kiosk, end to end with the real player (dist/player) in Debian's Chromium
// driven as the Chromium kiosk drives it: the display state the server sent is mirrored by the
// agent, so a renderer that starts with no network still turns the panel off through the page
// hooks and the platform adapter (a fake that records the calls).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH } from '../../sdk/testing/chromium';
import { TestServer } from '../../server/testing/harness';
import type { KioskAgent } from './agent';
import { HOST, Renderer, startAgent, tempDataDir, until } from './agent.fixtures';
import { ChromiumKiosk } from './chromium';
import { fixedHostFacts } from './host-facts';
import { FakePlatform } from './platform';
import { ensurePlayerBuild, PLAYER_DIR } from './player-build';

let server: TestServer;
let token: string;
const agents: KioskAgent[] = [];

beforeAll(async () => {
  ensurePlayerBuild(() => undefined);
  server = await TestServer.start();
  token = (await server.enroll()).token;
}, 300_000);
afterAll(async () => {
  for (const agent of agents) await agent.stop().catch(() => undefined);
  await server.stop();
});

describe('display power on a kiosk', () => {
  it('holds with no network: the player turns the panel off through the hooks and the adapter', async () => {
    const dataDir = tempDataDir();
    const agent = await startAgent(server.origin, dataDir, { playerDir: PLAYER_DIR });
    agents.push(agent);
    const { screen } = await new Renderer(agent).pair(server.origin, token);
    await until(() => agent.isOnline);
    const off = await server.request('POST', `/api/v1/screens/${screen.id}/display`, { token, json: { power: 'off' } });
    expect(off.status, off.text).toBe(200);
    await until(() => agent.display().power === 'off');
    await agent.stop();
    await server.stop({ keepData: true });

    // The server gone; the agent starts again from its disk, and so does the browser.
    const platform = new FakePlatform(fixedHostFacts(HOST));
    const offline = await startAgent('http://127.0.0.1:9', dataDir, { playerDir: PLAYER_DIR, platform });
    agents.push(offline);
    const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-chromium-'));
    const kiosk = await ChromiumKiosk.launch({
      url: `${offline.origin}/`,
      profileDir,
      executable: CHROMIUM_PATH,
      headless: true,
      hooks: { agentOrigin: offline.origin, onCall: (payload) => void offline.pageCall(payload) },
    });
    try {
      await expect.poll(() => platform.calls, { timeout: 30_000 }).toContain('display off');
      expect(platform.calls).not.toContain('display on');
    } finally {
      await kiosk.close();
      // Chromium's helpers may still be writing its profile a moment after the kill.
      fs.rmSync(profileDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
    server = await TestServer.start({ dataDir: server.dataDir, config: { port: server.port } });
  }, 120_000);
});
