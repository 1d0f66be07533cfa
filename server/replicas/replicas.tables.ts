/** A rate budget's current window, shared by every replica (replicas/shared-rate-limiter.ts). */
export interface RateWindowTable {
  /** The budget's name and key (hashed when long), as the in-memory limiter keys it. */
  id: string;
  window_start: number;
  used: number;
  /** When the window ends: rows past it are swept. */
  ends_at: number;
}

/** Runtime streams one replica holds open for a screen (replicas/shared-presence.ts). */
export interface ScreenPresenceTable {
  screen_id: string;
  /** The replica process counting them. */
  holder: string;
  streams: number;
  /** Online until then: the holder's lease while streams > 0 (renewed), the grace once none are left. */
  expires_at: number;
}

export interface ReplicaTables {
  rate_windows: RateWindowTable;
  screen_presence: ScreenPresenceTable;
}
