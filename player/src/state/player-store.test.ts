import { describe, expect, it } from 'vitest';
import { createPlayerStore, estimateClockOffset, markReachable, markUnreachable, playbackNow } from './player-store';

describe('player store', () => {
  it('starts booting, connecting, with nothing to play', () => {
    const store = createPlayerStore();
    expect(store.getState()).toMatchObject({
      phase: 'booting',
      connectivity: 'connecting',
      manifest: null,
      activeRevision: null,
    });
  });

  it('tracks when the runtime became unreachable and clears it on return', () => {
    const store = createPlayerStore();
    markUnreachable(store, 1000);
    markUnreachable(store, 5000);
    expect(store.getState()).toMatchObject({ connectivity: 'offline', offlineSince: 1000 });
    markReachable(store);
    expect(store.getState()).toMatchObject({ connectivity: 'online', offlineSince: null });
  });

  it('corrects the playback clock only for skews beyond the Date header resolution', () => {
    expect(estimateClockOffset(10_000, 9_000)).toBe(0);
    expect(estimateClockOffset(3_600_000, 0)).toBe(3_600_000);
    expect(playbackNow({ clockOffsetMs: 3_600_000 }, 5)).toBe(3_600_005);
  });
});
