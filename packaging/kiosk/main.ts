// `npm run kiosk -- --server <play origin> --data-dir <dir> --port <n> [--no-browser]` and the
// `marquee-kiosk` command: runs the kiosk agent on 127.0.0.1:<port> and, unless --no-browser, the
// system Chromium in kiosk mode on it, watched by the watchdog. Exits non-zero on a fatal error,
// so its supervisor (systemd, Electron) starts it again.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { type AgentOptions, KioskAgent } from './agent';
import { ChromiumKiosk, SYSTEM_CHROMIUM } from './chromium';
import { linuxHostFacts } from './host-facts';
import { DeviceIdentity } from './identity';
import { lanPeerUrl } from './lan-carrier';
import type { LanSettings } from './lan-lockstep';
import { linuxPlatform, splitCommand, type PlatformCommands } from './platform';
import { Upstream } from './upstream';
import { ensurePlayerBuild, PLAYER_DIR } from './player-build';
import { channelControl, watchRenderer } from './shell';

export interface KioskSettings {
  server: string;
  dataDir: string;
  port: number;
  browser: boolean;
  chromium: string;
  budgetBytes: number | undefined;
  /** Unbind this device from its screen (a signed reset; the screen is tombstoned) and forget everything. */
  resetIdentity: boolean;
  /** Display power and reboot commands in place of the platform's defaults. */
  commands: PlatformCommands;
  /** The sync group's LAN carrier (opt-in: without --lan-listen or --lan-peers there is none). */
  lan: LanSettings | undefined;
}

const USAGE = `usage: marquee-kiosk --server <play origin> --data-dir <dir> [--port <n>] [--no-browser]
                     [--chromium <path>] [--budget-mb <n>] [--reset-identity]
                     [--display-on-command <cmd>] [--display-off-command <cmd>] [--reboot-command <cmd>]
                     [--lan-listen <host:port>] [--lan-peers <ws://host:port,...>] [--lan-advertise <ws://host:port>]
                     [--lan-lead] [--lan-discover]
Each flag may come from the environment instead: MARQUEE_KIOSK_SERVER, MARQUEE_KIOSK_DATA_DIR,
MARQUEE_KIOSK_PORT (default 8090), MARQUEE_KIOSK_NO_BROWSER=1, MARQUEE_KIOSK_CHROMIUM,
MARQUEE_KIOSK_BUDGET_MB, MARQUEE_KIOSK_DISPLAY_ON_COMMAND, MARQUEE_KIOSK_DISPLAY_OFF_COMMAND,
MARQUEE_KIOSK_REBOOT_COMMAND, MARQUEE_KIOSK_LAN_LISTEN, MARQUEE_KIOSK_LAN_PEERS,
MARQUEE_KIOSK_LAN_ADVERTISE, MARQUEE_KIOSK_LAN_LEAD=1, MARQUEE_KIOSK_LAN_DISCOVER=1. A command is a program and its arguments,
run without a shell. The LAN flags put the screen's sync group in lockstep over the LAN (a wall
that holds with the internet down); the renderer's listener stays on 127.0.0.1 whatever they say.`;

/** Flags first, then the environment, then defaults; refuses anything it cannot use. */
export function readSettings(argv: string[], env: NodeJS.ProcessEnv): KioskSettings {
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'no-browser': { type: 'boolean' },
      chromium: { type: 'string' },
      'budget-mb': { type: 'string' },
      'reset-identity': { type: 'boolean' },
      'display-on-command': { type: 'string' },
      'display-off-command': { type: 'string' },
      'reboot-command': { type: 'string' },
      'lan-listen': { type: 'string' },
      'lan-peers': { type: 'string' },
      'lan-advertise': { type: 'string' },
      'lan-lead': { type: 'boolean' },
      'lan-discover': { type: 'boolean' },
    },
    strict: true,
  });
  const server = values.server ?? env.MARQUEE_KIOSK_SERVER;
  const dataDir = values['data-dir'] ?? env.MARQUEE_KIOSK_DATA_DIR;
  if (!server || !dataDir) throw new Error(USAGE);
  let origin: string;
  try {
    const url = new URL(server);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    origin = url.origin;
  } catch {
    throw new Error(`--server must be the server's play origin, such as https://play.example.com\n${USAGE}`);
  }
  const port = Number(values.port ?? env.MARQUEE_KIOSK_PORT ?? 8090);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535\n${USAGE}`);
  const budget = values['budget-mb'] ?? env.MARQUEE_KIOSK_BUDGET_MB;
  const budgetBytes = budget === undefined ? undefined : Math.floor(Number(budget) * 1024 * 1024);
  if (budgetBytes !== undefined && !(budgetBytes > 0))
    throw new Error(`--budget-mb must be a positive number\n${USAGE}`);
  const lan = readLanSettings(
    {
      listen: values['lan-listen'] ?? env.MARQUEE_KIOSK_LAN_LISTEN,
      peers: values['lan-peers'] ?? env.MARQUEE_KIOSK_LAN_PEERS,
      advertise: values['lan-advertise'] ?? env.MARQUEE_KIOSK_LAN_ADVERTISE,
      lead: values['lan-lead'] ?? env.MARQUEE_KIOSK_LAN_LEAD === '1',
      discover: values['lan-discover'] ?? env.MARQUEE_KIOSK_LAN_DISCOVER === '1',
    },
    port,
  );
  return {
    lan,
    server: origin,
    dataDir: path.resolve(dataDir),
    port,
    browser: !(values['no-browser'] ?? env.MARQUEE_KIOSK_NO_BROWSER === '1'),
    chromium: values.chromium ?? env.MARQUEE_KIOSK_CHROMIUM ?? SYSTEM_CHROMIUM,
    budgetBytes,
    resetIdentity: values['reset-identity'] ?? false,
    commands: {
      displayOn: splitCommand(values['display-on-command'] ?? env.MARQUEE_KIOSK_DISPLAY_ON_COMMAND),
      displayOff: splitCommand(values['display-off-command'] ?? env.MARQUEE_KIOSK_DISPLAY_OFF_COMMAND),
      reboot: splitCommand(values['reboot-command'] ?? env.MARQUEE_KIOSK_REBOOT_COMMAND),
    },
  };
}

/** The LAN carrier's settings, or undefined when none is asked for; refuses what it cannot use. */
function readLanSettings(
  raw: { listen?: string; peers?: string; advertise?: string; lead: boolean; discover: boolean },
  loopbackPort: number,
): LanSettings | undefined {
  if (raw.discover && !raw.listen) throw new Error(`--lan-discover needs --lan-listen\n${USAGE}`);
  if (!raw.listen && !raw.peers) {
    if (raw.advertise || raw.lead)
      throw new Error(`--lan-advertise and --lan-lead need --lan-listen or --lan-peers\n${USAGE}`);
    return undefined;
  }
  let listen: LanSettings['listen'];
  if (raw.listen) {
    const m = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(raw.listen.trim());
    const port = Number(m?.[2]);
    if (!m || !(port > 0 && port <= 65535))
      throw new Error(`--lan-listen must be host:port, such as 0.0.0.0:8091\n${USAGE}`);
    if (port === loopbackPort) throw new Error(`--lan-listen needs a port of its own (not --port)\n${USAGE}`);
    listen = { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  }
  const peers = (raw.peers ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const peer of peers)
    if (!lanPeerUrl(peer)) throw new Error(`--lan-peers takes ws://host:port addresses; ${peer} is not one\n${USAGE}`);
  if (raw.advertise && !lanPeerUrl(raw.advertise))
    throw new Error(`--lan-advertise must be a ws://host:port address\n${USAGE}`);
  return {
    ...(listen ? { listen } : {}),
    peers,
    ...(raw.advertise ? { advertise: raw.advertise } : {}),
    ...(raw.discover ? { discovery: {} } : {}),
    lead: raw.lead,
  };
}

/**
 * The agent's options from the settings, for both shells (this command and Electron's main): one
 * mapping, so a setting the agent takes cannot be read by a shell and then left out.
 */
export function agentOptions(
  settings: KioskSettings,
  shell: Pick<AgentOptions, 'playerDir' | 'platform' | 'log'>,
): AgentOptions {
  return {
    server: settings.server,
    dataDir: settings.dataDir,
    port: settings.port,
    budgetBytes: settings.budgetBytes,
    lan: settings.lan,
    ...shell,
  };
}

async function main(): Promise<void> {
  let settings: KioskSettings;
  try {
    settings = readSettings(process.argv.slice(2), process.env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  const logger = pino({ level: process.env.MARQUEE_KIOSK_LOG_LEVEL ?? 'info' });
  if (settings.resetIdentity) {
    await resetIdentity(settings);
    console.log('this device is unbound from its screen; its data dir is empty');
    return;
  }
  ensurePlayerBuild((message) => logger.info(message));
  const agent = await KioskAgent.start(
    agentOptions(settings, {
      playerDir: PLAYER_DIR,
      platform: linuxPlatform(linuxHostFacts(), { commands: settings.commands }),
      log: (level, message, fields) => logger[level](fields ?? {}, message),
    }),
  );
  // Outside checks wait for this line.
  console.log(`Marquee kiosk agent on ${agent.origin}/ (upstream ${settings.server})`);

  let chromium: ChromiumKiosk | undefined;
  if (settings.browser) {
    let watchdog: ReturnType<typeof watchRenderer> | undefined;
    chromium = await ChromiumKiosk.launch({
      url: `${agent.origin}/`,
      profileDir: path.join(settings.dataDir, 'chromium'),
      executable: settings.chromium,
      onExit: () => watchdog?.rendererExited(),
      hooks: { agentOrigin: agent.origin, onCall: (payload) => void agent.pageCall(payload) },
    });
    watchdog = watchRenderer(agent, chromium);
    agent.screenshots.source = chromium; // screenshots are the window's real pixels
    void agent.screenshots.reportSurface().catch(() => undefined);
  } else {
    watchRenderer(agent, channelControl(agent), { armOnFirstHeartbeat: true });
  }

  const stop = async () => {
    await chromium?.close().catch(() => undefined);
    await agent.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

/**
 * The only way a kiosk leaves its screen: a signed reset upstream (the screen is tombstoned), then
 * the key, the mirror and the queues go. A device without its key cannot do this (it is recovered).
 */
export async function resetIdentity(settings: KioskSettings): Promise<void> {
  const identity = await DeviceIdentity.load(path.join(settings.dataDir, 'identity'));
  await new Upstream(settings.server, identity).reset();
  forgetLocalState(settings.dataDir);
}

/** What a kiosk keeps in its data dir: the agent's database, its key, the mirror, Chromium's profile. */
export const KIOSK_ENTRIES = ['agent.db', 'agent.db-wal', 'agent.db-shm', 'identity', 'mirror', 'chromium'];

/**
 * Removes the kiosk's own entries from its data dir, then the dir if nothing else is in it. Only
 * those: a data dir set by mistake to a folder with other files in it (a home directory) keeps them.
 */
export function forgetLocalState(dataDir: string): void {
  for (const entry of KIOSK_ENTRIES) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
  try {
    fs.rmdirSync(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw error;
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
