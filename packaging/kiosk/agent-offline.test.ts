// A kiosk that boots with its server gone keeps trying, every few seconds, for as long as it takes:
// each attempt must leave nothing behind, or a week offline grows the agent without bound.
import { getEventListeners } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { KioskAgent } from './agent';
import { AgentDb } from './agent-db';
import { startAgent, tempDataDir, until } from './agent.fixtures';
import { IDENTITY_FILE } from './identity';

let agent: KioskAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

it('reconnection attempts with the server unreachable leave no listener behind', async () => {
  const dataDir = tempDataDir();
  // A paired kiosk (its enrollment on disk) whose server does not answer: nothing listens on port 1.
  const db = new AgentDb(dataDir);
  db.set('enrollment', { completion: { screen: { id: 'scr_offline' } }, localNonce: 'n' });
  db.close();
  let attempts = 0;
  agent = await startAgent('http://127.0.0.1:1', dataDir, {
    reconnectMaxMs: 10,
    fetch: async (input, init) => {
      attempts++;
      return fetch(input, init);
    },
  });
  await until(() => attempts >= 30, 20_000);
  const stopped = (agent as unknown as { stopped: AbortController }).stopped.signal;
  expect(getEventListeners(stopped, 'abort').length).toBeLessThan(10);
});

it('forgets a pending pairing when its key is made anew (the claim could never be completed with it)', async () => {
  const dataDir = tempDataDir();
  const db = new AgentDb(dataDir);
  db.set('pairing', { code: 'K7QX2M', credential: 'pc_of_another_key', expiresAt: Date.now() + 3600_000 });
  db.close();
  // The key file a power cut during the first start left empty (never flushed).
  fs.mkdirSync(path.join(dataDir, 'identity'), { mode: 0o700 });
  fs.writeFileSync(path.join(dataDir, 'identity', IDENTITY_FILE), '', { mode: 0o600 });
  agent = await startAgent('http://127.0.0.1:1', dataDir);
  expect(agent.identity.created).toBe(true);
  expect(agent.pendingPairing()).toBeUndefined();
});
