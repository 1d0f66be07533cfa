// The Chromium kiosk shell against Debian's Chromium (headless here): its flags, and the DevTools
// pipe the watchdog drives it through (reload, capture, the browser's death).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH } from '../../sdk/testing/chromium';
import { chromiumKioskArgs, ChromiumKiosk } from './chromium';
import { PAGE_CALL_BINDING, parsePageCall } from './page-hooks';
import { isBlank } from './watchdog';

describe('the Chromium kiosk flags', () => {
  it('open one full-screen app window on the agent with a profile of its own and the DevTools pipe', () => {
    const args = chromiumKioskArgs('http://127.0.0.1:8090/', '/var/lib/marquee-kiosk/chromium');
    expect(args).toEqual(
      expect.arrayContaining([
        '--kiosk',
        '--app=http://127.0.0.1:8090/',
        '--user-data-dir=/var/lib/marquee-kiosk/chromium',
        '--autoplay-policy=no-user-gesture-required',
        '--disable-session-crashed-bubble',
        '--noerrdialogs',
        '--remote-debugging-pipe',
      ]),
    );
    expect(args.some((a) => a.startsWith('--remote-debugging-port'))).toBe(false);
    expect(args.some((a) => a.startsWith('--headless'))).toBe(false);
  });
});

describe('the Chromium kiosk shell', () => {
  let server: http.Server;
  let url: string;
  let loads = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/') loads++;
      res.setHeader('content-type', 'text/html');
      res.end('<body style="margin:0;background:#123456"><h1 style="color:#fff">On glass</h1></body>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('reloads, captures and restarts the page, and tells when the browser died', async () => {
    const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-chromium-'));
    let exits = 0;
    const kiosk = await ChromiumKiosk.launch({
      url,
      profileDir,
      executable: CHROMIUM_PATH,
      headless: true,
      onExit: () => exits++,
    });
    try {
      await expect.poll(() => loads, { timeout: 15_000 }).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      const png = await kiosk.capture();
      const { format, width } = await sharp(png).metadata();
      expect([format, width! > 0]).toEqual(['png', true]);
      expect(await isBlank(png)).toBe(false); // the page's heading is on glass
      await kiosk.reload();
      await expect.poll(() => loads, { timeout: 15_000 }).toBe(2);

      process.kill(kiosk.pid!, 'SIGKILL');
      await expect.poll(() => exits, { timeout: 15_000 }).toBe(1);
      await kiosk.restart();
      await expect.poll(() => loads, { timeout: 15_000 }).toBe(3);
      expect(exits).toBe(1); // a restart the watchdog asked for is no crash
      // Closing takes Chromium's helpers too: none is left writing the profile or holding its lock.
      await kiosk.close();
      expect(processesUsing(profileDir)).toEqual([]);
    } finally {
      await kiosk.close();
      fs.rmSync(profileDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the Chromium kiosk after a crash', () => {
  it("kills what the dead browser's process group left behind before it starts again", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-chromium-'));
    const profileDir = path.join(dir, 'profile');
    // A browser whose helper outlives it: the wrapper leaves one in the group, then becomes Chromium.
    const helperPidFile = path.join(dir, 'helper.pid');
    const executable = path.join(dir, 'chromium-with-helper');
    fs.writeFileSync(
      executable,
      `#!/bin/sh\nsleep 300 &\necho $! > '${helperPidFile}'\nexec '${CHROMIUM_PATH}' "$@"\n`,
      { mode: 0o755 },
    );
    let exits = 0;
    const kiosk = await ChromiumKiosk.launch({
      url: 'about:blank',
      profileDir,
      executable,
      headless: true,
      onExit: () => exits++,
    });
    try {
      const helper = Number(fs.readFileSync(helperPidFile, 'utf8'));
      process.kill(kiosk.pid!, 'SIGKILL');
      await expect.poll(() => exits, { timeout: 15_000 }).toBe(1);
      expect(isLive(helper)).toBe(true); // the browser died; its helper did not
      await kiosk.restart();
      expect(isLive(helper)).toBe(false);
    } finally {
      await kiosk.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** Whether `pid` is a live process (a zombie is not). */
function isLive(pid: number): boolean {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Pids of live processes whose command line names `dir` (Chromium's helpers carry the profile path). */
function processesUsing(dir: string): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      if (!isLive(Number(entry))) return []; // a zombie holds no files
      return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

describe("the Chromium kiosk's page hooks", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    // The agent's page calls the hooks once its frames are in; each frame tries the raw binding.
    const frameTries = `<script>
      try { window.${PAGE_CALL_BINDING}('{"op":"reboot"}'); } catch {}
      try { window.marqueeKiosk.reboot(); } catch {}
    </script>`;
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/frame') return void res.end(frameTries);
      res.end(`<body>
        <iframe src="/frame"></iframe>
        <iframe src="http://localhost:${port}/frame"></iframe>
        <script>
          marqueeKiosk.setDisplayPower(false);
          addEventListener('load', () => setTimeout(() => marqueeKiosk.setDisplayPower(true), 300));
        </script>
      </body>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("reach the shell from the agent's top frame only, over the pipe", async () => {
    const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-chromium-'));
    const calls: unknown[] = [];
    const origin = `http://127.0.0.1:${port}`;
    const kiosk = await ChromiumKiosk.launch({
      url: `${origin}/`,
      profileDir,
      executable: CHROMIUM_PATH,
      headless: true,
      hooks: { agentOrigin: origin, onCall: (payload) => calls.push(parsePageCall(payload)) },
    });
    try {
      await expect.poll(() => calls.length, { timeout: 15_000 }).toBe(2);
      await new Promise((r) => setTimeout(r, 500));
      expect(calls).toEqual([
        { op: 'display_power', on: false },
        { op: 'display_power', on: true },
      ]);
    } finally {
      await kiosk.close();
      fs.rmSync(profileDir, { recursive: true, force: true });
    }
  }, 60_000);
});
