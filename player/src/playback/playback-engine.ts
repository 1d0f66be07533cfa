// The playback engine: loops a manifest's pages on the stage. The sequencer says which page is on
// glass when; the engine warms the next page while the current one plays (so its media are
// decoded and buffered before its transition starts), runs the transition, and swaps to a new
// manifest at a page boundary once the new manifest's first page is ready. Page DOM is built once
// per manifest and toggled; an old manifest's DOM is removed after the swap.
import type { RuntimeApplicationPlacement, RuntimeManifest } from '../../../sdk/contract/manifest';
import type { Size } from './canvas-layout';
import { TRANSITION_EASING, transitionKeyframes } from './motion';
import { PageView } from './page-view';
import type { PlacementHost, PlacementView } from './placement-views';
import {
  endedEarly,
  firstSegment,
  followingSegment,
  nextVisibilityBoundary,
  playableIndexes,
  segmentOf,
  sequencePages,
  type Segment,
  type SequencePage,
} from '../../../sdk/lockstep/sequencer';

/** A boundary timer firing later than this (a throttled or suspended tab) re-anchors at the current time. */
export const LATE_TIMER_TOLERANCE_MS = 1000;
/** How often a page that is due but not ready is looked at again. */
const NOT_READY_RETRY_MS = 250;

export interface EngineHost extends Omit<PlacementHost, 'onApplicationAdvance' | 'viewport' | 'contentGeneration'> {
  /** The playback clock (server-corrected). */
  now(): number;
  /** A manifest is on glass: its first page finished its transition (or it has no pages). */
  onActivated(manifest: RuntimeManifest): void;
}

interface Loop {
  manifest: RuntimeManifest;
  sequence: SequencePage[];
  views: PageView[];
  layer: HTMLElement;
}

export class PlaybackEngine {
  private current: Loop | null = null;
  private pending: Loop | null = null;
  private segment: Segment | null = null;
  private live: PageView | null = null;
  private next: PageView | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private boundaryTimer: ReturnType<typeof setTimeout> | undefined;
  private transitionEnd: ReturnType<typeof setTimeout> | undefined;
  private finishing: (() => void) | null = null;
  private viewportSize: Size;
  private destroyed = false;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: EngineHost,
  ) {
    this.viewportSize = this.measure();
    window.addEventListener('resize', this.onResize);
  }

  /** The page on glass (for tests and diagnostics). */
  get livePageId(): string | null {
    return this.live?.page.id ?? null;
  }

  get activeRevision(): string | null {
    return this.current?.manifest.manifestRevision ?? null;
  }

  private measure(): Size {
    return { width: this.root.clientWidth || window.innerWidth, height: this.root.clientHeight || window.innerHeight };
  }

  private readonly onResize = () => {
    this.viewportSize = this.measure();
    for (const loop of [this.current, this.pending])
      for (const view of loop?.views ?? []) view.layout(this.viewportSize);
  };

  /**
   * Plays `manifest`. The same revision refreshes capability handles in place; a new revision is
   * prepared off glass and swapped in at the next page boundary once its first page is ready.
   */
  setManifest(manifest: RuntimeManifest): void {
    if (this.destroyed) return;
    for (const loop of [this.current, this.pending]) {
      if (loop?.manifest.manifestRevision === manifest.manifestRevision) {
        loop.manifest = manifest;
        manifest.pages.forEach((page, i) => loop.views[i]?.refresh(page));
        // A page that must be prepared again (an application to relaunch) is, for its next turn
        // (after a running transition, which warms the next page when it finishes).
        if (loop === this.current && !this.finishing) this.warmNext();
        else if (loop === this.pending) this.warmPendingFirst();
        return;
      }
    }
    if (this.pending) this.dispose(this.pending);
    this.pending = this.build(manifest);
    if (!this.current || !this.segment) this.startPending();
    else this.warmPendingFirst();
  }

  private build(manifest: RuntimeManifest): Loop {
    const layer = document.createElement('div');
    layer.className = 'loop';
    layer.dataset.manifestRevision = manifest.manifestRevision;
    const loop: Loop = { manifest, sequence: sequencePages(manifest.pages), views: [], layer };
    const engine = this.host;
    // Delegates (not a copy): `paired` and `screenId` are read when used.
    const host: PlacementHost = {
      now: () => engine.now(),
      runtimeOrigin: engine.runtimeOrigin,
      get paired() {
        return engine.paired;
      },
      get screenId() {
        return engine.screenId;
      },
      launch: (launchUrl) => engine.launch(launchUrl),
      viewport: () => this.viewportSize,
      contentGeneration: () => loop.manifest.contentGeneration,
      onApplicationAdvance: (view) => this.onApplicationAdvance(loop, view),
      onApplicationEvent: (placementId, code) => engine.onApplicationEvent(placementId, code),
      log: (message) => engine.log(message),
    };
    loop.views = manifest.pages.map((page, i) => new PageView(page, i, host));
    for (const view of loop.views) {
      view.layout(this.viewportSize);
      layer.append(view.element);
    }
    this.root.append(layer);
    return loop;
  }

  private dispose(loop: Loop): void {
    for (const view of loop.views) view.destroy();
    loop.layer.remove();
  }

  private usable(loop: Loop) {
    return (index: number) => loop.views[index]!.usable();
  }

  /** The first page of the pending manifest that may play now and has not failed recently. */
  private pendingFirst(): PageView | null {
    const loop = this.pending;
    if (!loop) return null;
    const now = this.host.now();
    const segment = firstSegment(loop.sequence, now, loop.manifest.timezone, (i) => loop.views[i]!.retryDue(now));
    return segment ? loop.views[segment.index]! : null;
  }

  private warmPendingFirst(): void {
    const view = this.pendingFirst();
    if (view) void view.warm(() => this.host.now());
  }

  /** Nothing on glass yet: start the pending manifest as soon as its first page is ready. */
  private startPending(): void {
    const loop = this.pending;
    if (!loop) return;
    if (loop.manifest.pages.length === 0) {
      this.swapTo(loop, null);
      return;
    }
    const view = this.pendingFirst();
    if (!view) return this.schedule(NOT_READY_RETRY_MS * 4, () => this.startPending());
    void view
      .warm(() => this.host.now())
      .then((ok) => {
        if (this.destroyed || this.pending !== loop) return;
        if (!ok) return this.schedule(NOT_READY_RETRY_MS, () => this.startPending());
        const now = this.host.now();
        // Preparing took time: a page whose visibility ended meanwhile must not start; pick again.
        if (!playableIndexes(loop.sequence, now, loop.manifest.timezone).has(view.index)) return this.startPending();
        this.swapTo(loop, segmentOf(loop.sequence, view.index, now));
      });
  }

  private schedule(delayMs: number, fn: () => void): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(fn, Math.max(0, delayMs));
  }

  /** Puts `loop` on glass, starting with `segment` (null: a loop with nothing to show). */
  private swapTo(loop: Loop, segment: Segment | null): void {
    const previous = this.current;
    this.current = loop;
    this.pending = null;
    if (!segment) {
      this.leaveLive();
      if (previous && previous !== loop) this.dispose(previous);
      this.segment = null;
      this.host.onActivated(loop.manifest);
      return;
    }
    this.show(segment, () => {
      if (previous && previous !== loop) this.dispose(previous);
      this.host.onActivated(loop.manifest);
    });
  }

  private leaveLive(): void {
    if (!this.live) return;
    this.live.leave();
    this.live.element.style.zIndex = '';
    this.live = null;
  }

  /** Transitions to `segment`'s page (already warm), then arranges the next boundary. */
  private show(segment: Segment, onFilled?: () => void): void {
    this.finishTransition();
    const loop = this.current!;
    const incoming = loop.views[segment.index]!;
    const outgoing = this.live;
    this.segment = segment;
    this.live = incoming;
    const now = this.host.now();
    if (outgoing === incoming) {
      // The page comes round again (a loop of one page, or the only page that may play or is
      // ready): a new turn without a transition, its items prepared while the last turn played.
      incoming.goLive(segment.fill, now, () => this.onMediaEnd(incoming));
      this.armBoundary();
      this.warmNext();
      onFilled?.();
      return;
    }
    const duration = Math.max(0, segment.fill - now);
    const frames = transitionKeyframes(loop.manifest.pages[segment.index]!.transition.type);
    incoming.element.style.zIndex = '2';
    if (outgoing) outgoing.element.style.zIndex = '1';
    incoming.goLive(segment.fill, now, () => this.onMediaEnd(incoming));
    if (duration > 0) {
      incoming.track(incoming.element.animate(frames.incoming, { duration, easing: TRANSITION_EASING }));
      if (outgoing && frames.outgoing)
        outgoing.track(
          outgoing.element.animate(frames.outgoing, { duration, easing: TRANSITION_EASING, fill: 'forwards' }),
        );
    }
    this.armBoundary();
    // The outgoing page leaves once the incoming one fills the viewport; only then is the next page
    // warmed (it may be the outgoing page itself, which must not be disturbed while it still shows).
    this.finishing = () => {
      this.finishing = null;
      clearTimeout(this.transitionEnd);
      if (outgoing && outgoing !== this.live) {
        outgoing.leave();
        outgoing.element.style.zIndex = '';
      }
      this.warmNext();
      onFilled?.();
    };
    this.transitionEnd = setTimeout(() => this.finishing?.(), duration);
  }

  /** Completes a transition still running (a page cut short during it). */
  private finishTransition(): void {
    this.finishing?.();
  }

  /** The page the sequencer would pick at the current segment's end, among pages worth trying. */
  private predictNext(): PageView | null {
    const loop = this.current;
    if (!loop || !this.segment) return null;
    const now = this.host.now();
    const next = followingSegment(loop.sequence, this.segment, loop.manifest.timezone, this.segment.end, (i) =>
      loop.views[i]!.retryDue(now),
    );
    return next ? loop.views[next.index]! : null;
  }

  /** Prepares the next turn: another page, or the page on glass when it comes round again. */
  private warmNext(): void {
    const next = this.predictNext();
    this.next = next;
    if (next) void next.warm(() => this.host.now());
    if (this.pending) this.warmPendingFirst();
  }

  /** Arms the segment's end and the first visibility boundary after `from` (by default, now). */
  private armBoundary(from = this.host.now()): void {
    const segment = this.segment!;
    const now = this.host.now();
    this.schedule(segment.end - now, () => this.onBoundary());
    clearTimeout(this.boundaryTimer);
    const loop = this.current!;
    const boundary = nextVisibilityBoundary(loop.sequence, from, loop.manifest.timezone);
    // setTimeout holds 2^31-1 ms at most; a farther boundary is looked at again then.
    if (boundary !== null)
      this.boundaryTimer = setTimeout(() => this.onVisibilityBoundary(), Math.min(boundary - now, 2 ** 31 - 1));
  }

  /** The current page's time is up: the next page (or the pending manifest) comes on glass. */
  private onBoundary(): void {
    if (this.destroyed || !this.segment || !this.current) return;
    const now = this.host.now();
    const at = now - this.segment.end > LATE_TIMER_TOLERANCE_MS ? now : this.segment.end;
    const pending = this.pending;
    if (pending) {
      if (pending.manifest.pages.length === 0) return this.swapTo(pending, null);
      const first = firstSegment(pending.sequence, at, pending.manifest.timezone, this.usable(pending));
      if (first) {
        this.leaveNext();
        return this.swapTo(pending, first);
      }
    }
    const loop = this.current;
    const next = followingSegment(loop.sequence, this.segment, loop.manifest.timezone, at, (i) =>
      loop.views[i]!.usable(),
    );
    if (next) return this.show(next);
    // Nothing is ready (not even the page on glass for another turn), or the page on glass may no
    // longer play: hold it (never a blank frame) and look again shortly.
    this.segment = { ...this.segment, end: now + NOT_READY_RETRY_MS };
    this.armBoundary();
    this.warmNext();
  }

  private leaveNext(): void {
    if (this.next && this.next !== this.live) this.next.leave();
    this.next = null;
  }

  /** A visibility rule may have changed: a page that may no longer play ends now; the next pick sees the new set. */
  private onVisibilityBoundary(): void {
    if (this.destroyed || !this.segment || !this.current) return;
    const loop = this.current;
    const now = this.host.now();
    if (!playableIndexes(loop.sequence, now, loop.manifest.timezone).has(this.segment.index)) {
      this.segment = endedEarly(this.segment, now);
      this.onBoundary();
      return;
    }
    // A timer may fire a hair before its boundary: the next one is sought from the instant judged
    // here, so this boundary (passed a moment later) is armed again rather than skipped.
    this.armBoundary(now);
    const predicted = this.predictNext();
    if (predicted !== this.next) {
      this.leaveNext();
      this.warmNext();
    }
  }

  private onMediaEnd(view: PageView): void {
    if (view !== this.live || !this.segment || !this.current) return;
    if (this.current.manifest.pages[this.segment.index]?.advance.mode !== 'media_end') return;
    this.endEarly();
  }

  /**
   * Only the page on glass may end itself: during a transition the outgoing page's frame is still
   * active, and its late advance must not end the incoming page (which may hold a placement of the
   * same id), so the asking view must belong to the live page view.
   */
  private onApplicationAdvance(loop: Loop, view: PlacementView): void {
    if (loop !== this.current || !this.segment || !this.live?.holds(view)) return;
    const page = loop.manifest.pages[this.segment.index]!;
    if (page.advance.mode !== 'application') return;
    const placement = view.placement;
    if (placement.content.type !== 'application' || (placement as RuntimeApplicationPlacement).controller !== true)
      return;
    this.endEarly();
  }

  private endEarly(): void {
    this.segment = endedEarly(this.segment!, this.host.now());
    this.schedule(this.segment.end - this.host.now(), () => this.onBoundary());
  }

  destroy(): void {
    this.destroyed = true;
    clearTimeout(this.timer);
    clearTimeout(this.boundaryTimer);
    clearTimeout(this.transitionEnd);
    this.finishing = null;
    window.removeEventListener('resize', this.onResize);
    for (const loop of [this.current, this.pending]) if (loop) this.dispose(loop);
    this.current = this.pending = null;
    this.live = this.next = null;
  }
}
