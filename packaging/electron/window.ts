// The Electron shell's one window and its rules, as plain data and functions (tested without
// Electron): full screen in kiosk mode, no menu, devtools only in development, and a renderer
// with context isolation, the sandbox and no Node; it may show the agent's origin and nothing else.
import type { BrowserWindowConstructorOptions } from 'electron';

export function kioskWindowOptions(packaged: boolean): BrowserWindowConstructorOptions {
  return {
    kiosk: true,
    fullscreen: true,
    frame: false,
    autoHideMenuBar: true,
    show: false, // shown once the first frame is ready: no white flash on glass
    backgroundColor: '#000000',
    webPreferences: {
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      devTools: !packaged,
      spellcheck: false,
      backgroundThrottling: false, // a kiosk is never "in the background"
      autoplayPolicy: 'no-user-gesture-required',
    },
  };
}

/** The top-level page may be the agent's player only; frames (applications, iframes) are the player's business. */
export function mayNavigate(url: string, agentOrigin: string): boolean {
  try {
    return new URL(url).origin === agentOrigin;
  } catch {
    return false;
  }
}

/** Hides the pointer on glass (a kiosk has no mouse user). */
export const HIDE_CURSOR_CSS = '* { cursor: none !important; }';
