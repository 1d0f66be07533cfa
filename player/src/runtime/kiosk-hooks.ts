// What the player asks of the box it runs on, when a kiosk shell provides it. The kiosk build (on its
// own branch) exposes `globalThis.marqueeKiosk` from its preload; a plain browser has none, so the
// player falls back to what a page can do: black glass for display off, a reload for reboot.
export interface KioskHooks {
  /** Panel power through the kiosk's display adapter (the player shows black glass either way). */
  setDisplayPower?(on: boolean): void;
  /** Reboots the box through the kiosk's adapter. */
  reboot?(): void;
}

export function kioskHooks(scope: unknown = globalThis): KioskHooks {
  const hooks = (scope as { marqueeKiosk?: unknown }).marqueeKiosk;
  return typeof hooks === 'object' && hooks !== null ? (hooks as KioskHooks) : {};
}
