// A kiosk agent as marquee-kiosk runs it (the bundled dist/kiosk/main.mjs, --no-browser: the spec's
// Chromium is the renderer), in a process of its own on a data dir of its own, which a spec can
// kill (a power cut) and start again on the same disk.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGENT_NODE_FLAGS } from '../../packaging/kiosk/node-flags';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const ENTRY = path.join(ROOT, 'dist', 'kiosk', 'main.mjs');

export class KioskAgentProcess {
  private child: ChildProcess | null = null;
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-e2e-kiosk-'));

  constructor(
    readonly port: number,
    readonly upstream: string,
    /** Node flags for the agent besides marquee-kiosk's own (the bench passes --expose-gc). */
    private readonly nodeFlags: string[] = [],
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the agent and resolves once it serves (its ready line); returns how long that took. */
  async start(): Promise<number> {
    if (!fs.existsSync(ENTRY)) throw new Error('dist/kiosk/main.mjs is missing: npm run build:kiosk');
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        ...AGENT_NODE_FLAGS,
        ...this.nodeFlags,
        ENTRY,
        '--server',
        this.upstream,
        '--data-dir',
        this.dataDir,
        '--port',
        String(this.port),
        '--no-browser',
      ],
      { cwd: ROOT, env: { ...process.env, MARQUEE_KIOSK_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`the kiosk agent did not start: ${out}`)), 60_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d;
        if (out.includes('Marquee kiosk agent on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`the kiosk agent exited with ${code}: ${out}`)));
    });
    child.stdout!.resume();
    return Date.now() - started;
  }

  /** Kills the process outright: a power cut, not a shutdown. */
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
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  async status(): Promise<{
    paired: boolean;
    online: boolean;
    active_manifest: string | null;
    /** When the active manifest went on glass (ISO 8601). */
    active_since: string | null;
    next_manifest: string | null;
  }> {
    return (await fetch(`${this.origin}/kiosk/v1/status`)).json() as never;
  }
}
