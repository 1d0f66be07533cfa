import { describe, expect, it } from 'vitest';
import { ENTER_DELAY_MS, ENTER_DURATION_MS, enterKeyframes, enterTiming, transitionKeyframes } from './motion';

describe('motion', () => {
  it('crossfades the incoming page over a still outgoing page', () => {
    expect(transitionKeyframes('crossfade')).toEqual({ incoming: [{ opacity: 0 }, { opacity: 1 }], outgoing: null });
  });

  it('moves both pages together in a swipe, in the direction the name gives', () => {
    const left = transitionKeyframes('swipe-left');
    expect(left.incoming[0]!.transform).toBe('translate3d(100%, 0, 0)');
    expect(left.outgoing![1]!.transform).toBe('translate3d(-100%, 0, 0)');
    const down = transitionKeyframes('swipe-down');
    expect(down.incoming[0]!.transform).toBe('translate3d(0, -100%, 0)');
    expect(down.outgoing![1]!.transform).toBe('translate3d(0, 100%, 0)');
    expect(transitionKeyframes('swipe-up').incoming[0]!.transform).toBe('translate3d(0, 100%, 0)');
    expect(transitionKeyframes('swipe-right').outgoing![1]!.transform).toBe('translate3d(100%, 0, 0)');
  });

  it('starts every enter animation hidden and ends it at rest', () => {
    for (const type of ['fade-up', 'fade-down', 'fade-left', 'fade-right', 'fade-in', 'zoom-in', 'zoom-out'] as const) {
      const frames = enterKeyframes(type);
      expect(frames[0]!.opacity).toBe(0);
      expect(frames.at(-1)).toEqual({ opacity: 1, transform: 'none' });
    }
    expect(enterKeyframes('fade-up')[0]!.transform).toBe('translate3d(0, 8%, 0)');
  });

  it('uses the contract timing: 500 ms after the fill, for 400 ms', () => {
    expect(ENTER_DELAY_MS).toBe(500);
    expect(ENTER_DURATION_MS).toBe(400);
    expect(enterTiming(1000)).toEqual({ start: 1500, end: 1900 });
  });
});
