// One page of a manifest as DOM, built once and reused on every turn: the page layer (full
// viewport), its canvas (scaled by the viewport fit, painted with its background) and the
// placement views in paint order. A page is cold, warm (ready to show), or live.
import type { RuntimePage, RuntimePlacement } from '../../../sdk/contract/manifest';
import {
  backgroundCss,
  canvasTransform,
  paintOrder,
  regionClipCss,
  regionTransform,
  transformCss,
  type Region,
  type Size,
} from './canvas-layout';
import { ENTER_DELAY_MS, ENTER_DURATION_MS, ENTER_EASING, enterKeyframes } from './motion';
import {
  createPlacementView,
  type PlacementHost,
  type PlacementView,
  type Turn,
  type WarmResult,
} from './placement-views';

export type PageState = 'cold' | 'warming' | 'ready' | 'failed' | 'live';

/** A page that failed to get ready is tried again after this long. */
export const FAILED_PAGE_RETRY_MS = 30_000;

export class PageView {
  readonly element: HTMLElement;
  private readonly canvas: HTMLElement;
  private readonly views: PlacementView[];
  state: PageState = 'cold';
  /**
   * How many turns of this page began since its manifest was built. The items of a turn are a
   * function of its number (a one-at-a-time selector shows item `turn mod count`), so a page that
   * comes round again, on its own or after others, shows the next item.
   */
  turns = 0;
  /** The turn the placements are ready for (-1: none); the next turn may start only when it is `turns`. */
  private preparedTurn = -1;
  /** When preparing last failed (null: it did not), for the retry delay. */
  failedAt: number | null = null;
  private preparing: { turn: number; promise: Promise<boolean>; abort: AbortController } | null = null;
  private animations: Animation[] = [];
  /** Set by the engine when a visibility rule ends the turn early: its items count as interrupted. */
  cutShort = false;

  constructor(
    public page: RuntimePage,
    readonly index: number,
    private readonly host: PlacementHost,
  ) {
    this.element = document.createElement('section');
    this.element.className = 'page';
    this.element.dataset.pageId = page.id;
    this.element.dataset.state = 'cold';
    this.canvas = document.createElement('div');
    this.canvas.className = 'canvas';
    const { width, height, background } = page.canvas;
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    this.canvas.style.background = backgroundCss(background);
    const z = paintOrder(page.placements.map((p) => p.layer));
    this.views = page.placements.map((placement, i) => createPlacementView(placement, z[i]!, page, host));
    for (const view of this.views) this.canvas.append(view.element);
    this.element.append(this.canvas);
  }

  /** Whether `view` is one of this page's placements. */
  holds(view: PlacementView): boolean {
    return this.views.includes(view);
  }

  /** Scales the canvas into the viewport; on a video wall's screen, only `region` of it. */
  layout(viewport: Size, region?: Region): void {
    const { canvas } = this.page;
    this.canvas.style.transform = transformCss(
      region
        ? regionTransform(region, viewport, canvas.viewportFit)
        : canvasTransform(canvas, viewport, canvas.viewportFit),
    );
    this.canvas.style.clipPath = region ? regionClipCss(canvas, region) : '';
    for (const view of this.views) view.resized?.(viewport);
  }

  /**
   * Lockstep: the group's timeline says which turn of this page comes next (every member counts
   * turns alike); a page prepared for another turn is prepared again.
   */
  setTurn(turn: number): void {
    if (this.turns === turn) return;
    this.preparing?.abort.abort();
    this.preparing = null;
    this.turns = turn;
  }

  private setState(state: PageState): void {
    this.state = state;
    this.element.dataset.state = state;
  }

  /** Whether the sequencer may start this page's next turn now: it is prepared (on glass or off). */
  usable(): boolean {
    return this.preparedTurn === this.turns && (this.state === 'ready' || this.state === 'live');
  }

  /** Whether preparing it is worth trying (after a failure, only once the retry delay passed). */
  retryDue(now: number): boolean {
    return this.failedAt === null || now - this.failedAt >= FAILED_PAGE_RETRY_MS;
  }

  /**
   * Gets every placement ready for the page's next turn (while the page may still be on glass). True
   * when the page can show: each placement is ready, or unavailable in a way that leaves the page
   * presentable (an unreachable site), as long as something remains to show.
   */
  warm(now: () => number): Promise<boolean> {
    const turn = this.turns;
    if (this.usable()) return Promise.resolve(true);
    if (this.preparing?.turn === turn) return this.preparing.promise;
    this.preparing?.abort.abort();
    if (this.state !== 'live') this.setState('warming');
    const abort = new AbortController();
    const promise = Promise.allSettled(this.views.map((v) => v.prepare(turn, abort.signal))).then((results) => {
      if (this.preparing?.abort === abort) this.preparing = null;
      if (abort.signal.aborted || this.turns !== turn) return false;
      const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value : ('failed' as const)));
      // Why a placement could not get ready, for the operator reading the player's log.
      results.forEach((r, i) => {
        if (r.status === 'rejected')
          this.host.log(
            `page ${this.page.id}: placement ${this.views[i]!.placement.id} is not ready: ${String(r.reason)}`,
          );
      });
      const ok = !outcomes.includes('failed') && outcomes.some((o: WarmResult | 'failed') => o === 'ready');
      if (ok) {
        this.preparedTurn = turn;
        this.failedAt = null;
        if (this.state !== 'live') this.setState('ready');
      } else {
        this.failedAt = now();
        // A page on glass keeps showing its turn; one off glass releases what it loaded.
        if (this.state !== 'live') {
          this.setState('failed');
          for (const view of this.views) view.cool();
        }
      }
      return ok;
    });
    this.preparing = { turn, promise, abort };
    return promise;
  }

  /**
   * A turn of this page begins on glass (`segment.fill`: when it fills the viewport). Placements show the
   * turn's items (media end reported through `onMediaEnd`). Enter animations run when the page comes
   * on glass, not when it merely comes round again: that is a cut, and an enter animation would
   * blank its placement until the animation's delay passed.
   */
  goLive(segment: Turn, now: number, onMediaEnd: () => void): void {
    const fill = segment.fill;
    const again = this.state === 'live';
    const turn = this.turns++;
    if (again) {
      const outcome = this.outcome();
      for (const view of this.views) view.stop(outcome);
    }
    this.setState('live');
    for (const view of this.views) view.start(turn, segment, onMediaEnd);
    if (again) return;
    for (const view of this.views) {
      const enter = view.placement.enter;
      if (!enter) continue;
      const delay = Math.max(0, fill + ENTER_DELAY_MS - now);
      this.animations.push(
        view.element.animate(enterKeyframes(enter.type), {
          delay,
          duration: ENTER_DURATION_MS,
          easing: ENTER_EASING,
          fill: 'backwards',
        }),
      );
    }
  }

  track(animation: Animation): void {
    this.animations.push(animation);
  }

  /** How the turn that ends now ended, for proof of play. */
  private outcome(): 'complete' | 'interrupted' {
    const outcome = this.cutShort ? 'interrupted' : 'complete';
    this.cutShort = false;
    return outcome;
  }

  /** Off glass: stop placements and animations, and release what costs (decoders, third-party frames). */
  leave(): void {
    for (const animation of this.animations) animation.cancel();
    this.animations = [];
    const outcome = this.outcome();
    for (const view of this.views) view.stop(outcome);
    this.preparing?.abort.abort();
    this.preparing = null;
    this.preparedTurn = -1;
    this.setState('cold');
    for (const view of this.views) view.cool();
  }

  /** Same page in a refreshed manifest of the same revision: new capability handles (and maybe a relaunch to prepare). */
  refresh(page: RuntimePage): void {
    this.page = page;
    let again = false;
    page.placements.forEach((placement: RuntimePlacement, i) => {
      if (this.views[i]?.refresh(placement)) again = true;
    });
    if (again) {
      this.preparing?.abort.abort();
      this.preparing = null;
      this.preparedTurn = -1;
      if (this.state === 'ready') this.setState('cold');
    }
  }

  destroy(): void {
    this.preparing?.abort.abort();
    for (const animation of this.animations) animation.cancel();
    this.animations = [];
    for (const view of this.views) view.destroy();
    this.element.remove();
  }
}
