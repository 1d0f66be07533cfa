// Screen presence: a screen is online while a paired runtime event stream of it is connected, and
// for a short grace after the last one closes (a reconnect does not flicker it offline). Counted in
// process memory; replicas sharing a store need a shared implementation of the same seam.
import type { Clock } from '../clock';
import type { ScreenPresence } from '../screens/screens';

/** Reference contract: `online` holds for about three seconds after the stream goes. */
export const PRESENCE_GRACE_MS = 3000;

interface Entry {
  streams: number;
  /** Online until then once no stream is connected. */
  until: number;
}

export class RuntimePresence implements ScreenPresence {
  private readonly screens = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly graceMs = PRESENCE_GRACE_MS,
  ) {}

  connected(screenId: string): void {
    const entry = this.screens.get(screenId) ?? { streams: 0, until: 0 };
    entry.streams += 1;
    this.screens.set(screenId, entry);
  }

  disconnected(screenId: string): void {
    const entry = this.screens.get(screenId);
    if (!entry) return;
    entry.streams = Math.max(0, entry.streams - 1);
    if (entry.streams === 0) entry.until = this.clock.now() + this.graceMs;
  }

  online(screenId: string): boolean {
    const entry = this.screens.get(screenId);
    if (!entry) return false;
    if (entry.streams > 0 || this.clock.now() < entry.until) return true;
    this.screens.delete(screenId);
    return false;
  }
}
