import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BURST_MAX_SAMPLES,
  BURST_SAMPLES,
  CONVERGE_INTERVAL_MS,
  CONVERGE_PERIOD_MS,
  ClockSync,
  RETRY_MAX_MS,
  STEADY_INTERVAL_MS,
} from './clock-sync';
import { GlassClock } from './glass-clock';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A reference clock `offset` ahead of the device, answering after `oneWayMs` each way. */
function reference(offset: number, oneWayMs = 5) {
  const calls: number[] = [];
  let reachable = true;
  return {
    calls,
    setReachable: (r: boolean) => (reachable = r),
    setOffset: (o: number) => (offset = o),
    exchange: async () => {
      calls.push(performance.now());
      if (!reachable) throw new Error('unreachable');
      await wait(oneWayMs);
      const at = performance.now() + offset;
      await wait(oneWayMs);
      return { receivedAt: at, sentAt: at };
    },
  };
}

describe('clock sync', () => {
  it('synchronizes within the first burst, then settles to the steady cadence', async () => {
    const ref = reference(3_600_000);
    const clock = new GlassClock(() => performance.now(), 0);
    const sync = new ClockSync({ exchange: ref.exchange, local: () => performance.now(), clock });
    sync.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(clock.synchronized).toBe(true);
    expect(clock.now() - performance.now()).toBeCloseTo(3_600_000, 6);
    expect(ref.calls.length).toBeGreaterThanOrEqual(BURST_SAMPLES);
    // Converging, then steady.
    await vi.advanceTimersByTimeAsync(CONVERGE_PERIOD_MS);
    const converging = ref.calls.length;
    expect(converging).toBeGreaterThan(BURST_SAMPLES + CONVERGE_PERIOD_MS / CONVERGE_INTERVAL_MS / 2);
    await vi.advanceTimersByTimeAsync(10 * STEADY_INTERVAL_MS);
    expect(ref.calls.length - converging).toBeGreaterThanOrEqual(9);
    expect(ref.calls.length - converging).toBeLessThanOrEqual(11);
    sync.stop();
  });

  it('backs off while the reference is unreachable and keeps the clock running on its estimate', async () => {
    const ref = reference(1000);
    const clock = new GlassClock(() => performance.now(), 0);
    const sync = new ClockSync({ exchange: ref.exchange, local: () => performance.now(), clock });
    sync.start();
    await vi.advanceTimersByTimeAsync(2000);
    ref.setReachable(false);
    const before = ref.calls.length;
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    // Exponential backoff capped at a minute: about a dozen tries in ten minutes, not hundreds.
    expect(ref.calls.length - before).toBeLessThan(20);
    expect(clock.now() - performance.now()).toBeCloseTo(1000, 6);
    ref.setReachable(true);
    await vi.advanceTimersByTimeAsync(RETRY_MAX_MS);
    expect(ref.calls.length - before).toBeGreaterThan(10);
    sync.stop();
  });

  it('on a change of reference, forgets the old one and bursts again, slewing the clock when asked not to step', async () => {
    const ref = reference(1000);
    const clock = new GlassClock(() => performance.now(), 0);
    let settled = 0;
    const sync = new ClockSync({
      exchange: ref.exchange,
      local: () => performance.now(),
      clock,
      onSettled: () => settled++,
    });
    sync.start();
    await vi.advanceTimersByTimeAsync(CONVERGE_INTERVAL_MS);
    expect([sync.settled, settled]).toEqual([true, 1]);
    // A new lead whose clock is 200 ms ahead of the old one: under the step threshold.
    ref.setOffset(1200);
    const calls = ref.calls.length;
    sync.referenceChanged({ step: false });
    expect(sync.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(BURST_SAMPLES * 100 + 50);
    expect(ref.calls.length - calls).toBeGreaterThanOrEqual(BURST_SAMPLES);
    expect([sync.settled, settled]).toEqual([true, 2]);
    // Slewed, not stepped: part of the way there after the burst (5 % of ~0.8 s), all of it after 4 s.
    const reading = clock.now() - performance.now();
    expect(reading).toBeGreaterThan(1000);
    expect(reading).toBeLessThan(1100);
    await vi.advanceTimersByTimeAsync(4000);
    expect(clock.now() - performance.now()).toBeCloseTo(1200, 3);
    sync.stop();
  });

  it('starts over when the reference moves by more than it can slew (a new lead, a device that slept)', async () => {
    const ref = reference(5000);
    const clock = new GlassClock(() => performance.now(), 0);
    const steerings: string[] = [];
    const sync = new ClockSync({
      exchange: ref.exchange,
      local: () => performance.now(),
      clock,
      onSteer: (s) => steerings.push(s),
    });
    sync.start();
    await vi.advanceTimersByTimeAsync(CONVERGE_PERIOD_MS);
    ref.setOffset(65_000);
    await vi.advanceTimersByTimeAsync(STEADY_INTERVAL_MS + 10);
    expect(steerings.at(-1)).toBe('stepped');
    expect(clock.now() - performance.now()).toBeCloseTo(65_000, 6);
    expect(sync.estimator.samples).toBe(1);
    sync.stop();
  });

  it('steps on every exchange of the first burst, and only slews a small change afterwards', async () => {
    const ref = reference(5000);
    const clock = new GlassClock(() => performance.now(), 0);
    const steerings: string[] = [];
    const sync = new ClockSync({
      exchange: ref.exchange,
      local: () => performance.now(),
      clock,
      onSteer: (s) => steerings.push(s),
    });
    sync.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(steerings.slice(0, BURST_SAMPLES)).toEqual(Array(BURST_SAMPLES).fill('stepped'));
    await vi.advanceTimersByTimeAsync(CONVERGE_PERIOD_MS);
    ref.setOffset(5030);
    await vi.advanceTimersByTimeAsync(STEADY_INTERVAL_MS + 10);
    expect(steerings.at(-1)).toBe('slewing');
    sync.stop();
  });

  it('goes on with the burst while no exchange was quick enough, then settles', async () => {
    // Answers take 30 ms each way: no exchange bounds the offset within the burst's target.
    const slow = reference(1000, 30);
    const sync = new ClockSync({
      exchange: slow.exchange,
      local: () => performance.now(),
      clock: new GlassClock(() => performance.now(), 0),
    });
    sync.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(slow.calls.length).toBeGreaterThanOrEqual(BURST_MAX_SAMPLES);
    expect(slow.calls.length).toBeLessThan(BURST_MAX_SAMPLES + 5);
    sync.stop();
    // Quick answers end it after the first eight.
    const quick = reference(1000, 2);
    const done = new ClockSync({
      exchange: quick.exchange,
      local: () => performance.now(),
      clock: new GlassClock(() => performance.now(), 0),
    });
    done.start();
    await vi.advanceTimersByTimeAsync(1500);
    expect(quick.calls.length).toBe(BURST_SAMPLES);
    done.stop();
  });

  it('stops asking when stopped', async () => {
    const ref = reference(0);
    const sync = new ClockSync({
      exchange: ref.exchange,
      local: () => performance.now(),
      clock: new GlassClock(() => performance.now(), 0),
    });
    sync.start();
    await vi.advanceTimersByTimeAsync(500);
    sync.stop();
    const asked = ref.calls.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(ref.calls.length).toBe(asked);
  });
});
