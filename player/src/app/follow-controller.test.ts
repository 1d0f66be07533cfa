import { describe, expect, it } from 'vitest';
import type { BarrierAnnouncement } from '../../../sdk/lockstep/group-protocol';
import { followController } from './follow-controller';

/** A controller's barrier and clock feeds, and the last barrier of each timeline it heard of. */
function fakeController(latestBarriers: BarrierAnnouncement[]) {
  const barrierListeners = new Set<(b: BarrierAnnouncement) => void>();
  const clockListeners = new Set<() => void>();
  return {
    latestBarriers,
    onBarrier: (listener: (b: BarrierAnnouncement) => void) => {
      barrierListeners.add(listener);
      return () => barrierListeners.delete(listener);
    },
    onClockStep: (listener: () => void) => {
      clockListeners.add(listener);
      return () => clockListeners.delete(listener);
    },
    hear: (b: BarrierAnnouncement) => {
      for (const listener of barrierListeners) listener(b);
    },
    step: () => {
      for (const listener of clockListeners) listener();
    },
  };
}

function fakeEngine() {
  const calls: string[] = [];
  return {
    calls,
    applyBarrier: (b: BarrierAnnouncement) => void calls.push(`barrier ${b.timeline} ${b.pageIndex} ${b.at}`),
    clockChanged: () => void calls.push('clock'),
  };
}

describe('followController', () => {
  it("hands a new engine each timeline's last barrier before the barriers heard from now on", () => {
    const controller = fakeController([
      { timeline: 'tl_b', pageIndex: 1, at: 3000 },
      { timeline: 'tl_a', pageIndex: 2, at: 1000 },
    ]);
    const engine = fakeEngine();
    followController(engine, controller);
    expect(engine.calls).toEqual(['barrier tl_b 1 3000', 'barrier tl_a 2 1000']);
    controller.hear({ timeline: 'tl_a', pageIndex: 0, at: 5000 });
    controller.step();
    expect(engine.calls).toEqual(['barrier tl_b 1 3000', 'barrier tl_a 2 1000', 'barrier tl_a 0 5000', 'clock']);
  });

  it('hands nothing when no barrier was heard, and stops following when told', () => {
    const controller = fakeController([]);
    const engine = fakeEngine();
    const stop = followController(engine, controller);
    expect(engine.calls).toEqual([]);
    stop();
    controller.hear({ timeline: 'tl_a', pageIndex: 1, at: 2000 });
    controller.step();
    expect(engine.calls).toEqual([]);
  });
});
