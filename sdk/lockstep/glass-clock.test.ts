import { describe, expect, it } from 'vitest';
import { GlassClock, MAX_SLEW_RATE, STEP_THRESHOLD_MS } from './glass-clock';

function device(start = 1000) {
  let t = start;
  return { local: () => t, advance: (ms: number) => (t += ms) };
}

const estimate = (offset: number, at: number, rate = 0) => ({ offset, rate, at, errorBound: 2 });

describe('glass clock', () => {
  it('steps to the first estimate (nothing is in step before it)', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    expect(clock.synchronized).toBe(false);
    expect(clock.steer(estimate(5_000_000, d.local()))).toBe('stepped');
    expect(clock.now()).toBe(5_001_000);
    expect(clock.synchronized).toBe(true);
  });

  it('slews a later correction at a bounded rate, never jumping, and arrives', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.steer(estimate(10_000, d.local()));
    const before = clock.now();
    // The estimate moves by 40 ms: glass time keeps running, at most 5 % fast, until it has caught up.
    expect(clock.steer(estimate(10_040, d.local()))).toBe('slewing');
    expect(clock.now()).toBe(before);
    let last = clock.now();
    for (let i = 0; i < 100; i++) {
      d.advance(10);
      const now = clock.now();
      expect(now - last).toBeGreaterThanOrEqual(10);
      expect(now - last).toBeLessThanOrEqual(10 * (1 + MAX_SLEW_RATE) + 1e-9);
      last = now;
    }
    // 40 ms at 5 % takes 800 ms; after a second the clock reads the new estimate exactly.
    expect(clock.now()).toBeCloseTo(d.local() + 10_040, 9);
    expect(clock.uncertainty).toBe(2);
  });

  it('slews backwards by running slow, never backwards in time', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.steer(estimate(10_000, d.local()));
    clock.steer(estimate(9_900, d.local()));
    let last = clock.now();
    for (let i = 0; i < 300; i++) {
      d.advance(10);
      expect(clock.now()).toBeGreaterThan(last);
      last = clock.now();
    }
    expect(clock.now()).toBeCloseTo(d.local() + 9_900, 9);
  });

  it('follows the estimate’s rate between estimates', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.steer(estimate(0, d.local(), 50e-6));
    d.advance(100_000);
    expect(clock.now() - d.local()).toBeCloseTo(5, 9);
  });

  it('steps while synchronizing (the first burst of exchanges), whatever the error', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.steer(estimate(10_000, d.local()));
    expect(clock.steer(estimate(10_030, d.local()), true)).toBe('stepped');
    expect(clock.now() - d.local()).toBe(10_030);
  });

  it('steps an error too large to slew (a device that slept)', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.steer(estimate(0, d.local()));
    expect(clock.steer(estimate(STEP_THRESHOLD_MS + 1, d.local()))).toBe('stepped');
    expect(clock.now() - d.local()).toBe(STEP_THRESHOLD_MS + 1);
  });

  it('answers for an animation frame’s timestamp', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.steer(estimate(7_000, d.local()));
    expect(clock.at(d.local() - 16)).toBe(d.local() - 16 + 7_000);
  });

  it('takes a coarse offset only until synchronized', () => {
    const d = device();
    const clock = new GlassClock(d.local, 0);
    clock.setUnsynchronized(3_000);
    expect(clock.now() - d.local()).toBe(3_000);
    clock.steer(estimate(2_000, d.local()));
    clock.setUnsynchronized(9_000);
    expect(clock.now() - d.local()).toBe(2_000);
  });
});
