// The Chromium kiosk shell for small Linux boxes: the system Chromium in kiosk mode on the agent's
// loopback URL, with a profile of its own in the kiosk data dir, driven over the DevTools protocol
// on a pipe (`--remote-debugging-pipe`: file descriptors 3 and 4, reachable by this process only,
// unlike a debugging port any local program could open). Through it the watchdog reloads the page,
// captures the glass, and learns when the browser died.
import type { ScreenSurface } from '../../sdk/contract/screen-health';
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { PAGE_CALL_BINDING, pageHooksScript } from './page-hooks';
import type { RendererControl } from './watchdog';

export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/**
 * The flags, each for a reason (docs/kiosk-install.md lists them): full screen without browser
 * chrome or any prompt, media that plays without a gesture, no update or first-run work, and the
 * DevTools pipe for the watchdog.
 */
export function chromiumKioskArgs(url: string, profileDir: string, options: { headless?: boolean } = {}): string[] {
  return [
    '--kiosk', // full screen, no tabs, no address bar, no way out by keyboard shortcuts
    `--app=${url}`, // one window on the agent's loopback origin
    `--user-data-dir=${profileDir}`, // a profile of its own: loopback cookies are shared across ports
    '--no-first-run',
    '--no-default-browser-check',
    '--noerrdialogs',
    '--disable-infobars',
    '--disable-session-crashed-bubble', // a power cut must not leave a "restore pages?" prompt on glass
    '--disable-features=Translate,TranslateUI,InfiniteSessionRestore,MediaRouter',
    '--disable-pinch',
    '--overscroll-history-navigation=0',
    '--autoplay-policy=no-user-gesture-required', // soundtracks and unmuted video start on their own
    '--disable-component-update',
    '--check-for-update-interval=31536000',
    '--password-store=basic', // no keyring prompt on a box without a desktop session
    '--remote-debugging-pipe',
    ...(options.headless ? ['--headless=new', '--no-sandbox', '--disable-gpu'] : []),
  ];
}

/** A DevTools connection over the pipe: JSON messages separated by NUL. */
class PipeConnection extends EventEmitter {
  private nextId = 1;
  private buffer = '';
  private readonly pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();

  constructor(
    private readonly out: Writable,
    input: Readable,
  ) {
    super();
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let end = this.buffer.indexOf('\0'); end >= 0; end = this.buffer.indexOf('\0')) {
        const message = JSON.parse(this.buffer.slice(0, end)) as {
          id?: number;
          result?: unknown;
          error?: { message: string };
          method?: string;
          params?: unknown;
        };
        this.buffer = this.buffer.slice(end + 1);
        if (message.id !== undefined) {
          const waiter = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) waiter?.reject(new Error(message.error.message));
          else waiter?.resolve(message.result);
        } else if (message.method) this.emit(message.method, message.params);
      }
    });
    input.on('close', () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error('the browser went away'));
      this.pending.clear();
    });
  }

  send<T = any>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.out.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }
}

/** Hides the pointer on every document of the window (a kiosk has no mouse user). */
const HIDE_CURSOR = `addEventListener('DOMContentLoaded', () => {
  const s = document.createElement('style');
  s.textContent = '* { cursor: none !important; }';
  document.documentElement.appendChild(s);
});`;

interface ExecutionContext {
  id: number;
  origin: string;
  auxData?: { frameId?: string; isDefault?: boolean };
}

export interface ChromiumKioskOptions {
  url: string;
  profileDir: string;
  executable?: string;
  headless?: boolean;
  /** Called when the browser exits on its own (a crash, an OOM kill). */
  onExit?: (code: number | null) => void;
  /**
   * `globalThis.marqueeKiosk` for the top frame of the agent's origin: each call reaches `onCall`
   * over the pipe (a DevTools binding), with nothing listening on any port.
   */
  hooks?: { agentOrigin: string; onCall: (payload: string) => void };
}

export class ChromiumKiosk implements RendererControl {
  private child: ChildProcess | undefined;
  private connection: PipeConnection | undefined;
  private sessionId: string | undefined;
  private closing = false;

  private constructor(private readonly options: ChromiumKioskOptions) {}

  static async launch(options: ChromiumKioskOptions): Promise<ChromiumKiosk> {
    const kiosk = new ChromiumKiosk(options);
    await kiosk.open();
    return kiosk;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private async open(): Promise<void> {
    fs.mkdirSync(this.options.profileDir, { recursive: true, mode: 0o700 });
    const child = spawn(
      this.options.executable ?? SYSTEM_CHROMIUM,
      // With page hooks, the window opens blank and goes to the agent once they are in: its page then
      // loads once, with them (a reload after attaching could follow a first load that had them too).
      chromiumKioskArgs(this.options.hooks ? 'about:blank' : this.options.url, this.options.profileDir, {
        headless: this.options.headless,
      }),
      // A process group of its own, so a kill takes Chromium's helpers (zygote, renderers, GPU) with
      // it: left behind, they keep writing the profile and hold its lock against the relaunch.
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true },
    );
    this.child = child;
    const connection = new PipeConnection(child.stdio[3] as Writable, child.stdio[4] as Readable);
    this.connection = connection;
    child.once('exit', (code) => {
      if (this.child !== child) return;
      this.sessionId = undefined;
      if (!this.closing) this.options.onExit?.(code);
    });
    child.once('error', () => undefined);
    // The page the browser opened for --app: attach to it (it may take a moment to exist).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { targetInfos } = await connection.send<{ targetInfos: { targetId: string; type: string }[] }>(
        'Target.getTargets',
      );
      const page = targetInfos.find((t) => t.type === 'page');
      if (page) {
        const { sessionId } = await connection.send<{ sessionId: string }>('Target.attachToTarget', {
          targetId: page.targetId,
          flatten: true,
        });
        this.sessionId = sessionId;
        await connection.send('Page.enable', {}, sessionId);
        await connection.send('Page.addScriptToEvaluateOnNewDocument', { source: HIDE_CURSOR }, sessionId);
        const hooks = this.options.hooks;
        if (hooks) {
          await this.installHooks(connection, sessionId, hooks);
          await connection.send('Page.navigate', { url: this.options.url }, sessionId);
        }
        return;
      }
      if (Date.now() > deadline) throw new Error('Chromium opened no page');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * The binding and the page script that wraps it. A call counts only from a default context of the
   * page's main frame on the agent's origin (the script checks the same; this does not trust it).
   */
  private async installHooks(
    connection: PipeConnection,
    sessionId: string,
    hooks: NonNullable<ChromiumKioskOptions['hooks']>,
  ): Promise<void> {
    const { frameTree } = await connection.send<{ frameTree: { frame: { id: string } } }>(
      'Page.getFrameTree',
      {},
      sessionId,
    );
    const mainFrame = frameTree.frame.id;
    const trusted = new Set<number>();
    connection.on('Runtime.executionContextCreated', (params: { context: ExecutionContext }) => {
      const { id, origin, auxData } = params.context;
      if (origin === hooks.agentOrigin && auxData?.frameId === mainFrame && auxData.isDefault) trusted.add(id);
    });
    connection.on('Runtime.executionContextDestroyed', (params: { executionContextId: number }) =>
      trusted.delete(params.executionContextId),
    );
    connection.on('Runtime.executionContextsCleared', () => trusted.clear());
    connection.on('Runtime.bindingCalled', (params: { name: string; payload: string; executionContextId: number }) => {
      if (params.name === PAGE_CALL_BINDING && trusted.has(params.executionContextId)) hooks.onCall(params.payload);
    });
    await connection.send('Runtime.enable', {}, sessionId);
    await connection.send('Runtime.addBinding', { name: PAGE_CALL_BINDING }, sessionId);
    await connection.send(
      'Page.addScriptToEvaluateOnNewDocument',
      { source: pageHooksScript(hooks.agentOrigin) },
      sessionId,
    );
  }

  async reload(): Promise<void> {
    if (!this.connection || !this.sessionId) throw new Error('no page to reload');
    await this.connection.send('Page.reload', { ignoreCache: false }, this.sessionId);
  }

  async capture(): Promise<Buffer> {
    if (!this.connection || !this.sessionId) throw new Error('no page to capture');
    const { data } = await this.connection.send<{ data: string }>(
      'Page.captureScreenshot',
      { format: 'png' },
      this.sessionId,
    );
    return Buffer.from(data, 'base64');
  }

  /** The surface the page lays out on: CSS pixels of the window and its device pixel ratio. */
  async surface(): Promise<ScreenSurface> {
    if (!this.connection || !this.sessionId) throw new Error('no page to measure');
    const { result } = await this.connection.send<{ result: { value?: string } }>(
      'Runtime.evaluate',
      { expression: 'JSON.stringify([innerWidth, innerHeight, devicePixelRatio])', returnByValue: true },
      this.sessionId,
    );
    const [width, height, ratio] = JSON.parse(result.value ?? '[]') as number[];
    return {
      id: 'primary',
      width: Math.max(1, Math.round(width ?? 1)),
      height: Math.max(1, Math.round(height ?? 1)),
      pixel_ratio: ratio && ratio > 0 ? ratio : 1,
      presentation: this.options.headless ? 'windowed' : 'output',
    };
  }

  /** Whatever state it is in: killed, and started again. */
  async restart(): Promise<void> {
    await this.kill();
    this.closing = false;
    await this.open();
  }

  private async kill(): Promise<void> {
    const child = this.child;
    this.closing = true;
    if (!child?.pid) return;
    const running = child.exitCode === null && child.signalCode === null;
    const exited = running ? new Promise((resolve) => child.once('exit', resolve)) : undefined;
    try {
      // The group: helpers a crashed browser left behind as well.
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      if (running) child.kill('SIGKILL'); // the group is gone already: the browser itself, if still there
    }
    await exited;
    // The browser's exit can come before its helpers are gone; one still running keeps writing the
    // profile and holds its lock against the relaunch.
    await groupGone(child.pid);
  }

  async close(): Promise<void> {
    await this.kill();
  }
}

/** Resolves once no live process is left in process group `pgid`, or after `waitMs` (Linux: /proc). */
async function groupGone(pgid: number, waitMs = 5000): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && liveInGroup(pgid)) await new Promise((r) => setTimeout(r, 20));
}

function liveInGroup(pgid: number): boolean {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return false;
  }
  return entries.some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      // After the command name (which may hold spaces): state, parent, process group.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return state !== 'Z' && Number(group) === pgid;
    } catch {
      return false;
    }
  });
}
