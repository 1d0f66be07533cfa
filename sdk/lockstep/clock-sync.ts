// Keeps a glass clock on a reference clock over any transport that can do one timed exchange (the
// runtime plane's GET /runtime/v1/time for browser players, the lead kiosk's ws for a LAN group):
// a burst of exchanges at start, frequent ones while the estimate converges, then a steady cadence
// for as long as the member plays, each one steering the clock (slewed, never jumped on glass).
import { ClockEstimator, offsetAt, offsetOf, type ClockEstimate } from './clock-estimator';
import { STEP_THRESHOLD_MS, type GlassClock, type Steering } from './glass-clock';

/** Exchanges at start, this far apart: a first estimate within a second ... */
export const BURST_SAMPLES = 8;
export const BURST_SPACING_MS = 100;
/**
 * ... and more, as long as no exchange was quick enough to bound the offset within this (a player
 * that is still booting answers late), up to BURST_MAX_SAMPLES. The clock is stepped throughout
 * the burst: the member is only joining, and a slewed start would leave it out of step for seconds.
 */
export const BURST_TARGET_ERROR_MS = 8;
export const BURST_MAX_SAMPLES = 40;
/** Then one exchange this often while the estimate converges ... */
export const CONVERGE_INTERVAL_MS = 2000;
export const CONVERGE_PERIOD_MS = 60_000;
/** ... and this often afterwards: six small requests a minute per member. */
export const STEADY_INTERVAL_MS = 10_000;
/** An unreachable reference is asked again with backoff up to this; the clock runs on its last rate meanwhile. */
export const RETRY_MAX_MS = 60_000;

/** The reference's stamps of one exchange: when the request arrived, when its answer left. */
export interface ReferenceStamps {
  receivedAt: number;
  sentAt: number;
}

export interface ClockSyncOptions {
  /** One exchange with the reference; rejects when it cannot be reached. */
  exchange(signal: AbortSignal): Promise<ReferenceStamps>;
  /** The device's monotonic clock (the one `clock` was built on). */
  local(): number;
  clock: GlassClock;
  onSteer?(steering: Steering, estimate: ClockEstimate): void;
  /** The starting burst (or the one after a change of reference) is over: the clock is on the reference. */
  onSettled?(): void;
}

export class ClockSync {
  readonly estimator = new ClockEstimator();
  private readonly stopped = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private startedAt = 0;
  private exchanges = 0;
  private failures = 0;
  private running = false;
  /** The starting burst ended: later exchanges slew the clock. */
  private burstOver = false;
  /** Whether the burst steps the clock (the first one does; one after a change of reference may not). */
  private burstSteps = true;
  /** Bumped when the reference changes: an exchange in flight with the old one is dropped. */
  private generation = 0;

  constructor(private readonly options: ClockSyncOptions) {}

  start(): void {
    if (this.running || this.stopped.signal.aborted) return;
    this.running = true;
    this.startedAt = this.options.local();
    void this.tick();
  }

  stop(): void {
    this.stopped.abort();
    clearTimeout(this.timer);
  }

  /** Whether the clock is on the reference (the burst after the start or the last change of reference is over). */
  get settled(): boolean {
    return this.burstOver;
  }

  /**
   * The reference is another clock now (a new LAN lead; the kiosk agent's own reference moved):
   * what was learnt goes, and a new burst starts at once. `step: false` keeps the glass clock
   * slewing through it (a member already on glass never jumps).
   */
  referenceChanged(options: { step?: boolean } = {}): void {
    this.generation++;
    this.estimator.reset();
    this.exchanges = 0;
    this.failures = 0;
    this.burstOver = false;
    this.burstSteps = options.step ?? true;
    if (!this.running || this.stopped.signal.aborted) return;
    this.startedAt = this.options.local();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), 0);
  }

  /** Whether the starting burst goes on: too few exchanges yet, or none quick enough, within the cap. */
  private bursting(): boolean {
    if (this.exchanges < BURST_SAMPLES) return true;
    const bound = this.estimator.estimate()?.errorBound ?? Infinity;
    return this.exchanges < BURST_MAX_SAMPLES && bound > BURST_TARGET_ERROR_MS && !this.burstOver;
  }

  private nextDelay(): number {
    if (this.failures > 0) return Math.min(RETRY_MAX_MS, BURST_SPACING_MS * 2 ** Math.min(this.failures, 10));
    if (this.bursting()) return BURST_SPACING_MS;
    if (!this.burstOver) {
      this.burstOver = true;
      this.options.onSettled?.();
    }
    return this.options.local() - this.startedAt < CONVERGE_PERIOD_MS ? CONVERGE_INTERVAL_MS : STEADY_INTERVAL_MS;
  }

  private async tick(): Promise<void> {
    const { local, clock } = this.options;
    const signal = this.stopped.signal;
    const generation = this.generation;
    try {
      const sentAt = local();
      const stamps = await this.options.exchange(signal);
      const receivedAt = local();
      if (signal.aborted) return;
      // The reference changed meanwhile: its successor's burst is already scheduled.
      if (generation !== this.generation) return;
      const sample = { sentAt, receivedAt, referenceReceivedAt: stamps.receivedAt, referenceSentAt: stamps.sentAt };
      // An exchange far off the running estimate means a clock moved (a device that slept, a new
      // lead): what was learnt before no longer holds.
      const running = this.estimator.estimate();
      const mid = (sentAt + receivedAt) / 2;
      if (running && Math.abs(offsetOf(sample) - offsetAt(running, mid)) > STEP_THRESHOLD_MS + (receivedAt - sentAt))
        this.estimator.reset();
      this.estimator.add(sample);
      this.exchanges++;
      this.failures = 0;
      const estimate = this.estimator.estimate()!;
      // The starting burst steps: the member joins on its best estimate at once, not after slewing.
      const steering = clock.steer(estimate, !this.burstOver && this.burstSteps);
      this.options.onSteer?.(steering, estimate);
    } catch {
      if (signal.aborted || generation !== this.generation) return;
      this.failures++;
    }
    if (!signal.aborted && generation === this.generation)
      this.timer = setTimeout(() => void this.tick(), this.nextDelay());
  }
}
