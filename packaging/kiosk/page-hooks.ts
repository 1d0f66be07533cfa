// What the player on glass may ask of the box (player/src/runtime/kiosk-hooks.ts reads
// `globalThis.marqueeKiosk`): panel power and a reboot. A shell puts the hooks into the agent's
// page only, never into an application's frame and never as an HTTP route of the agent (any local
// program can reach loopback; only the shell's own browser can reach these): the Chromium kiosk
// through a DevTools binding on its pipe, Electron through its preload. Both hand every call to
// `runPageCall`, which checks it and acts through the platform adapter.
import type { AgentLog } from './agent';
import type { PlatformAdapter } from './platform';

export type PageCall = { op: 'display_power'; on: boolean } | { op: 'reboot' };

/** The DevTools binding the Chromium kiosk adds to its page (a global function of one string). */
export const PAGE_CALL_BINDING = '__marqueeKioskCall';
/** The Electron IPC channel the preload sends on. */
export const PAGE_CALL_CHANNEL = 'marquee-kiosk:call';

/** A call as the page sent it (JSON text or a structured clone), or undefined when it is not one. */
export function parsePageCall(payload: unknown): PageCall | undefined {
  let value = payload;
  if (typeof payload === 'string') {
    try {
      value = JSON.parse(payload);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { op, on } = value as { op?: unknown; on?: unknown };
  if (op === 'display_power' && typeof on === 'boolean') return { op, on };
  if (op === 'reboot') return { op };
  return undefined;
}

/**
 * The page script the Chromium kiosk evaluates on every new document: in the top frame of the
 * agent's origin only, `marqueeKiosk` forwards to the binding (frames of applications never get it).
 */
export function pageHooksScript(agentOrigin: string): string {
  return `(() => {
  if (window.top !== window || location.origin !== ${JSON.stringify(agentOrigin)}) return;
  const call = globalThis[${JSON.stringify(PAGE_CALL_BINDING)}];
  if (typeof call !== 'function') return;
  Object.defineProperty(globalThis, 'marqueeKiosk', {
    value: Object.freeze({
      setDisplayPower: (on) => call(JSON.stringify({ op: 'display_power', on: on === true })),
      reboot: () => call(JSON.stringify({ op: 'reboot' })),
    }),
  });
})();`;
}

/** Acts on a page's call through the platform adapter; a failure is logged (the player shows black glass anyway). */
export async function runPageCall(call: PageCall, platform: PlatformAdapter | undefined, log: AgentLog): Promise<void> {
  if (!platform) {
    log('warn', `the page asked for ${call.op}, but this kiosk has no platform adapter`);
    return;
  }
  try {
    if (call.op === 'display_power') await platform.setDisplayPower(call.on);
    else {
      log('warn', 'rebooting: the screen was told to');
      await platform.reboot();
    }
  } catch (error) {
    log('error', `${call.op} failed`, { error: String(error) });
  }
}
