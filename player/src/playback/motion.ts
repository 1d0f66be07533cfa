// Page transitions and placement enter animations as Web Animations keyframes. A transition is the
// incoming page's motion; in a swipe the outgoing page moves with it, in a crossfade the incoming
// page fades in over the outgoing one (so nothing behind them shows through). Enter animations are
// fixed by the canvas contract: hidden, start 500 ms after the page fills the viewport, run 400 ms.
import { ENTER_DELAY_MS, ENTER_DURATION_MS, type EnterType, type TransitionType } from '../../../sdk/contract/canvas';

export { ENTER_DELAY_MS, ENTER_DURATION_MS };

export interface TransitionKeyframes {
  incoming: Keyframe[];
  /** Null: the outgoing page stays still under the incoming one. */
  outgoing: Keyframe[] | null;
}

const SWIPES: Record<Exclude<TransitionType, 'crossfade'>, { from: string; to: string }> = {
  // swipe-left: the incoming page moves leftwards, entering from the right.
  'swipe-left': { from: 'translate3d(100%, 0, 0)', to: 'translate3d(-100%, 0, 0)' },
  'swipe-right': { from: 'translate3d(-100%, 0, 0)', to: 'translate3d(100%, 0, 0)' },
  'swipe-up': { from: 'translate3d(0, 100%, 0)', to: 'translate3d(0, -100%, 0)' },
  'swipe-down': { from: 'translate3d(0, -100%, 0)', to: 'translate3d(0, 100%, 0)' },
};
const REST = 'translate3d(0, 0, 0)';

export function transitionKeyframes(type: TransitionType): TransitionKeyframes {
  if (type === 'crossfade') return { incoming: [{ opacity: 0 }, { opacity: 1 }], outgoing: null };
  const swipe = SWIPES[type];
  return {
    incoming: [{ transform: swipe.from }, { transform: REST }],
    outgoing: [{ transform: REST }, { transform: swipe.to }],
  };
}

export const TRANSITION_EASING = 'cubic-bezier(0.4, 0, 0.2, 1)';
export const ENTER_EASING = 'cubic-bezier(0.2, 0, 0, 1)';
/** How far a fade-up/down/left/right travels, as a share of the placement's own size. */
export const ENTER_TRAVEL = 0.08;
export const ZOOM_IN_FROM = 0.85;
export const ZOOM_OUT_FROM = 1.15;

export function enterKeyframes(type: EnterType): Keyframe[] {
  const travel = `${ENTER_TRAVEL * 100}%`;
  const from: Record<EnterType, string> = {
    'fade-up': `translate3d(0, ${travel}, 0)`,
    'fade-down': `translate3d(0, -${travel}, 0)`,
    'fade-left': `translate3d(${travel}, 0, 0)`,
    'fade-right': `translate3d(-${travel}, 0, 0)`,
    'fade-in': 'none',
    'zoom-in': `scale(${ZOOM_IN_FROM})`,
    'zoom-out': `scale(${ZOOM_OUT_FROM})`,
  };
  return [
    { opacity: 0, transform: from[type] },
    { opacity: 1, transform: 'none' },
  ];
}

/** When an enter animation starts and ends, relative to the page's fill. */
export function enterTiming(fill: number): { start: number; end: number } {
  return { start: fill + ENTER_DELAY_MS, end: fill + ENTER_DELAY_MS + ENTER_DURATION_MS };
}
