import { describe, expect, it } from 'vitest';
import { ClockEstimator, offsetAt, offsetOf, type ClockSample } from './clock-estimator';

/** A seeded uniform generator on [0, 1): the same jitter every run. */
function uniform(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646;
}

interface Path {
  /** Reference minus local at local 0, and how much faster the reference runs. */
  offset: number;
  rate?: number;
  /** One-way delays of each exchange, in ms. */
  up: () => number;
  down: () => number;
  /** Time the reference spends answering. */
  processing?: number;
}

const reference = (p: Path, local: number) => p.offset + local * (1 + (p.rate ?? 0));
const trueOffset = (p: Path, local: number) => reference(p, local) - local;

function exchange(p: Path, sentAt: number): ClockSample {
  const up = p.up();
  const processing = p.processing ?? 0.3;
  const down = p.down();
  return {
    sentAt,
    referenceReceivedAt: reference(p, sentAt + up),
    referenceSentAt: reference(p, sentAt + up + processing),
    receivedAt: sentAt + up + processing + down,
  };
}

/** Feeds exchanges every `everyMs` from local `from` and returns the estimator. */
function run(p: Path, count: number, everyMs: number, from = 1_000_000): ClockEstimator {
  const estimator = new ClockEstimator();
  for (let i = 0; i < count; i++) estimator.add(exchange(p, from + i * everyMs));
  return estimator;
}

describe('clock estimator', () => {
  it('finds the offset of a clean path exactly, with a bound of half the round trip', () => {
    const p: Path = { offset: 7_200_000.25, up: () => 4, down: () => 4 };
    const estimate = run(p, 8, 100).estimate()!;
    expect(estimate.offset).toBeCloseTo(trueOffset(p, estimate.at), 6);
    expect(estimate.errorBound).toBeCloseTo(4, 6);
  });

  it('stays within a few milliseconds under 20 ms of jitter each way, trusting the shortest round trips', () => {
    const random = uniform(11);
    const p: Path = { offset: -3_000_000, up: () => 3 + 20 * random(), down: () => 3 + 20 * random() };
    const estimate = run(p, 32, 2000).estimate()!;
    expect(Math.abs(estimate.offset - trueOffset(p, estimate.at))).toBeLessThan(3);
  });

  it('is off by at most half the asymmetry of a lopsided path, and says so in its bound', () => {
    // Requests queue upstream (15 ms), answers come straight back (2 ms): an error no exchange can
    // see, bounded by half the round trip.
    const p: Path = { offset: 42_000, up: () => 15, down: () => 2 };
    const estimate = run(p, 16, 500).estimate()!;
    const error = estimate.offset - trueOffset(p, estimate.at);
    expect(error).toBeCloseTo((15 - 2) / 2, 1);
    expect(Math.abs(error)).toBeLessThanOrEqual(estimate.errorBound);
  });

  it('removes asymmetric jitter with the minimum-round-trip filter', () => {
    // Only the upstream queue varies (0–40 ms): the quick exchanges are nearly symmetric.
    const random = uniform(5);
    const p: Path = { offset: 1234, up: () => 2 + 40 * random(), down: () => 2 };
    const samples = Array.from({ length: 48 }, (_, i) => exchange(p, 1_000_000 + i * 1000));
    const estimator = new ClockEstimator();
    for (const s of samples) estimator.add(s);
    const estimate = estimator.estimate()!;
    expect(Math.abs(estimate.offset - trueOffset(p, estimate.at))).toBeLessThan(3);
    // A plain mean of the same exchanges is pulled by half the mean queue (about 10 ms).
    const mean = samples.reduce((sum, s) => sum + offsetOf(s), 0) / samples.length;
    expect(Math.abs(mean - trueOffset(p, estimate.at))).toBeGreaterThan(6);
  });

  it('learns the rate of a skewed clock, so the offset stays right between exchanges', () => {
    // The reference gains 100 µs a second (100 ppm): 60 ms over ten minutes.
    const random = uniform(3);
    const p: Path = { offset: 500, rate: 100e-6, up: () => 2 + 10 * random(), down: () => 2 + 10 * random() };
    const estimate = run(p, 48, 10_000).estimate()!;
    expect(estimate.rate).toBeGreaterThan(80e-6);
    expect(estimate.rate).toBeLessThan(120e-6);
    // A minute after the last exchange, the offset predicted with the rate is still within a few ms.
    const later = estimate.at + 60_000;
    expect(Math.abs(offsetAt(estimate, later) - trueOffset(p, later))).toBeLessThan(3);
    // Without the rate (the offset of the best sample alone) it would be off by several times that.
    expect(Math.abs(estimate.offset - trueOffset(p, later))).toBeGreaterThan(5);
  });

  it('claims no rate from samples too close together to tell one', () => {
    const random = uniform(9);
    const p: Path = { offset: 0, rate: 300e-6, up: () => 2 + 10 * random(), down: () => 2 + 10 * random() };
    expect(run(p, 8, 100).estimate()!.rate).toBe(0);
  });

  it('keeps a bounded window of samples and forgets on reset', () => {
    const p: Path = { offset: 10, up: () => 1, down: () => 1 };
    const estimator = run(p, 200, 10);
    expect(estimator.samples).toBe(48);
    estimator.reset();
    expect(estimator.estimate()).toBeNull();
  });

  it('ignores an exchange whose answer came before its request (a clock that went back)', () => {
    const estimator = new ClockEstimator();
    estimator.add({ sentAt: 10, receivedAt: 5, referenceReceivedAt: 0, referenceSentAt: 0 });
    expect(estimator.samples).toBe(0);
  });
});
