// The renderer watchdog: a renderer that crashed is restarted, one that stopped drawing frames
// (hung) or shows blank glass while content should be on it is reloaded, each with a backoff so
// a renderer that cannot recover is not reloaded in a tight loop. Decisions are a pure function
// of what was observed and the clock; the Watchdog runs them against a shell's RendererControl
// (Electron, the Chromium launcher, or the agent's channel when it drives no browser itself).
export const WATCHDOG_LIMITS = {
  /** A renderer (re)starting may take this long to draw its first frame. */
  startGraceMs: 30_000,
  /** No new frame for this long: the renderer hangs. */
  hangAfterMs: 15_000,
  /** This many blank captures in a row, while content should be on glass, make blank glass. */
  blankSamples: 3,
  /** Glass is sampled this often (a capture costs a frame's worth of work). */
  sampleEveryMs: 20_000,
  /** First wait after a recovery before another; it doubles up to the maximum. */
  backoffInitialMs: 5_000,
  backoffMaxMs: 5 * 60_000,
  /** Healthy this long after a recovery, and the backoff starts over. */
  stableAfterMs: 10 * 60_000,
} as const;

export type WatchdogLimits = { [K in keyof typeof WATCHDOG_LIMITS]: number };
export type RecoveryReason = 'crash' | 'hang' | 'blank';
export type WatchdogAction = { kind: 'none' } | { kind: 'reload' | 'restart'; reason: RecoveryReason };

export interface WatchdogState {
  /** When the current renderer started (its grace runs from here). */
  startedAt: number;
  /** Last time the frame count moved. */
  lastFrameAt: number | undefined;
  frames: number;
  /** Blank captures in a row. */
  blankRun: number;
  crashed: boolean;
  lastRecoveryAt: number | undefined;
  backoffMs: number;
}

export function initialState(now: number, limits: WatchdogLimits = WATCHDOG_LIMITS): WatchdogState {
  return {
    startedAt: now,
    lastFrameAt: undefined,
    frames: 0,
    blankRun: 0,
    crashed: false,
    lastRecoveryAt: undefined,
    backoffMs: limits.backoffInitialMs,
  };
}

/** A heartbeat: frames only ever grow within one renderer; a smaller count is a new renderer. */
export function observeHeartbeat(state: WatchdogState, frames: number, now: number): void {
  if (frames !== state.frames) state.lastFrameAt = now;
  state.frames = frames;
}

export function observeBlank(state: WatchdogState, blank: boolean): void {
  state.blankRun = blank ? state.blankRun + 1 : 0;
}

/** What to do now. Nothing while a backoff runs; a crash before a hang before blank glass. */
export function decide(state: WatchdogState, now: number, limits: WatchdogLimits = WATCHDOG_LIMITS): WatchdogAction {
  if (state.lastRecoveryAt !== undefined && now - state.lastRecoveryAt >= limits.stableAfterMs)
    state.backoffMs = limits.backoffInitialMs;
  if (state.lastRecoveryAt !== undefined && now - state.lastRecoveryAt < state.backoffMs) return { kind: 'none' };
  if (state.crashed) return { kind: 'restart', reason: 'crash' };
  const since = state.lastFrameAt ?? state.startedAt + limits.startGraceMs - limits.hangAfterMs;
  if (now - since > limits.hangAfterMs) return { kind: 'reload', reason: 'hang' };
  if (state.blankRun >= limits.blankSamples) return { kind: 'reload', reason: 'blank' };
  return { kind: 'none' };
}

/** After acting: a new grace, the evidence cleared, and a longer wait before the next recovery. */
export function recovered(state: WatchdogState, now: number, limits: WatchdogLimits = WATCHDOG_LIMITS): void {
  const backoffMs =
    state.lastRecoveryAt === undefined ? limits.backoffInitialMs : Math.min(state.backoffMs * 2, limits.backoffMaxMs);
  Object.assign(state, {
    startedAt: now,
    lastFrameAt: undefined,
    blankRun: 0,
    crashed: false,
    lastRecoveryAt: now,
    backoffMs,
  });
}

/** Blank glass: every pixel of the capture the same colour (a black, white or frozen empty frame). */
export async function isBlank(png: Buffer): Promise<boolean> {
  // Loaded on first use: the agent starts (and puts content on glass) without the image library.
  const { default: sharp } = await import('sharp');
  const stats = await sharp(png).stats();
  return stats.channels.slice(0, 3).every((c) => c.stdev < 1.5);
}

/** What a shell lets the watchdog do to its renderer. */
export interface RendererControl {
  reload(): Promise<void>;
  /** Kill and start the renderer again (a crash, or a reload that did not help). */
  restart(): Promise<void>;
  /** A PNG of the renderer's glass, when the shell can take one. */
  capture?(): Promise<Buffer>;
  /**
   * Whether a renderer is there to act on (a shell that starts its own always has one). Without
   * one there is nothing to recover: a browser the agent did not start was closed, not hung.
   */
  present?(): boolean;
}

export interface WatchdogOptions {
  control: RendererControl;
  /** Called for every recovery (the agent counts it and reports it upstream). */
  onRecovery(reason: RecoveryReason, action: 'reload' | 'restart'): void;
  /** Whether content should be on glass now (blank glass is normal while pairing or idle). */
  contentExpected(): boolean;
  now?: () => number;
  limits?: WatchdogLimits;
}

export class Watchdog {
  readonly state: WatchdogState;
  private readonly now: () => number;
  private readonly limits: WatchdogLimits;
  private acting = false;
  private timers: ReturnType<typeof setInterval>[] = [];

  constructor(private readonly options: WatchdogOptions) {
    // Monotonic: the wall clock steps (NTP setting a box without a battery-backed clock right at
    // boot, hours at a time) would read as a hang forward and as a long pause backward.
    this.now = options.now ?? (() => performance.now());
    this.limits = options.limits ?? WATCHDOG_LIMITS;
    this.state = initialState(this.now(), this.limits);
  }

  heartbeat(frames: number): void {
    observeHeartbeat(this.state, frames, this.now());
  }

  rendererExited(): void {
    this.state.crashed = true;
    void this.tick();
  }

  /** Samples the glass once (when the shell can capture and content should be on it). */
  async sample(): Promise<void> {
    if (!this.options.control.capture || !this.options.contentExpected()) return observeBlank(this.state, false);
    try {
      observeBlank(this.state, await isBlank(await this.options.control.capture()));
    } catch {
      // No capture now (the renderer is going away): no evidence either way.
    }
  }

  /** Decides and acts once. */
  async tick(): Promise<WatchdogAction> {
    if (this.acting) return { kind: 'none' };
    if (this.options.control.present?.() === false) {
      // The next renderer to come gets its start grace from when it comes.
      Object.assign(this.state, { startedAt: this.now(), lastFrameAt: undefined, blankRun: 0, crashed: false });
      return { kind: 'none' };
    }
    const action = decide(this.state, this.now(), this.limits);
    if (action.kind === 'none') return action;
    this.acting = true;
    try {
      if (action.kind === 'restart') await this.options.control.restart();
      else await this.options.control.reload();
    } catch {
      // The next tick decides again (a reload that failed leaves the evidence in place).
    } finally {
      recovered(this.state, this.now(), this.limits);
      this.acting = false;
    }
    this.options.onRecovery(action.reason, action.kind);
    return action;
  }

  start(): void {
    this.timers.push(
      setInterval(() => void this.tick(), 1000),
      setInterval(() => void this.sample(), this.limits.sampleEveryMs),
    );
    for (const t of this.timers) t.unref();
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
