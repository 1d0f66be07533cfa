// The Electron shell: a thin main process that starts the kiosk agent, opens one fullscreen kiosk
// window on its loopback origin, keeps the display awake, hides the cursor, starts at login, and
// lets the agent's watchdog reload or recreate the window; a crash of the main process relaunches
// the app. Everything it calls besides Electron is the kiosk agent (packaging/kiosk/), tested there.
import path from 'node:path';
import { app, BrowserWindow, ipcMain, Menu, powerSaveBlocker, session } from 'electron';
import { KioskAgent } from '../kiosk/agent';
import { linuxHostFacts } from '../kiosk/host-facts';
import { agentOptions, readSettings, resetIdentity } from '../kiosk/main';
import { PAGE_CALL_CHANNEL, runPageCall } from '../kiosk/page-hooks';
import { linuxPlatform } from '../kiosk/platform';
import { channelControl, watchRenderer } from '../kiosk/shell';
import type { RendererControl } from '../kiosk/watchdog';
import { acceptedPageCall, HIDE_CURSOR_CSS, kioskWindowOptions, mayNavigate } from './window';

/** The player build ships beside the main bundle (electron-builder.yml `files`). */
const PLAYER_DIR = path.join(app.getAppPath(), 'dist', 'player');
/** The preload bundle beside this one (vite.preload.config.ts). */
const PRELOAD = path.join(import.meta.dirname, 'preload.cjs');

function relaunchOnCrash(error: unknown): void {
  console.error('marquee kiosk: fatal error, relaunching', error);
  app.relaunch();
  app.exit(1);
}
process.on('uncaughtException', relaunchOnCrash);
process.on('unhandledRejection', relaunchOnCrash);

if (!app.requestSingleInstanceLock()) app.quit();

app.whenReady().then(async () => {
  Menu.setApplicationMenu(null);
  app.setLoginItemSettings({ openAtLogin: true });
  powerSaveBlocker.start('prevent-display-sleep');
  // The renderer asks for nothing: no camera, microphone, notifications, geolocation.
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));

  const settings = readSettings(process.argv.slice(app.isPackaged ? 1 : 2), {
    MARQUEE_KIOSK_DATA_DIR: path.join(app.getPath('userData'), 'kiosk'),
    ...process.env,
  });
  if (settings.resetIdentity) {
    // A one-off command: its failure (no network, say) is told, never relaunched into again.
    const reset = await resetIdentity(settings).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (reset) console.error('marquee kiosk: the identity reset failed', reset);
    else console.log('this device is unbound from its screen; its data dir is empty');
    return app.exit(reset ? 1 : 0);
  }
  const agent = await KioskAgent.start(
    agentOptions(settings, {
      playerDir: PLAYER_DIR,
      // Display power and reboot through the Linux adapter; elsewhere the player falls back to black glass.
      platform:
        process.platform === 'linux' ? linuxPlatform(linuxHostFacts(), { commands: settings.commands }) : undefined,
      log: (level, message, fields) => console[level === 'info' ? 'log' : level](message, fields ?? ''),
    }),
  );

  let window: BrowserWindow;
  let watchdog: ReturnType<typeof watchRenderer> | undefined;
  const open = () => {
    window = new BrowserWindow(kioskWindowOptions(app.isPackaged, PRELOAD));
    const contents = window.webContents;
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    contents.on('will-navigate', (event, url) => {
      if (!mayNavigate(url, agent.origin)) event.preventDefault();
    });
    contents.on('did-finish-load', () => void contents.insertCSS(HIDE_CURSOR_CSS));
    contents.on('render-process-gone', () => watchdog?.rendererExited());
    window.once('ready-to-show', () => window.show());
    void window.loadURL(`${agent.origin}/`);
  };
  open();
  ipcMain.on(PAGE_CALL_CHANNEL, (event, payload) => {
    const frame = event.senderFrame;
    const call =
      frame && event.sender === window.webContents
        ? acceptedPageCall({ url: frame.url, isMainFrame: frame === event.sender.mainFrame }, agent.origin, payload)
        : undefined;
    if (call) void runPageCall(call, agent.platform, agent.log);
  });

  const control: RendererControl = {
    reload: async () => window.webContents.reload(),
    restart: async () => {
      window.destroy();
      open();
    },
    capture: async () => (await window.webContents.capturePage()).toPNG(),
  };
  watchdog = watchRenderer(agent, settings.browser ? control : channelControl(agent));
  agent.screenshots.source = { capture: control.capture! }; // screenshots are the window's real pixels

  app.on('before-quit', () => void agent.stop());
});

// A kiosk has one window; closing it is a crash of the shell, not a request to quit.
app.on('window-all-closed', () => {
  app.relaunch();
  app.exit(0);
});
