// The offset and rate of a reference clock (the server's, or a lead kiosk's) against this device's
// monotonic clock, from request/answer exchanges stamped on both sides (as NTP does). Each
// exchange bounds the true offset within half its round trip whatever the path's asymmetry, so the
// samples with the shortest round trips are the ones to trust: they are weighted by how close their
// delay is to the best one, and with a few minutes of them a line through them gives the rate too,
// so a device whose crystal runs fast stays in step between exchanges.

export interface ClockSample {
  /** Local monotonic time when the request left. */
  sentAt: number;
  /** Reference time when the request arrived there, and when its answer left. */
  referenceReceivedAt: number;
  referenceSentAt: number;
  /** Local monotonic time when the answer arrived. */
  receivedAt: number;
}

export interface ClockEstimate {
  /** Reference minus local time at local instant `at`. */
  offset: number;
  /** How fast the offset grows per local millisecond (the reference gains `rate` ms per ms). */
  rate: number;
  at: number;
  /** Half the best round trip: the offset at `at` is within this of the truth, however asymmetric the path. */
  errorBound: number;
}

/** Exchanges kept: a few minutes of them at the steady cadence, enough for a line through the best. */
export const ESTIMATOR_WINDOW_SAMPLES = 48;
/** How much worse than the best round trip a sample may be and still weigh half as much. */
const DELAY_SCALE_MS = 2;
/** The rate is fitted only over samples this far apart: over less, jitter would dominate it. */
export const RATE_MIN_SPAN_MS = 60_000;
/** Crystals drift tens of ppm; more than this is a measurement artefact (a suspended device), not a rate. */
export const MAX_RATE = 500e-6;

interface Point {
  mid: number;
  offset: number;
  delay: number;
}

export function offsetOf(s: ClockSample): number {
  return (s.referenceReceivedAt - s.sentAt + (s.referenceSentAt - s.receivedAt)) / 2;
}

export function delayOf(s: ClockSample): number {
  return Math.max(0, s.receivedAt - s.sentAt - (s.referenceSentAt - s.referenceReceivedAt));
}

export class ClockEstimator {
  private points: Point[] = [];

  constructor(private readonly window = ESTIMATOR_WINDOW_SAMPLES) {}

  get samples(): number {
    return this.points.length;
  }

  add(sample: ClockSample): void {
    if (!(sample.receivedAt >= sample.sentAt)) return;
    this.points.push({
      mid: (sample.sentAt + sample.receivedAt) / 2,
      offset: offsetOf(sample),
      delay: delayOf(sample),
    });
    if (this.points.length > this.window) this.points.splice(0, this.points.length - this.window);
  }

  /** Forgets every sample (the local clock jumped, or the reference changed). */
  reset(): void {
    this.points = [];
  }

  estimate(): ClockEstimate | null {
    const points = this.points;
    if (points.length === 0) return null;
    const best = Math.min(...points.map((p) => p.delay));
    const weights = points.map((p) => 1 / (1 + ((p.delay - best) / DELAY_SCALE_MS) ** 2));
    const at = points.at(-1)!.mid;
    let sw = 0;
    let sx = 0;
    let sy = 0;
    points.forEach((p, i) => {
      const w = weights[i]!;
      sw += w;
      sx += w * (p.mid - at);
      sy += w * p.offset;
    });
    const mx = sx / sw;
    const my = sy / sw;
    let sxx = 0;
    let sxy = 0;
    points.forEach((p, i) => {
      const w = weights[i]!;
      sxx += w * (p.mid - at - mx) ** 2;
      sxy += w * (p.mid - at - mx) * (p.offset - my);
    });
    // The weighted spread in time of the trusted samples decides whether a rate can be told.
    const span = Math.sqrt(sxx / sw) * 2;
    const fitted = span >= RATE_MIN_SPAN_MS ? sxy / sxx : 0;
    const rate = Math.abs(fitted) <= MAX_RATE ? fitted : 0;
    return { offset: my + rate * (0 - mx), rate, at, errorBound: best / 2 };
  }
}

/** The estimate's offset at local instant `t`. */
export function offsetAt(estimate: ClockEstimate, t: number): number {
  return estimate.offset + estimate.rate * (t - estimate.at);
}
