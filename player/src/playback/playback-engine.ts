// The playback engine: loops a manifest's pages on the stage. The sequencer says which page is on
// glass when; the engine warms the next page while the current one plays (so its media are
// decoded and buffered before its transition starts), runs the transition, and swaps to a new
// manifest at a page boundary once the new manifest's first page is ready. Page DOM is built once
// per manifest and toggled; an old manifest's DOM is removed after the swap.
//
// A manifest of a sync group plays in lockstep: the page on glass is the group's timeline at the
// instant (sdk/lockstep/timeline.ts, from the group's epoch on the synchronized clock), each page
// change is scheduled at its absolute instant and shown on the first animation frame at or after
// it, a member that starts late joins mid-turn, and a new manifest is moved onto at a boundary of
// its own timeline. Nothing a member alone decides (a media end, an application's advance) ends a
// page early there; an application's advance goes to the host, which may make it a group barrier.
import { isPlacementOf, type RuntimeManifest, type RuntimeSync } from '../../../sdk/contract/manifest';
import { type BarrierAnnouncement, BarrierBook } from '../../../sdk/lockstep/group-protocol';
import {
  anchorAt,
  epochAnchor,
  joinInstant,
  timelineKey,
  timelinePositionAt,
  type TimelinePosition,
} from '../../../sdk/lockstep/timeline';
import type { Size } from './canvas-layout';
import { TRANSITION_EASING, transitionKeyframes } from './motion';
import { PageView } from './page-view';
import type { PlacementHost, PlacementView } from './placement-views';
import type { ShowingFacts, ShowingHandle } from '../offline/playback-queue';
import { playableAt, switchAt } from './upcoming';
import {
  endedEarly,
  firstSegment,
  followingSegment,
  nextPageIndex,
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
/** Lockstep: a member that learns of a new timeline after its epoch moves onto it at the first boundary this far ahead (time to prepare) ... */
export const LOCKSTEP_JOIN_PREPARE_MS = 1500;
/** ... unless that boundary is further than this (a long page): then it joins mid-turn, as a member that starts late does. */
export const LOCKSTEP_JOIN_MAX_WAIT_MS = 10_000;
/**
 * Lockstep: a boundary's timer fires this early (a loaded machine fires timers late); animation
 * frames then find the first one at or after the instant.
 */
const LOCKSTEP_WAKE_EARLY_MS = 150;
/**
 * Lockstep: a long wait is slept in pieces of at most this, each measured again on the playback
 * clock: a clock slewing at 5 % moves an instant by well under the early margin within one piece.
 */
const LOCKSTEP_WAKE_PIECE_MS = 1000;
/**
 * The wait for a manifest's upcoming switch is slept in pieces of at most this, each measured
 * again on the playback clock (a corrected or jumping clock; setTimeout's range).
 */
const UPCOMING_WAKE_PIECE_MS = 60_000;

export interface EngineHost
  extends Omit<PlacementHost, 'onApplicationAdvance' | 'viewport' | 'contentGeneration' | 'lockstep' | 'showing'> {
  /** Proof of play: an item came on glass; the engine ends the handle when it leaves. */
  showing?(facts: ShowingFacts): ShowingHandle;
  /** The playback clock (server-corrected; the group's synchronized clock for a sync group). */
  now(): number;
  /**
   * A manifest is on glass: its first page finished its transition (or it has no pages). `derived`:
   * the upcoming pages of a manifest past its boundary (upcoming.ts), not a revision the server minted.
   */
  onActivated(manifest: RuntimeManifest, derived: boolean): void;
  /**
   * Lockstep: the controlling application of the page on glass asked for the next page. The page
   * is not ended here (every member shows the same application); a host with a group channel may
   * announce a barrier and call applyBarrier. Without one the page plays to its max_ms.
   */
  onLockstepAdvance?(timeline: string, pageIndex: number): void;
}

interface Lockstep {
  sync: RuntimeSync;
  /** Names the timeline for barriers: members move together only on the same one. */
  key: string;
  anchor: TimelinePosition;
  /** The timeline before the last barrier: it holds until the barrier's instant. */
  before: TimelinePosition | null;
  /** The last position computed: later questions walk on from it. */
  cache: TimelinePosition | null;
  /** A pending loop moves on glass at this instant (a boundary of its own timeline). */
  joinAt: number | null;
  /** The instant of the last barrier applied to this timeline. */
  barrierAt: number | null;
}

interface Loop {
  manifest: RuntimeManifest;
  sequence: SequencePage[];
  views: PageView[];
  layer: HTMLElement;
  lockstep: Lockstep | null;
  /** The derived loop of the manifest's upcoming pages (same revision, other pages). */
  derived: boolean;
}

export { timelineKey };

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
  /** Lockstep: the turn number of the page on glass. */
  private turn = 0;
  /** Lockstep: waits for the first frame at or after an instant (a boundary; a pending timeline's join). */
  private frameWait: { cancel(): void } | null = null;
  private joinWait: { cancel(): void } | null = null;
  /** Lockstep: the page `armJoin` warmed for the pending loop's join (null once it joined). */
  private joinView: PageView | null = null;
  private viewportSize: Size;
  private destroyed = false;
  /** The manifest last handed in (what the server served), and the wait for its upcoming switch. */
  private served: RuntimeManifest | null = null;
  private upcomingTimer: ReturnType<typeof setTimeout> | undefined;
  /** Lockstep: each timeline's last barrier handed in; each new loop of a timeline starts from its. */
  private readonly barriers = new BarrierBook();

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

  /** The lockstep timeline on glass (null when the manifest is not in a sync group). */
  get timeline(): string | null {
    return this.current?.lockstep?.key ?? null;
  }

  /**
   * The playback clock stepped (its first synchronization, or an error too large to slew): in
   * lockstep, whatever was armed on the old reading is judged again now, so the member joins the
   * group where it really is.
   */
  clockChanged(): void {
    if (this.destroyed) return;
    const pending = this.pending;
    if (pending?.lockstep) {
      if (!this.current || !this.segment) return this.joinNow(pending);
      this.armJoin(pending);
    }
    if (this.current?.lockstep && this.segment) {
      this.frameWait?.cancel();
      this.onLockstepBoundary(this.host.now());
    }
  }

  /**
   * Lockstep: the group's lead announced "page P at instant T" (an advance no member can compute):
   * from T the timeline runs on from that page. Barriers of another timeline are ignored. A loop
   * still preparing to join the group moves too, so it joins where the barrier took the group, and
   * so does each loop made later (a new revision of the timeline): hand a new engine the group's
   * last barrier before its first manifest.
   */
  applyBarrier(barrier: BarrierAnnouncement): void {
    this.barriers.offer(barrier);
    const pending = this.pending;
    if (pending && this.moveTimeline(pending, barrier)) {
      // Armed to join at or after T: the page prepared for the join may no longer be the group's
      // then, and the moved timeline may have a boundary sooner. (Before T the timeline holds.)
      const joinAt = pending.lockstep!.joinAt;
      if (joinAt !== null && barrier.at <= joinAt && !this.joinHolds(pending, joinAt)) this.armJoin(pending);
    }
    const loop = this.current;
    if (!loop || !this.moveTimeline(loop, barrier) || !this.segment) return;
    if (this.segment.end > barrier.at) this.segment = { ...this.segment, end: Math.max(barrier.at, this.segment.fill) };
    this.armBoundary();
    this.leaveNext();
    this.warmNext();
  }

  /**
   * Runs `loop`'s timeline on from the barrier's page at its instant; false when the barrier is of
   * another timeline, or was already applied (a stream and a catch-up may both bring the last one).
   */
  private moveTimeline(loop: Loop, barrier: BarrierAnnouncement): boolean {
    const lockstep = loop.lockstep;
    if (!lockstep || lockstep.key !== barrier.timeline || !loop.views[barrier.pageIndex]) return false;
    if (lockstep.barrierAt !== null && barrier.at <= lockstep.barrierAt) return false;
    const replaced = this.positionAt(loop, barrier.at);
    const again = replaced?.segment.index === barrier.pageIndex;
    const segment = segmentOf(loop.sequence, barrier.pageIndex, barrier.at, again);
    // The timeline so far holds until T: keep a position of it from which every instant up to T is reached.
    lockstep.before = this.positionAt(loop, Math.min(this.host.now(), barrier.at - 1)) ?? lockstep.anchor;
    lockstep.anchor = anchorAt(loop.sequence, segment);
    lockstep.cache = null;
    lockstep.barrierAt = barrier.at;
    return true;
  }

  private measure(): Size {
    return { width: this.root.clientWidth || window.innerWidth, height: this.root.clientHeight || window.innerHeight };
  }

  private readonly onResize = () => {
    this.viewportSize = this.measure();
    for (const loop of [this.current, this.pending])
      for (const view of loop?.views ?? []) view.layout(this.viewportSize, loop?.manifest.sync?.wallRegion);
  };

  /**
   * Plays `manifest`. The same revision refreshes capability handles in place; a new revision is
   * prepared off glass and swapped in at the next page boundary once its first page is ready, or
   * as soon as it is ready when a takeover starts or ends (`cutsIn`).
   */
  setManifest(served: RuntimeManifest): void {
    if (this.destroyed) return;
    this.served = served;
    this.armUpcoming(served);
    // Past the manifest's boundary (the reminted revision has not come: offline), its upcoming pages.
    const { manifest, derived } = playableAt(served, this.host.now());
    for (const loop of [this.current, this.pending]) {
      if (loop?.manifest.manifestRevision === manifest.manifestRevision && loop.derived === derived) {
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
    this.pending = this.build(manifest, derived);
    // A new loop of the group's timeline starts from its epoch: its last barrier moves it on before it joins.
    const barrier = this.barriers.of(this.pending.lockstep?.key ?? null);
    if (barrier) this.moveTimeline(this.pending, barrier);
    if (!this.current || !this.segment) this.startPending();
    else if (this.pending.lockstep) this.armJoin(this.pending);
    else if (cutsIn(this.current.manifest, manifest)) this.cutIn(this.pending);
    else this.warmPendingFirst();
  }

  /**
   * A takeover started or ended: `loop` replaces the page on glass as soon as its first page is
   * ready (an emergency notice must not wait for a long video to end). Until then the page on glass
   * plays on; should `loop`'s first page fail, it still comes on glass at a page boundary.
   */
  private cutIn(loop: Loop): void {
    // The page on glass is cut short (proof of play says so), and a lockstep turn's wait with it.
    const cut = () => {
      if (this.live) this.live.cutShort = true;
      this.frameWait?.cancel();
      this.frameWait = null;
    };
    if (loop.manifest.pages.length === 0) {
      this.swapInPending(loop, this.host.now(), cut);
      return;
    }
    const view = this.pendingFirst();
    if (!view) return;
    void view
      .warm(() => this.host.now())
      .then((ok) => {
        if (!ok || this.destroyed || this.pending !== loop || !this.current || !this.segment) return;
        this.swapInPending(loop, this.host.now(), cut);
      });
  }

  /**
   * Puts the (non-lockstep) pending `loop` on glass at `at`, from its first page that may play and
   * is ready (an empty loop at once), after `beforeSwap`; false, and nothing changes, when none is.
   */
  private swapInPending(loop: Loop, at: number, beforeSwap?: () => void): boolean {
    const first =
      loop.manifest.pages.length === 0
        ? null
        : firstSegment(loop.sequence, at, loop.manifest.timezone, this.usable(loop));
    if (loop.manifest.pages.length > 0 && !first) return false;
    beforeSwap?.();
    if (first) this.leaveNext();
    this.swapTo(loop, first);
    return true;
  }

  /** At the served manifest's upcoming instant, it is played again: as its derived loop then. */
  private armUpcoming(served: RuntimeManifest): void {
    clearTimeout(this.upcomingTimer);
    const at = switchAt(served);
    if (at === null) return;
    const wake = () => {
      if (this.destroyed || this.served !== served) return;
      const wait = at - this.host.now();
      if (wait <= 0) return this.setManifest(served);
      this.upcomingTimer = setTimeout(wake, Math.min(wait, UPCOMING_WAKE_PIECE_MS));
    };
    const wait = at - this.host.now();
    if (wait > 0) this.upcomingTimer = setTimeout(wake, Math.min(wait, UPCOMING_WAKE_PIECE_MS));
  }

  private build(manifest: RuntimeManifest, derived: boolean): Loop {
    const layer = document.createElement('div');
    layer.className = 'loop';
    layer.dataset.manifestRevision = manifest.manifestRevision;
    const sequence = sequencePages(manifest.pages);
    const loop: Loop = { manifest, sequence, views: [], layer, lockstep: lockstepOf(manifest, sequence), derived };
    const engine = this.host;
    // Delegates (not a copy): `paired` and `screenId` are read when used.
    const host: PlacementHost = {
      now: () => engine.now(),
      lockstep: () => loop.lockstep !== null,
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
      ...(engine.showing
        ? {
            showing: (facts: Omit<ShowingFacts, 'manifestRevision'>) =>
              engine.showing!({ ...facts, manifestRevision: loop.manifest.manifestRevision }),
          }
        : {}),
      log: (message) => engine.log(message),
    };
    loop.views = manifest.pages.map((page, i) => new PageView(page, i, host));
    for (const view of loop.views) {
      view.layout(this.viewportSize, manifest.sync?.wallRegion);
      layer.append(view.element);
    }
    this.root.append(layer);
    return loop;
  }

  private dispose(loop: Loop): void {
    if (loop === this.pending) {
      this.joinWait?.cancel();
      this.joinWait = null;
    }
    for (const view of loop.views) view.destroy();
    loop.layer.remove();
  }

  /** Lockstep: the position of `loop`'s timeline at `t` (null before its anchor). */
  private positionAt(loop: Loop, t: number): TimelinePosition | null {
    const lockstep = loop.lockstep!;
    const tz = loop.manifest.timezone;
    if (lockstep.before && t < lockstep.anchor.segment.start) {
      const p = timelinePositionAt(loop.sequence, lockstep.before, t, tz);
      const cut = lockstep.anchor.segment.start;
      return p && p.segment.end > cut ? { ...p, segment: { ...p.segment, end: Math.max(cut, p.segment.fill) } } : p;
    }
    const from = lockstep.cache && lockstep.cache.segment.start <= t ? lockstep.cache : lockstep.anchor;
    const position = timelinePositionAt(loop.sequence, from, t, tz);
    if (position) lockstep.cache = position;
    return position;
  }

  /**
   * Calls `fn` with the playback-clock time of the first animation frame at or after `instant`
   * (a timer wakes a little before it; frames then decide). A hidden page paints no frames: there
   * the timer alone decides.
   */
  private onFrameAt(instant: number, fn: (frameTime: number) => void): { cancel(): void } {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let frame = 0;
    let cancelled = false;
    const onFrame = (timestamp: number) => {
      if (cancelled) return;
      const frameTime = this.host.now() - (performance.now() - timestamp);
      if (frameTime >= instant) fn(frameTime);
      else frame = requestAnimationFrame(onFrame);
    };
    const wake = () => {
      if (cancelled) return;
      const now = this.host.now();
      if (document.visibilityState === 'hidden') {
        if (now >= instant) fn(now);
        else timer = setTimeout(wake, instant - now);
        return;
      }
      if (instant - now > LOCKSTEP_WAKE_EARLY_MS * 2)
        timer = setTimeout(wake, Math.min(LOCKSTEP_WAKE_PIECE_MS, instant - now - LOCKSTEP_WAKE_EARLY_MS));
      else frame = requestAnimationFrame(onFrame);
    };
    wake();
    return {
      cancel: () => {
        cancelled = true;
        clearTimeout(timer);
        cancelAnimationFrame(frame);
      },
    };
  }

  /** Lockstep, nothing on glass: join the group's timeline where it is now, as soon as that page is ready. */
  private joinNow(loop: Loop): void {
    const lockstep = loop.lockstep!;
    const position = this.positionAt(loop, this.host.now());
    if (!position) {
      // Before the epoch: prepare the first page and show it on the epoch's frame.
      const first = lockstep.anchor;
      loop.views[first.segment.index]!.setTurn(first.turn);
      void loop.views[first.segment.index]!.warm(() => this.host.now());
      this.joinWait?.cancel();
      this.joinWait = this.onFrameAt(first.segment.start, () => {
        this.joinWait = null;
        if (!this.destroyed && this.pending === loop) this.joinNow(loop);
      });
      return;
    }
    const view = loop.views[position.segment.index]!;
    view.setTurn(position.turn);
    if (view.usable()) {
      this.turn = position.turn;
      return this.swapTo(loop, position.segment);
    }
    void view
      .warm(() => this.host.now())
      .then((ok) => {
        if (this.destroyed || this.pending !== loop) return;
        if (!ok) return this.schedule(NOT_READY_RETRY_MS, () => this.startPending());
        const at = this.positionAt(loop, this.host.now())!;
        // Preparing took time: the group may have moved on meanwhile; prepare where it is now.
        if (at.segment.start !== position.segment.start || at.segment.index !== position.segment.index)
          return this.startPending();
        this.turn = at.turn;
        this.swapTo(loop, at.segment);
      });
  }

  /**
   * Lockstep, another manifest on glass: move onto `loop`'s timeline at its epoch when that is still
   * ahead, else at its first boundary after a short preparation (mid-turn when that boundary is far
   * off), with that page warmed meanwhile.
   */
  private armJoin(loop: Loop, notBefore = this.host.now() + LOCKSTEP_JOIN_PREPARE_MS): void {
    const lockstep = loop.lockstep!;
    const boundary = joinInstant(loop.sequence, lockstep.anchor, notBefore, loop.manifest.timezone);
    const joinAt =
      boundary > lockstep.anchor.segment.start && boundary - notBefore > LOCKSTEP_JOIN_MAX_WAIT_MS
        ? notBefore
        : boundary;
    lockstep.joinAt = joinAt;
    const position = this.positionAt(loop, joinAt)!;
    const view = loop.views[position.segment.index]!;
    // A join armed again (a barrier moved the timeline, or the due page was not ready) for another
    // page: the one warmed for the old join is not coming on glass then; what it holds goes.
    const replaced = this.joinView;
    if (replaced && replaced !== view && loop.views.includes(replaced)) replaced.leave();
    this.joinView = view;
    view.setTurn(position.turn);
    void view.warm(() => this.host.now());
    this.joinWait?.cancel();
    this.joinWait = this.onFrameAt(joinAt, (frameTime) => {
      this.joinWait = null;
      if (this.destroyed || this.pending !== loop) return;
      const at = this.positionAt(loop, frameTime)!;
      const due = loop.views[at.segment.index]!;
      if (due.turns !== at.turn || !due.usable()) return this.armJoin(loop, frameTime + NOT_READY_RETRY_MS);
      this.joinView = null;
      this.leaveNext();
      this.turn = at.turn;
      this.swapTo(loop, at.segment);
    });
  }

  /**
   * Whether the join armed for `joinAt` still fits `loop`'s moved timeline: a turn of the page
   * warmed for it starts then, the same turn. Arming it again would wait for a boundary the
   * preparation time away, later than this one.
   */
  private joinHolds(loop: Loop, joinAt: number): boolean {
    const position = this.positionAt(loop, joinAt);
    if (!position || position.segment.start !== joinAt) return false;
    const view = loop.views[position.segment.index];
    return view === this.joinView && view.turns === position.turn;
  }

  private usable(loop: Loop) {
    return (index: number) => loop.views[index]!.usable();
  }

  /** The first page of the pending manifest that may play now and has not failed recently. */
  private pendingFirst(): PageView | null {
    const loop = this.pending;
    if (!loop || loop.lockstep) return null;
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
    if (loop.lockstep) return this.joinNow(loop);
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
      this.host.onActivated(loop.manifest, loop.derived);
      return;
    }
    this.show(segment, () => {
      if (previous && previous !== loop) this.dispose(previous);
      this.host.onActivated(loop.manifest, loop.derived);
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
    if (this.current?.lockstep) this.current.views[segment.index]!.setTurn(this.turn);
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
      incoming.goLive(segment, now, () => this.onMediaEnd(incoming));
      this.armBoundary();
      this.warmNext();
      onFilled?.();
      return;
    }
    const duration = Math.max(0, segment.fill - now);
    const frames = transitionKeyframes(loop.manifest.pages[segment.index]!.transition.type);
    incoming.element.style.zIndex = '2';
    if (outgoing) outgoing.element.style.zIndex = '1';
    incoming.goLive(segment, now, () => this.onMediaEnd(incoming));
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
    if (loop.lockstep) {
      // The group's next turn, whatever this member managed to prepare: count its turn alike.
      const next = this.positionAt(loop, this.segment.end);
      if (!next) return null;
      const view = loop.views[next.segment.index]!;
      // The page on glass too: after a barrier its next turn is the group's count, not its own.
      view.setTurn(next.turn);
      return view;
    }
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
    if (this.pending && !this.pending.lockstep) this.warmPendingFirst();
  }

  /** Arms the segment's end and the first visibility boundary after `from` (by default, now). */
  private armBoundary(from = this.host.now()): void {
    const segment = this.segment!;
    if (this.current?.lockstep) {
      // The timeline already ends a turn where a visibility rule does: only its end matters.
      clearTimeout(this.timer);
      clearTimeout(this.boundaryTimer);
      this.frameWait?.cancel();
      this.frameWait = this.onFrameAt(segment.end, (frameTime) => this.onLockstepBoundary(frameTime));
      return;
    }
    const now = this.host.now();
    this.schedule(segment.end - now, () => this.onBoundary());
    clearTimeout(this.boundaryTimer);
    const loop = this.current!;
    const boundary = nextVisibilityBoundary(loop.sequence, from, loop.manifest.timezone);
    // setTimeout holds 2^31-1 ms at most; a farther boundary is looked at again then.
    if (boundary !== null)
      this.boundaryTimer = setTimeout(() => this.onVisibilityBoundary(), Math.min(boundary - now, 2 ** 31 - 1));
  }

  /**
   * Lockstep: the first frame at or after the turn's end. The page the group shows now comes on
   * glass in this frame when it is ready; otherwise the page on glass holds (never a blank frame)
   * while the due one is prepared, and joins mid-turn once ready.
   */
  private onLockstepBoundary(frameTime: number): void {
    this.frameWait = null;
    const loop = this.current;
    if (this.destroyed || !this.segment || !loop?.lockstep) return;
    const pending = this.pending;
    if (pending && !pending.lockstep && this.swapInPending(pending, frameTime)) return;
    const position = this.positionAt(loop, frameTime)!;
    const view = loop.views[position.segment.index]!;
    const same = position.segment.start === this.segment.start && view === this.live;
    if (!same && view.turns === position.turn && view.usable()) {
      this.turn = position.turn;
      return this.show(position.segment);
    }
    if (same) this.segment = position.segment;
    else {
      // On glass or off, the page is prepared for the group's turn (a barrier may have renumbered them).
      view.setTurn(position.turn);
      // A page that failed is tried again only after its retry delay, not on every look.
      if (view.retryDue(frameTime)) void view.warm(() => this.host.now());
      this.segment = { ...this.segment, end: frameTime + NOT_READY_RETRY_MS };
    }
    this.armBoundary();
  }

  /** The current page's time is up: the next page (or the pending manifest) comes on glass. */
  private onBoundary(): void {
    if (this.destroyed || !this.segment || !this.current) return;
    const now = this.host.now();
    const at = now - this.segment.end > LATE_TIMER_TOLERANCE_MS ? now : this.segment.end;
    const pending = this.pending;
    if (pending && !pending.lockstep && this.swapInPending(pending, at)) return;
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
      if (this.live) this.live.cutShort = true;
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
    if (view !== this.live || !this.segment || !this.current || this.current.lockstep) return;
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
    if (!isPlacementOf(placement, 'application') || placement.controller !== true) return;
    if (loop.lockstep) {
      const next = nextPageIndex(loop.sequence, this.segment.index, this.host.now(), loop.manifest.timezone);
      if (next >= 0) this.host.onLockstepAdvance?.(loop.lockstep.key, next);
      return;
    }
    this.endEarly();
  }

  private endEarly(): void {
    this.segment = endedEarly(this.segment!, this.host.now());
    this.schedule(this.segment.end - this.host.now(), () => this.onBoundary());
  }

  destroy(): void {
    this.destroyed = true;
    clearTimeout(this.timer);
    clearTimeout(this.upcomingTimer);
    clearTimeout(this.boundaryTimer);
    clearTimeout(this.transitionEnd);
    this.frameWait?.cancel();
    this.joinWait?.cancel();
    this.finishing = null;
    window.removeEventListener('resize', this.onResize);
    for (const loop of [this.current, this.pending]) if (loop) this.dispose(loop);
    this.current = this.pending = null;
    this.live = this.next = null;
  }
}

/**
 * Whether `next` replaces `current` at once rather than at a page boundary: a takeover starts or
 * ends (or another takeover replaces it) and what shows changes with it (a takeover of the playlist
 * already on glass changes nothing).
 */
export function cutsIn(current: RuntimeManifest, next: RuntimeManifest): boolean {
  return (current.takeover === true || next.takeover === true) && current.playlistId !== next.playlistId;
}

/** The lockstep state of a manifest of a sync group (null otherwise, or when no page may ever start). */
function lockstepOf(manifest: RuntimeManifest, sequence: SequencePage[]): Lockstep | null {
  const sync = manifest.sync;
  if (!sync) return null;
  const anchor = epochAnchor(sequence, Date.parse(sync.epoch), manifest.timezone);
  if (!anchor) return null;
  return { sync, key: timelineKey(manifest)!, anchor, before: null, cache: null, joinAt: null, barrierAt: null };
}
