import { describe, expect, it } from 'vitest';
import { type BarrierAnnouncement, BarrierBook } from './group-protocol';

describe('the barrier book', () => {
  const x = 'pl_1@3@2026-11-28T00:00:00.000Z';
  const y = 'pl_1@4@2026-11-28T00:00:00.000Z';
  const b1: BarrierAnnouncement = { timeline: x, pageIndex: 1, at: 1000 };

  it('keeps the first barrier of a timeline, and a later one of it', () => {
    const book = new BarrierBook();
    expect(book.of(x)).toBeNull();
    expect(book.offer(b1)).toBe(true);
    expect(book.of(x)).toEqual(b1);
    const later = { ...b1, pageIndex: 0, at: 2000 };
    expect(book.offer(later)).toBe(true);
    expect(book.of(x)).toEqual(later);
  });

  it('refuses the same barrier again, or an older one of its timeline', () => {
    const book = new BarrierBook();
    book.offer(b1);
    expect(book.offer({ ...b1 })).toBe(false);
    expect(book.offer({ ...b1, at: 500 })).toBe(false);
    expect(book.of(x)).toEqual(b1);
  });

  it("keeps each timeline's last barrier: a late one of a timeline does not replace another's", () => {
    const book = new BarrierBook();
    const ofY = { timeline: y, pageIndex: 0, at: 5000 };
    book.offer(ofY);
    // Late news of the old timeline: news for it, and the other timeline's barrier stays.
    expect(book.offer(b1)).toBe(true);
    expect(book.of(y)).toEqual(ofY);
    expect(book.of(x)).toEqual(b1);
    expect(book.of(null)).toBeNull();
    expect(book.all()).toEqual([ofY, b1]);
  });

  it('forgets the timeline heard of longest ago once it holds four', () => {
    const book = new BarrierBook();
    const timelines = ['a', 'b', 'c', 'd'];
    timelines.forEach((timeline, i) => book.offer({ timeline, pageIndex: 0, at: i }));
    // A newer barrier of a makes it recent again: b is then the oldest.
    book.offer({ timeline: 'a', pageIndex: 1, at: 10 });
    book.offer({ timeline: 'e', pageIndex: 0, at: 11 });
    expect(book.of('b')).toBeNull();
    expect(book.all().map((b) => b.timeline)).toEqual(['c', 'd', 'a', 'e']);
  });
});
