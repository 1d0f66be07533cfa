// The boundary timer's arming, on a fake store: which boundary it waits for when a write announces
// one while a pass is running.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventLog } from '../events/event-log';
import type { Logger } from '../logger';
import { InProcessNotifier } from '../notifier';
import type { Store } from '../store/store';
import { BoundaryTimer } from './boundary-timer';
import { BOUNDARY_CHANNEL } from './screen-resolution';

const T0 = Date.parse('2026-11-23T08:00:00Z');
const MINUTE = 60_000;

interface Row {
  screen_id: string;
  due_at: number;
}

/**
 * The two reads the timer makes of screen_boundaries (the due rows, the earliest due_at) over
 * `rows`; `duringMin` runs while the earliest is being read, after its answer was taken. Applying
 * a boundary records when and drops the screen's row.
 */
function fakeStore(rows: Row[], duringMin: () => void, applied: { screen: string; at: number }[]): Store {
  const query = {
    select: () => query,
    where: () => query,
    orderBy: () => query,
    limit: () => query,
    execute: async () => rows.filter((r) => r.due_at <= Date.now()).map((r) => ({ screen_id: r.screen_id })),
    executeTakeFirst: async () => {
      const answer = rows.length === 0 ? null : Math.min(...rows.map((r) => r.due_at));
      duringMin();
      return { due_at: answer };
    },
  };
  return {
    db: { selectFrom: () => query },
    transaction: async () => {
      for (const row of rows.filter((r) => r.due_at <= Date.now())) {
        applied.push({ screen: row.screen_id, at: Date.now() });
        rows.splice(rows.indexOf(row), 1);
      }
    },
  } as unknown as Store;
}

describe('the boundary timer', () => {
  afterEach(() => vi.useRealTimers());

  it('waits for a boundary announced while its pass reads the earliest one (committed after that read)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(T0);
    const notifier = new InProcessNotifier();
    const rows: Row[] = [{ screen_id: 'scr_late', due_at: T0 + 120 * MINUTE }];
    const applied: { screen: string; at: number }[] = [];
    let raced = false;
    const store = fakeStore(
      rows,
      () => {
        if (raced) return;
        raced = true;
        // A schedule write commits after the read took its snapshot, then announces its boundary.
        rows.push({ screen_id: 'scr_early', due_at: T0 + 5 * MINUTE });
        notifier.publish(BOUNDARY_CHANNEL, T0 + 5 * MINUTE);
      },
      applied,
    );
    const timer = new BoundaryTimer({
      store,
      events: {} as EventLog,
      clock: { now: () => Date.now() },
      notifier,
      logger: { error: () => undefined } as unknown as Logger,
    });
    await timer.start();
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
    expect(applied).toEqual([{ screen: 'scr_early', at: T0 + 5 * MINUTE }]);
    timer.stop();
  });
});
