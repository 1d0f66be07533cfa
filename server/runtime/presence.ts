// Screen presence: a screen is online while a paired runtime event stream of it is connected, and
// for a short grace after the last one closes (a reconnect does not flicker it offline). Shared by
// every replica of one installation (a screen's stream is on one replica, its API reader on
// another); counted in process memory by default.
import type { Clock } from '../clock';

/** Reference contract: `online` holds for about three seconds after the stream goes. */
export const PRESENCE_GRACE_MS = 3000;

/** Ends one connection counted by `connect`; calling it again does nothing. */
export type Disconnect = () => Promise<void>;

export interface ScreenPresence {
  /**
   * Counts one connected paired runtime stream of the screen until the returned function is called.
   * A shared implementation keeps the count alive with a lease it renews, so a replica that dies
   * does not leave its screens online. Best effort: neither this nor the Disconnect rejects (an
   * implementation logs its own failures); presence is never a reason to refuse a stream.
   */
  connect(screenId: string): Promise<Disconnect>;
  /** The screens among `screenIds` that are online now. */
  online(screenIds: readonly string[]): Promise<ReadonlySet<string>>;
  /** Stops what the implementation runs in the background (a lease renewal); the server calls it when it stops. */
  close?(): Promise<void>;
}

interface Entry {
  streams: number;
  /** Online until then once no stream is connected. */
  until: number;
}

export class MemoryPresence implements ScreenPresence {
  private readonly screens = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly graceMs = PRESENCE_GRACE_MS,
  ) {}

  async connect(screenId: string): Promise<Disconnect> {
    const entry = this.screens.get(screenId) ?? { streams: 0, until: 0 };
    entry.streams += 1;
    this.screens.set(screenId, entry);
    let connected = true;
    return async () => {
      if (!connected) return;
      connected = false;
      this.disconnected(screenId);
    };
  }

  async online(screenIds: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(screenIds.filter((id) => this.isOnline(id)));
  }

  private disconnected(screenId: string): void {
    const entry = this.screens.get(screenId);
    if (!entry) return;
    entry.streams = Math.max(0, entry.streams - 1);
    if (entry.streams === 0) entry.until = this.clock.now() + this.graceMs;
  }

  private isOnline(screenId: string): boolean {
    const entry = this.screens.get(screenId);
    if (!entry) return false;
    if (entry.streams > 0 || this.clock.now() < entry.until) return true;
    this.screens.delete(screenId);
    return false;
  }
}
