// A Marquee server as `npm start` runs it, in a process of its own on a data dir of its own, which
// a spec can kill (a power cut) and start again on the same data. Its database is SQLite in the data
// dir, or, when MARQUEE_TEST_DATABASE_URL names a PostgreSQL server (npm test's PostgreSQL phase,
// server/testing/postgres-phases.sh), a database of its own there, found again after a restart.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { testDatabase, type TestDatabase } from '../../server/testing/test-database';

/** Which checkout's server to run (another one's while developing against it); this one by default. */
const ROOT = process.env.MARQUEE_E2E_SERVER_DIR ?? path.resolve(import.meta.dirname, '..', '..');

export class MarqueeServer {
  private child: ChildProcess | null = null;
  private database: TestDatabase | null = null;
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-e2e-player-'));

  constructor(
    readonly port: number,
    /** Settings besides the defaults (MARQUEE_SMTP_URL for the specs that read mail). */
    private readonly env: Record<string, string> = {},
    /** The entry to run: `npm start`'s, or a test entry (server/testing/clocked-main.ts). */
    private readonly entry = 'server/main.ts',
  ) {}

  /** The dashboard origin of this server (Chromium resolves *.localhost by itself). */
  get dashboardOrigin(): string {
    return `http://dashboard.localhost:${this.port}`;
  }

  get origin(): string {
    return `http://localhost:${this.port}`;
  }

  async start(): Promise<void> {
    // After a failed test Playwright starts a fresh worker, whose server takes the same port; the
    // old worker's server may still be going away. Wait for the port rather than fail on it.
    await waitForFreePort(this.port, 30_000);
    this.database ??= await testDatabase(this.dataDir);
    const child = spawn(process.execPath, ['--import', 'tsx', this.entry], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(this.port),
        MARQUEE_DATA_DIR: this.dataDir,
        MARQUEE_LOG_LEVEL: 'warn',
        MARQUEE_ENROLLMENTS_PER_IP_PER_HOUR: '10000',
        MARQUEE_DATABASE_URL: this.database.url,
        ...this.env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    this.child = child;
    // About 2 s on an idle machine; a minute leaves room for a CI machine busy with other suites.
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the server exited while starting (code ${child.exitCode}, signal ${child.signalCode})`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/.health`);
        if (res.ok) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) {
        // Not left running: a fixture whose setup throws never tears down, and the port stays taken.
        await this.kill();
        throw new Error('the server did not start');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Kills the process outright: a power cut, not a drain. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  async stop(): Promise<void> {
    await this.kill();
    await this.database?.drop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Resolves once nothing listens on 127.0.0.1:port (a listen there succeeds), or fails after `ms`. */
async function waitForFreePort(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return;
    if (Date.now() > deadline) throw new Error(`port ${port} is still in use after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
