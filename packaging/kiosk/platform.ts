// Platform adapters: what fleet control and screenshots will ask of the device (display power,
// rotation, reboot, screen capture) and its host facts, behind one interface with a Linux
// implementation (X11, wlroots Wayland, or the Raspberry Pi firmware tool, picked from the
// session's environment) and a fake that records what it was asked.
import { execFile } from 'node:child_process';
import type { HostFactsSource } from './host-facts';

export type Rotation = 0 | 90 | 180 | 270;

export interface PlatformAdapter {
  readonly name: string;
  setDisplayPower(on: boolean): Promise<void>;
  setRotation(rotation: Rotation): Promise<void>;
  reboot(): Promise<void>;
  /** A PNG of what is on glass. */
  capture(): Promise<Buffer>;
  readonly hostFacts: HostFactsSource;
}

/** Runs a program without a shell (no quoting to get wrong) and returns its stdout. */
export type CommandRunner = (file: string, args: string[]) => Promise<Buffer>;

export const runCommand: CommandRunner = (file, args) =>
  new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });

type Session = 'wayland' | 'x11' | 'console';

/** Which display stack the kiosk runs under, from the environment its session gives it. */
export function displaySession(env: NodeJS.ProcessEnv): Session {
  if (env.WAYLAND_DISPLAY) return 'wayland';
  if (env.DISPLAY) return 'x11';
  return 'console';
}

const XRANDR_ROTATION: Record<Rotation, string> = { 0: 'normal', 90: 'left', 180: 'inverted', 270: 'right' };

/** The first connected output of `xrandr --query` or `wlr-randr` (the screen a kiosk drives). */
export function firstOutput(listing: string, session: 'x11' | 'wayland'): string {
  const pattern = session === 'x11' ? /^(\S+) connected/m : /^(\S+) "/m;
  const name = pattern.exec(listing)?.[1];
  if (!name) throw new Error('no connected display output');
  return name;
}

/** Commands an operator configured in place of the defaults (a program and its arguments). */
export interface PlatformCommands {
  displayOn?: string[];
  displayOff?: string[];
  reboot?: string[];
}

/**
 * A configured command line as a program and its arguments, split on white space and run without a
 * shell (no quoting to get wrong, nothing expanded); undefined when empty.
 */
export function splitCommand(line: string | undefined): string[] | undefined {
  const words = line?.trim().split(/\s+/).filter(Boolean) ?? [];
  return words.length > 0 ? words : undefined;
}

export function linuxPlatform(
  hostFacts: HostFactsSource,
  options: { env?: NodeJS.ProcessEnv; run?: CommandRunner; commands?: PlatformCommands } = {},
): PlatformAdapter {
  const env = options.env ?? process.env;
  const run = options.run ?? runCommand;
  const commands = options.commands ?? {};
  const configured = (command: string[] | undefined) =>
    command ? run(command[0]!, command.slice(1)).then(() => true) : Promise.resolve(false);
  const session = displaySession(env);
  const output = async (): Promise<string> =>
    session === 'wayland'
      ? firstOutput(String(await run('wlr-randr', [])), 'wayland')
      : firstOutput(String(await run('xrandr', ['--query'])), 'x11');
  return {
    name: `linux-${session}`,
    hostFacts,
    async setDisplayPower(on) {
      if (await configured(on ? commands.displayOn : commands.displayOff)) return;
      if (session === 'x11') await run('xset', ['dpms', 'force', on ? 'on' : 'off']);
      else if (session === 'wayland') await run('wlr-randr', ['--output', await output(), on ? '--on' : '--off']);
      else await run('vcgencmd', ['display_power', on ? '1' : '0']);
    },
    async setRotation(rotation) {
      if (session === 'x11') await run('xrandr', ['--output', await output(), '--rotate', XRANDR_ROTATION[rotation]]);
      else if (session === 'wayland')
        await run('wlr-randr', [
          '--output',
          await output(),
          '--transform',
          rotation === 0 ? 'normal' : String(rotation),
        ]);
      else throw new Error('rotation needs a display session (X11 or Wayland)');
    },
    async reboot() {
      if (await configured(commands.reboot)) return;
      await run('systemctl', ['reboot']);
    },
    async capture() {
      if (session === 'x11') return run('import', ['-window', 'root', 'png:-']);
      if (session === 'wayland') return run('grim', ['-t', 'png', '-']);
      throw new Error('screen capture needs a display session (X11 or Wayland)');
    },
  };
}

/** Records every call; captures answer `frame` (tests set it to a blank or a busy PNG). */
export class FakePlatform implements PlatformAdapter {
  readonly name = 'fake';
  readonly calls: string[] = [];
  frame: Buffer = Buffer.alloc(0);
  constructor(readonly hostFacts: HostFactsSource) {}
  async setDisplayPower(on: boolean): Promise<void> {
    this.calls.push(`display ${on ? 'on' : 'off'}`);
  }
  async setRotation(rotation: Rotation): Promise<void> {
    this.calls.push(`rotate ${rotation}`);
  }
  async reboot(): Promise<void> {
    this.calls.push('reboot');
  }
  async capture(): Promise<Buffer> {
    this.calls.push('capture');
    return this.frame;
  }
}
