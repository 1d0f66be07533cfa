// The agent serves the player build on disk as it is now: a build replaced in place (an update of
// the checkout) is what a renderer that reloads gets, never a shell naming assets that are gone.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { KioskAgent } from './agent';
import { fakePlayerDir, startAgent, tempDataDir } from './agent.fixtures';

let agent: KioskAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

it('serves the shell of the build on disk after the build is replaced, not the one it first read', async () => {
  const playerDir = fakePlayerDir();
  const shell = (asset: string) =>
    `<!doctype html><html><head><script type="module" src="/assets/${asset}"></script></head><body></body></html>`;
  fs.writeFileSync(path.join(playerDir, 'index.html'), shell('index-old.js'));
  fs.writeFileSync(path.join(playerDir, 'assets', 'index-old.js'), 'console.log("old")');
  agent = await startAgent('http://127.0.0.1:9', tempDataDir(), { playerDir });
  expect(await (await fetch(`${agent.origin}/`)).text()).toContain('/assets/index-old.js');

  // `npm run build:web` again: new hashed assets, the old ones gone.
  fs.rmSync(path.join(playerDir, 'assets', 'index-old.js'));
  fs.writeFileSync(path.join(playerDir, 'assets', 'index-new.js'), 'console.log("new")');
  fs.writeFileSync(path.join(playerDir, 'index.html'), shell('index-new.js'));
  const later = new Date(Date.now() + 2000);
  fs.utimesSync(path.join(playerDir, 'index.html'), later, later);

  const page = await (await fetch(`${agent.origin}/`)).text();
  expect(page).toContain('/assets/index-new.js');
  expect(page).toContain('<meta name="marquee-kiosk-channel"');
  expect((await fetch(`${agent.origin}/assets/index-new.js`)).status).toBe(200);
});
