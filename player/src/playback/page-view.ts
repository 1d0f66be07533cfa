// One page of a manifest as DOM, built once and reused on every turn: the page layer (full
// viewport), its canvas (scaled by the viewport fit, painted with its background) and the
// placement views in paint order. A page is cold, warm (ready to show), or live.
import type { RuntimePage, RuntimePlacement } from '../../../sdk/contract/manifest';
import { backgroundCss, canvasTransform, paintOrder, transformCss, type Size } from './canvas-layout';
import { ENTER_DELAY_MS, ENTER_DURATION_MS, ENTER_EASING, enterKeyframes } from './motion';
import { createPlacementView, type PlacementHost, type PlacementView, type WarmResult } from './placement-views';

export type PageState = 'cold' | 'warming' | 'ready' | 'failed' | 'live';

/** A page that failed to get ready is tried again after this long. */
export const FAILED_PAGE_RETRY_MS = 30_000;

export class PageView {
  readonly element: HTMLElement;
  private readonly canvas: HTMLElement;
  private readonly views: PlacementView[];
  state: PageState = 'cold';
  /** How often the page came on glass (drives one-at-a-time rotation). */
  activations = 0;
  failedAt = 0;
  private warming: Promise<boolean> | null = null;
  private abort: AbortController | null = null;
  private animations: Animation[] = [];

  constructor(
    public page: RuntimePage,
    readonly index: number,
    host: PlacementHost,
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

  layout(viewport: Size): void {
    this.canvas.style.transform = transformCss(canvasTransform(this.page.canvas, viewport, this.page.canvas.viewportFit));
  }

  private setState(state: PageState): void {
    this.state = state;
    this.element.dataset.state = state;
  }

  /** Whether the sequencer may pick this page now: it is ready (or already on glass). */
  usable(): boolean {
    return this.state === 'ready' || this.state === 'live';
  }

  /** Whether warming it is worth trying (a failed page only after its retry delay). */
  retryDue(now: number): boolean {
    return this.state !== 'failed' || now - this.failedAt >= FAILED_PAGE_RETRY_MS;
  }

  /**
   * Gets every placement ready for the next turn. True when the page can show: each placement is
   * ready, or unavailable in a way that leaves the page presentable (an unreachable site), as long
   * as something remains to show.
   */
  warm(now: () => number): Promise<boolean> {
    if (this.state === 'ready') return Promise.resolve(true);
    if (this.warming) return this.warming;
    this.setState('warming');
    const abort = new AbortController();
    this.abort = abort;
    const activation = this.activations;
    this.warming = Promise.allSettled(this.views.map((v) => v.warm(activation, abort.signal))).then((results) => {
      this.warming = null;
      if (abort.signal.aborted) return false;
      const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value : ('failed' as const)));
      const ok = !outcomes.includes('failed') && outcomes.some((o: WarmResult | 'failed') => o === 'ready');
      if (ok) this.setState('ready');
      else {
        this.failedAt = now();
        this.setState('failed');
        for (const view of this.views) view.cool();
      }
      return ok;
    });
    return this.warming;
  }

  /** On glass: placements start (media end reported through `onMediaEnd`), enter animations run. */
  goLive(fill: number, now: number, onMediaEnd: () => void): void {
    this.setState('live');
    this.activations++;
    for (const view of this.views) view.start(onMediaEnd);
    for (const view of this.views) {
      const enter = view.placement.enter;
      if (!enter) continue;
      const delay = Math.max(0, fill + ENTER_DELAY_MS - now);
      this.animations.push(view.element.animate(enterKeyframes(enter.type), { delay, duration: ENTER_DURATION_MS, easing: ENTER_EASING, fill: 'backwards' }));
    }
  }

  track(animation: Animation): void {
    this.animations.push(animation);
  }

  /** Off glass: stop placements and animations; release what costs unless it is about to show again. */
  leave(keepWarm: boolean): void {
    for (const animation of this.animations) animation.cancel();
    this.animations = [];
    for (const view of this.views) view.stop();
    this.abort?.abort();
    this.abort = null;
    this.warming = null;
    this.setState('cold');
    if (!keepWarm) for (const view of this.views) view.cool();
  }

  /** Same page in a refreshed manifest of the same revision: new capability handles. */
  refresh(page: RuntimePage): void {
    this.page = page;
    page.placements.forEach((placement: RuntimePlacement, i) => this.views[i]?.refresh(placement));
  }

  destroy(): void {
    this.abort?.abort();
    for (const animation of this.animations) animation.cancel();
    this.animations = [];
    for (const view of this.views) view.destroy();
    this.element.remove();
  }
}
