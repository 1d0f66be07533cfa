import { describe, expect, it } from 'vitest';
import { type BarrierAnnouncement, supersedes } from './group-protocol';

describe('which barrier is the last one', () => {
  const b1: BarrierAnnouncement = { timeline: 'pl_1@3@2026-11-28T00:00:00.000Z', pageIndex: 1, at: 1000 };

  it('is the first one heard, and a later one of the same timeline', () => {
    expect(supersedes(b1, null)).toBe(true);
    expect(supersedes({ ...b1, pageIndex: 0, at: 2000 }, b1)).toBe(true);
  });

  it('stays when the same one is heard again, or an older one of its timeline', () => {
    expect(supersedes({ ...b1 }, b1)).toBe(false);
    expect(supersedes({ ...b1, at: 500 }, b1)).toBe(false);
  });

  it('is replaced by one of another timeline, whatever its instant', () => {
    expect(supersedes({ ...b1, timeline: 'pl_1@4@2026-11-28T00:00:00.000Z', at: 10 }, b1)).toBe(true);
  });
});
