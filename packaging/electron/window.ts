// The Electron shell's one window and its rules, as plain data and functions (tested without
// Electron): full screen in kiosk mode, no menu, devtools only in development, and a renderer
// with context isolation, the sandbox and no Node; it may show the agent's origin and nothing else.
import type { BrowserWindowConstructorOptions } from 'electron';
import { parsePageCall, type PageCall } from '../kiosk/page-hooks';

export function kioskWindowOptions(packaged: boolean, preload?: string): BrowserWindowConstructorOptions {
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
      // marqueeKiosk (display power, reboot) through the context bridge; the page gets no Node.
      ...(preload ? { preload } : {}),
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

/**
 * A page call the main process may hand to the agent: sent by the window's main frame while it
 * shows the agent's origin (the preload installs the hooks in the top frame only; this does not
 * trust it), and well-formed.
 */
export function acceptedPageCall(
  sender: { url: string; isMainFrame: boolean },
  agentOrigin: string,
  payload: unknown,
): PageCall | undefined {
  if (!sender.isMainFrame || !mayNavigate(sender.url, agentOrigin)) return undefined;
  return parsePageCall(payload);
}

/** Hides the pointer on glass (a kiosk has no mouse user). */
export const HIDE_CURSOR_CSS = '* { cursor: none !important; }';
