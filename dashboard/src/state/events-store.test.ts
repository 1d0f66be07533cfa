// The live log keeps the newest first, at most its limit, and ignores a replayed event.
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../sdk/contract/events';
import { createEventsStore } from './events-store';

const at = (sequence: number): EventRecord => ({
  sequence,
  cursor: `c${sequence}`,
  type: 'screen.updated',
  severity: 'info',
  message: `#${sequence}`,
  at: '2026-11-25T12:00:00Z',
});

describe('the events store', () => {
  it('holds the newest first, at most its limit', () => {
    const store = createEventsStore(3);
    for (const n of [1, 2, 3, 4, 5]) store.getState().add(at(n));
    expect(store.getState().items.map((e) => e.sequence)).toEqual([5, 4, 3]);
  });

  it('ignores an event it already holds (a reconnect replays from its cursor)', () => {
    const store = createEventsStore();
    store.getState().add(at(1));
    store.getState().add(at(2));
    store.getState().add(at(2));
    store.getState().add(at(1));
    expect(store.getState().items.map((e) => e.sequence)).toEqual([2, 1]);
  });

  it('starts empty for another project', () => {
    const store = createEventsStore();
    store.getState().add(at(1));
    store.getState().clear();
    expect(store.getState().items).toEqual([]);
  });
});
