// The clock a lockstep member plays by: the device's monotonic clock plus an offset steered
// toward the reference estimate. A new estimate never makes the clock jump on glass: the
// difference is slewed away at a bounded rate, so pages and videos turn a little early or late for
// a few seconds instead of skipping. Only the first synchronization (the burst of exchanges a
// member starts with, before it can be in step anyway), or an error too large to slew (a device
// that slept, a reference that changed), steps the clock.
import { offsetAt, type ClockEstimate } from './clock-estimator';

/** At most this many ms of correction per ms: 5 %, too little to see in a page turn or a video. */
export const MAX_SLEW_RATE = 0.05;
/** An error beyond this is stepped: slewing it would leave the member out of step for over 20 s. */
export const STEP_THRESHOLD_MS = 1000;

export type Steering = 'stepped' | 'slewing';

export class GlassClock {
  private estimate: ClockEstimate;
  /** Target minus applied offset when the estimate was taken; it decays at MAX_SLEW_RATE. */
  private error = 0;
  private steeredAt: number;
  private synced = false;

  /** `local`: the device's monotonic clock; `initialOffset`: the reference minus local until the first estimate. */
  constructor(
    private readonly local: () => number,
    initialOffset: number,
  ) {
    this.steeredAt = local();
    this.estimate = { offset: initialOffset, rate: 0, at: this.steeredAt, errorBound: Infinity };
  }

  /** Whether an estimate from the reference was ever applied. */
  get synchronized(): boolean {
    return this.synced;
  }

  /** How far off the reference the clock may be now: the estimate's bound plus the error still being slewed. */
  get uncertainty(): number {
    return this.estimate.errorBound + Math.abs(this.remainingError(this.local()));
  }

  private remainingError(t: number): number {
    const left = Math.max(0, Math.abs(this.error) - MAX_SLEW_RATE * Math.max(0, t - this.steeredAt));
    return Math.sign(this.error) * left;
  }

  /** The applied offset at local instant `t` (t at or after the last steering). */
  private appliedOffset(t: number): number {
    return offsetAt(this.estimate, t) - this.remainingError(t);
  }

  /** The reference time now. */
  now(): number {
    return this.at(this.local());
  }

  /** The reference time at local instant `t` (an animation frame's timestamp). */
  at(t: number): number {
    return t + this.appliedOffset(t);
  }

  /**
   * Applies a new estimate: stepped when first, when `synchronizing` (the first exchanges, while the
   * member is only joining), or when too far off; else slewed.
   */
  steer(estimate: ClockEstimate, synchronizing = false): Steering {
    const t = this.local();
    const error = offsetAt(estimate, t) - this.appliedOffset(t);
    const step = !this.synced || synchronizing || Math.abs(error) > STEP_THRESHOLD_MS;
    this.estimate = estimate;
    this.steeredAt = t;
    this.error = step ? 0 : error;
    this.synced = true;
    return step ? 'stepped' : 'slewing';
  }

  /** Steps to `offset` without an estimate from the reference (a coarse source, such as a Date header). */
  setUnsynchronized(offset: number): void {
    if (this.synced) return;
    this.steeredAt = this.local();
    this.estimate = { offset, rate: 0, at: this.steeredAt, errorBound: Infinity };
    this.error = 0;
  }
}
