// One view per placement, built once with its page and reused on every turn: images and videos
// (one element per resolved item), iframes, and application frames behind the SDK bridge. A view
// warms before its page's transition (decode, buffer, launch and handshake) and reports whether it
// can show; heavy resources (video decoders, third-party frames) are released when it cools.
import { prepareApplicationFrame, runtimeKvFetch, ApplicationFrameBridge } from '../../../sdk/bridge/parent';
import {
  isPlacementOf,
  kindOfPlacement,
  type RuntimeApplicationPlacement,
  type RuntimeIframePlacement,
  type RuntimeImagePlacement,
  type RuntimePage,
  type RuntimePlacement,
  type RuntimeVideoPlacement,
} from '../../../sdk/contract/manifest';
import { rotationIndex } from '../../../sdk/lockstep/sequencer';
import type { ShowingOutcome } from '../../../sdk/contract/playback';
import type { ShowingFacts, ShowingHandle } from '../offline/playback-queue';
import { TimeoutError, waitFor, withTimeout } from './waits';

/** An image must decode within this, a video buffer enough to play through. */
export const MEDIA_READY_TIMEOUT_MS = 20_000;
/** A third-party site must answer a reachability probe within this. */
export const IFRAME_PROBE_TIMEOUT_MS = 8_000;
export const IFRAME_LOAD_TIMEOUT_MS = 15_000;
/** Launch ticket + frame load + bridge handshake (the bridge's own handshake bound is 10 s). */
export const APPLICATION_READY_TIMEOUT_MS = 15_000;
/**
 * An application frame is relaunched (a new ticket, so a new release grant) once it is this old:
 * half the release grant's 24 h lifetime (server/release-host/release-grant-cookie.ts), so even a
 * page that stays up for hours is relaunched at one of its turns before its frame's grant lapses.
 */
export const APPLICATION_RELAUNCH_AFTER_MS = 12 * 3600_000;
/** A relaunch that failed is tried again after this long; the frame on glass plays on meanwhile. */
export const APPLICATION_RELAUNCH_RETRY_MS = 30_000;
const HANDSHAKE_POLL_MS = 50;
/**
 * How long a loaded release document has to answer the bridge's handshake before it plays without
 * one: a web app that does not include the SDK is shown as any page is (no KV, no page.advance).
 */
export const APPLICATION_BRIDGE_GRACE_MS = 4_000;

export type WarmResult = 'ready' | 'unavailable';

/** A turn's instants on the playback clock: its transition starts at `start`, the page fills the viewport at `fill`. */
export interface Turn {
  start: number;
  fill: number;
}

/** Lockstep videos are looked at this often, and their drift from the group's timeline corrected. */
export const VIDEO_CORRECTION_INTERVAL_MS = 200;
/** Drift below this is left alone: a quarter of a frame at 60 Hz, about what reading the position costs. */
export const VIDEO_DRIFT_DEADBAND_S = 0.004;
/** Drift beyond this is seeked away; below it the playback rate is nudged (5 % would need seconds). */
export const VIDEO_SEEK_THRESHOLD_S = 0.25;
/** A nudge moves the playback rate at most this far from 1: too little to see. */
export const VIDEO_MAX_RATE_DELTA = 0.05;
/** A nudge aims to absorb the drift over this long. */
const VIDEO_CORRECTION_HORIZON_S = 1;

export interface PlacementHost {
  /** The playback clock (server-corrected; the group's clock in lockstep). */
  now(): number;
  /** The page plays in lockstep with its sync group: videos follow the group's timeline. */
  lockstep(): boolean;
  runtimeOrigin: string;
  paired: boolean;
  screenId: string;
  launch(launchUrl: string): Promise<{ launch_url: string }>;
  viewport(): { width: number; height: number };
  /** The content generation of the manifest playing (a new one means new grants: applications relaunch). */
  contentGeneration(): number;
  /** The controlling application of `view` asked for the next page (the engine checks that its page is on glass). */
  onApplicationAdvance(view: PlacementView): void;
  onApplicationEvent(placementId: string, code: string): void;
  /** Proof of play: an item came on glass (the engine adds the manifest revision); end the handle when it leaves. */
  showing?(facts: Omit<ShowingFacts, 'manifestRevision'>): ShowingHandle;
  log(message: string): void;
}

export interface PlacementView {
  readonly element: HTMLElement;
  readonly placement: RuntimePlacement;
  /**
   * Gets the page's `turn`th turn (0-based) ready to show: its item decoded or buffered. The page
   * may be on glass meanwhile (a page that comes round again), so nothing visible changes here.
   * Rejects when the turn cannot show.
   */
  prepare(turn: number, signal: AbortSignal): Promise<WarmResult>;
  /**
   * The `turn`th turn begins: show its first item. `segment.fill` is when the page fills the
   * viewport on the playback clock (an image sequence steps from there; a video plays from
   * `segment.start`); `onEnd` marks the media end of a media_end page.
   */
  start(turn: number, segment: Turn, onEnd: () => void): void;
  /**
   * The turn ended (the page left glass, or a new turn of it begins): `interrupted` when the page
   * was cut short (a visibility rule ended it, the player stopped), else `complete`.
   */
  stop(outcome?: ShowingOutcome): void;
  /** Release what costs while off glass (decoders, third-party frames). */
  cool(): void;
  /** The player's viewport changed size (an application's frame hears it through its bridge). */
  resized?(viewport: { width: number; height: number }): void;
  /** A refreshed manifest of the same revision (capability handles renewed); true when the view must be prepared again. */
  refresh(placement: RuntimePlacement): boolean;
  destroy(): void;
}

function wrapper(placement: RuntimePlacement, zIndex: number): HTMLElement {
  const el = document.createElement('div');
  el.className = 'placement';
  el.dataset.placementId = placement.id;
  el.dataset.kind = placement.content.type;
  const { x, y, width, height } = placement.rect;
  el.style.cssText = `left:${x}px;top:${y}px;width:${width}px;height:${height}px;z-index:${zIndex}`;
  return el;
}

/** Proof of play for one placement: the item on glass now, begun and ended on the playback clock. */
class OnGlass {
  private handle: ShowingHandle | null = null;

  constructor(
    private readonly host: PlacementHost,
    private readonly page: RuntimePage,
    private readonly placementId: string,
  ) {}

  get showing(): boolean {
    return this.handle !== null;
  }

  /** A new item comes on glass (ending the one before it, complete). */
  begin(content: { mediaId: string } | { applicationId: string }): void {
    this.end('complete');
    this.handle =
      this.host.showing?.({
        pageId: this.page.id,
        ...(this.page.slot ? { slotKey: this.page.slot.key } : {}),
        placementId: this.placementId,
        ...content,
        startedAt: this.host.now(),
      }) ?? null;
  }

  end(outcome: ShowingOutcome): void {
    this.handle?.end(this.host.now(), outcome);
    this.handle = null;
  }
}

/** The items a turn shows: all of a sequence in order, or the one-at-a-time selector's `turn mod count`. */
function itemsOfTurn(turn: number, count: number, sequence: boolean): number[] {
  return sequence ? Array.from({ length: count }, (_, i) => i) : [rotationIndex(turn, count)];
}

/**
 * Images: one <img> per item; a one-at-a-time selector shows the turn's item, a media_end sequence
 * shows each for dwell_ms, stepping from the fill on the playback clock (so a late timer or a busy
 * main thread never drifts the sequence: each step is recomputed from the clock).
 */
class ImageView implements PlacementView {
  readonly element: HTMLElement;
  private readonly images: HTMLImageElement[];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The item counted as on glass this turn (null: none yet). */
  private counted: number | null = null;

  constructor(
    readonly placement: RuntimeImagePlacement,
    zIndex: number,
    private readonly sequence: boolean,
    private readonly host: PlacementHost,
    private readonly glass: OnGlass,
  ) {
    this.element = wrapper(placement, zIndex);
    this.images = placement.content.items.map((item) => {
      const img = document.createElement('img');
      img.alt = placement.content.alt ?? '';
      img.decoding = 'async';
      img.draggable = false;
      img.style.objectFit = placement.contentFit;
      img.dataset.mediaId = item.mediaId;
      img.hidden = true;
      this.element.append(img);
      return img;
    });
  }

  async prepare(turn: number, signal: AbortSignal): Promise<WarmResult> {
    const items = this.placement.content.items;
    await Promise.all(
      itemsOfTurn(turn, items.length, this.sequence).map(async (i) => {
        const img = this.images[i]!;
        // Never loaded, or failed (a broken image fires nothing again): fetch it (anew).
        if (!img.getAttribute('src') || (img.complete && img.naturalWidth === 0)) img.src = items[i]!.src;
        await waitFor(img, {
          ready: () => img.complete && img.naturalWidth > 0,
          ok: ['load'],
          fail: ['error'],
          ms: MEDIA_READY_TIMEOUT_MS,
          what: `image ${items[i]!.mediaId}`,
          signal,
        });
        await withTimeout(img.decode(), MEDIA_READY_TIMEOUT_MS, 'image decode');
      }),
    );
    return 'ready';
  }

  private show(index: number): void {
    // One task: the browser paints the swap in one frame, never an empty placement between.
    this.images.forEach((img, i) => (img.hidden = i !== index));
    if (this.counted === index) return;
    this.counted = index;
    this.glass.begin({ mediaId: this.placement.content.items[index]!.mediaId });
  }

  start(turn: number, segment: Turn, onEnd: () => void): void {
    this.stop();
    const fill = segment.fill;
    const shown = itemsOfTurn(turn, this.images.length, this.sequence);
    const dwell = this.placement.content.dwellMs;
    if (dwell === undefined) return this.show(shown[0]!);
    // The step at any instant is a function of the fill and the clock (during the transition: the first).
    const tick = () => {
      const now = this.host.now();
      const step = Math.max(0, Math.floor((now - fill) / dwell));
      if (step >= shown.length) {
        this.show(shown.at(-1)!);
        return onEnd();
      }
      this.show(shown[step]!);
      this.timer = setTimeout(tick, fill + (step + 1) * dwell - now);
    };
    tick();
  }

  stop(outcome: ShowingOutcome = 'complete'): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.glass.end(outcome);
    this.counted = null;
  }

  cool(): void {}

  refresh(): boolean {
    return false;
  }

  destroy(): void {
    this.stop('interrupted');
    for (const img of this.images) img.removeAttribute('src');
    this.element.remove();
  }
}

/**
 * Videos: muted, inline, buffered before the page shows; decoders are released when the page cools.
 * The clip playing is raised above the others, so a new clip (or the first clip of the next turn)
 * covers the one before it in the same frame; the one before is hidden a frame later.
 *
 * In lockstep each clip is due at an instant of the group's timeline (the first at the turn's
 * start, each next one when the one before it is due to end), so its position at any instant is
 * known: a member that joins late starts mid-clip, and drift from that position is corrected
 * continuously, by nudging the playback rate when small and by seeking when large.
 */
class VideoView implements PlacementView {
  readonly element: HTMLElement;
  private readonly videos: HTMLVideoElement[];
  private order: number[] = [];
  private step = 0;
  /** The clip on glass (its last frame stays up after it ends, until another covers it). */
  private current: HTMLVideoElement | null = null;
  private onEnd: (() => void) | null = null;
  private live = false;
  /** Lockstep: when the clip on glass is due at its first frame, on the playback clock. */
  private clipDueAt = 0;
  private correction: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly placement: RuntimeVideoPlacement,
    zIndex: number,
    private readonly sequence: boolean,
    private readonly host: PlacementHost,
    private readonly glass: OnGlass,
  ) {
    this.element = wrapper(placement, zIndex);
    this.videos = placement.content.items.map((item) => {
      const video = document.createElement('video');
      video.muted = true;
      video.defaultMuted = true;
      video.playsInline = true;
      video.preload = 'auto';
      video.loop = placement.content.loop && !sequence;
      video.disablePictureInPicture = true;
      video.style.objectFit = placement.contentFit;
      video.dataset.mediaId = item.mediaId;
      video.hidden = true;
      video.addEventListener('ended', this.onEnded);
      video.addEventListener('error', this.onError);
      this.element.append(video);
      return video;
    });
  }

  private load(i: number, signal?: AbortSignal): Promise<void> {
    const video = this.videos[i]!;
    const item = this.placement.content.items[i]!;
    // Never loaded, or failed (a failed element stays so, whatever its page does): load it (anew).
    if (!video.getAttribute('src') || video.error) {
      video.src = item.src;
      video.load();
    }
    return waitFor(video, {
      ready: () =>
        video.readyState >= HTMLMediaElement.HAVE_ENOUGH_DATA ||
        (video.readyState >= HTMLMediaElement.HAVE_FUTURE_DATA &&
          video.buffered.length > 0 &&
          video.buffered.end(0) >= video.duration - 0.1),
      ok: ['canplaythrough', 'canplay', 'progress', 'loadeddata'],
      fail: ['error'],
      ms: MEDIA_READY_TIMEOUT_MS,
      what: `video ${item.mediaId}`,
      signal,
    });
  }

  async prepare(turn: number, signal: AbortSignal): Promise<WarmResult> {
    const first = itemsOfTurn(turn, this.videos.length, this.sequence)[0]!;
    await this.load(first, signal);
    // Rewind it now unless it is the clip on glass (it then restarts at the boundary, its frame up meanwhile).
    const video = this.videos[first]!;
    if (video !== this.current && video.currentTime !== 0) video.currentTime = 0;
    return 'ready';
  }

  start(turn: number, segment: Turn, onEnd: () => void): void {
    this.order = itemsOfTurn(turn, this.videos.length, this.sequence);
    this.onEnd = onEnd;
    this.live = true;
    this.step = 0;
    if (!this.host.lockstep()) return this.play(this.order[0]!, true);
    // Joining a turn under way: skip the clips (of known length) that are over already.
    this.clipDueAt = segment.start;
    const now = this.host.now();
    for (;;) {
      const length = this.videos[this.order[this.step]!]!.duration * 1000;
      const next = this.order[this.step + 1];
      if (next === undefined || !Number.isFinite(length) || now < this.clipDueAt + length) break;
      this.clipDueAt += length;
      this.step++;
    }
    this.play(this.order[this.step]!, false);
    clearInterval(this.correction);
    this.correction = setInterval(() => this.correct(), VIDEO_CORRECTION_INTERVAL_MS);
  }

  /** Lockstep: where the clip on glass should be now (seconds), or null once it is due to have ended. */
  private expectedTime(video: HTMLVideoElement): number | null {
    const elapsed = Math.max(0, (this.host.now() - this.clipDueAt) / 1000);
    const length = video.duration;
    if (!Number.isFinite(length) || length <= 0) return elapsed;
    if (video.loop) return elapsed % length;
    return elapsed < length ? elapsed : null;
  }

  /** Lockstep: moves the clip on glass toward the group's position (a seek, or a playback-rate nudge). */
  private correct(): void {
    const video = this.current;
    if (!this.live || !video || video.seeking || video.readyState < HTMLMediaElement.HAVE_METADATA) return;
    const expected = this.expectedTime(video);
    if (expected === null) {
      video.playbackRate = 1;
      return;
    }
    let drift = video.currentTime - expected;
    // A looping clip wraps: 0.1 s after its end is 0.1 s into its start.
    const length = video.duration;
    if (video.loop && Number.isFinite(length) && length > 0) {
      if (drift > length / 2) drift -= length;
      else if (drift < -length / 2) drift += length;
    }
    if (Math.abs(drift) > VIDEO_SEEK_THRESHOLD_S) {
      video.playbackRate = 1;
      video.currentTime = expected;
    } else if (Math.abs(drift) > VIDEO_DRIFT_DEADBAND_S) {
      const nudge = Math.max(-VIDEO_MAX_RATE_DELTA, Math.min(VIDEO_MAX_RATE_DELTA, drift / VIDEO_CORRECTION_HORIZON_S));
      video.playbackRate = 1 - nudge;
    } else {
      video.playbackRate = 1;
    }
    if (video.paused && !video.ended) void video.play().catch(() => undefined);
  }

  private play(i: number, rewind: boolean): void {
    const video = this.videos[i]!;
    const previous = this.current;
    if (rewind && video.currentTime !== 0) video.currentTime = 0;
    if (this.host.lockstep()) {
      const expected = this.expectedTime(video) ?? video.duration;
      if (Math.abs(video.currentTime - expected) > VIDEO_DRIFT_DEADBAND_S) video.currentTime = expected;
      video.playbackRate = 1;
    }
    video.style.zIndex = '1';
    video.hidden = false;
    this.current = video;
    this.glass.begin({ mediaId: this.placement.content.items[i]!.mediaId });
    void video.play().catch(() => undefined);
    if (previous && previous !== video) {
      previous.style.zIndex = '';
      // Keep the covered clip until the new one paints, then hide it; rewind a sequence's earlier
      // clip so the next turn starts it from its first frame.
      requestAnimationFrame(() => {
        if (this.current === previous) return;
        previous.hidden = true;
        previous.pause();
        if (previous.currentTime !== 0 && previous.getAttribute('src')) previous.currentTime = 0;
      });
    }
    // Buffer the next clip of a sequence while this one plays.
    const following = this.order[this.step + 1];
    if (following !== undefined) void this.load(following).catch(() => undefined);
  }

  private readonly onEnded = (event: Event) => {
    const ended = this.videos[this.order[this.step]!];
    if (!this.live || event.target !== ended) return;
    this.glass.end('complete');
    this.step++;
    const next = this.order[this.step];
    if (next === undefined) {
      this.onEnd?.();
      return;
    }
    // Lockstep: the next clip is due when this one was due to end, however late it really ended.
    if (Number.isFinite(ended.duration)) this.clipDueAt += ended.duration * 1000;
    this.play(next, true);
  };

  /** A clip that breaks while on glass counts as ended, so a media_end page moves on. */
  private readonly onError = (event: Event) => {
    if (!this.live || event.target !== this.videos[this.order[this.step]!]) return;
    this.glass.end('interrupted');
    this.onEnded(event);
  };

  stop(outcome: ShowingOutcome = 'complete'): void {
    // A clip cut off before its end (a page shorter than it) did not play whole; a looping one did its part.
    const cut = this.glass.showing && !this.placement.content.loop;
    this.glass.end(cut ? 'interrupted' : outcome);
    this.live = false;
    this.onEnd = null;
    clearInterval(this.correction);
    for (const video of this.videos) {
      video.pause();
      video.playbackRate = 1;
    }
  }

  cool(): void {
    for (const video of this.videos) {
      video.hidden = true;
      video.style.zIndex = '';
      if (!video.getAttribute('src')) continue;
      video.removeAttribute('src');
      video.load(); // drops the decoder and the buffered bytes
    }
    this.current = null;
  }

  refresh(): boolean {
    return false;
  }

  destroy(): void {
    this.stop('interrupted');
    this.cool();
    for (const video of this.videos) {
      video.removeEventListener('ended', this.onEnded);
      video.removeEventListener('error', this.onError);
    }
    this.element.remove();
  }
}

/**
 * Third-party sites. Cross-origin frames cannot tell us that they failed, so the site is probed
 * first (an opaque no-cors request settles only if the site answered); an unreachable site is
 * hidden rather than shown as the browser's error page, and the rest of the page plays.
 */
class IframeView implements PlacementView {
  readonly element: HTMLElement;
  private frame: HTMLIFrameElement | null = null;

  constructor(
    readonly placement: RuntimeIframePlacement,
    zIndex: number,
  ) {
    this.element = wrapper(placement, zIndex);
  }

  async prepare(_turn: number, signal: AbortSignal): Promise<WarmResult> {
    if (this.frame?.dataset.loaded === 'true') return 'ready';
    const src = this.placement.content.src;
    try {
      await withTimeout(
        fetch(src, {
          mode: 'no-cors',
          credentials: 'omit',
          cache: 'no-store',
          redirect: 'follow',
          referrerPolicy: 'no-referrer',
          signal,
        }),
        IFRAME_PROBE_TIMEOUT_MS,
        'iframe probe',
      );
    } catch {
      this.element.dataset.unavailable = 'true';
      this.releaseFrame();
      return 'unavailable';
    }
    const frame = this.frame ?? this.createFrame();
    if (frame.getAttribute('src') !== src) frame.src = src;
    await waitFor(frame, {
      ready: () => frame.dataset.loaded === 'true',
      ok: ['load'],
      ms: IFRAME_LOAD_TIMEOUT_MS,
      what: 'iframe load',
      signal,
    }).catch(() => undefined);
    delete this.element.dataset.unavailable;
    return 'ready';
  }

  private createFrame(): HTMLIFrameElement {
    const frame = document.createElement('iframe');
    frame.title = this.placement.content.title;
    // Scripts and the site's own storage, but no top navigation, popups, forms or powerful features.
    frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.setAttribute('allow', '');
    frame.setAttribute('loading', 'eager');
    frame.addEventListener('load', this.onLoad);
    this.frame = frame;
    this.element.append(frame);
    return frame;
  }

  private readonly onLoad = (event: Event) => {
    const frame = event.target as HTMLIFrameElement;
    if (frame.getAttribute('src')) frame.dataset.loaded = 'true';
  };

  private releaseFrame(): void {
    if (!this.frame) return;
    this.frame.removeEventListener('load', this.onLoad);
    this.frame.remove();
    this.frame = null;
  }

  start(): void {}
  stop(): void {}

  /** A site off glass keeps running scripts and timers: drop it, and load it afresh next turn. */
  cool(): void {
    this.releaseFrame();
  }

  refresh(): boolean {
    return false;
  }

  destroy(): void {
    this.releaseFrame();
    this.element.remove();
  }
}

interface LaunchedFrame {
  frame: HTMLIFrameElement;
  bridge: ApplicationFrameBridge;
  /** What its launch ticket was granted under: another grant or content generation means a relaunch. */
  grantId: string;
  contentGeneration: number;
  launchedAt: number;
  /** Launched: the release answered the bridge, or loaded and plays without one. */
  ready: boolean;
}

/**
 * An application placement: a launch ticket, then the release origin in a sandboxed frame (its own
 * origin, scripts and its grant cookie, no top navigation), spoken to through the SDK parent bridge.
 * The placement capability stays here and goes on runtime KV calls; the frame never sees it. The
 * frame stays loaded across turns (each turn is a new bridge activation); one that fails to launch
 * or load makes its page unavailable, so the loop moves on instead of showing a white box. A release
 * that loads and does not answer the bridge (an app without the SDK) plays without one after
 * APPLICATION_BRIDGE_GRACE_MS.
 *
 * The release host checks the frame's grant on every request, and the grant lapses (24 h) or is
 * revoked (a public-id rotation or credential revoke gives the manifest a new grant and content
 * generation). So a frame whose grant changed, or that is older than APPLICATION_RELAUNCH_AFTER_MS,
 * is relaunched: a new frame with a new ticket warms behind the one on glass (transparent) and
 * replaces it when the page's next turn starts; the old one goes a moment later, once the new one
 * has painted over it. Until the new frame is ready the old one keeps playing.
 */
class ApplicationView implements PlacementView {
  readonly element: HTMLElement;
  private current: LaunchedFrame | null = null;
  private replacement: LaunchedFrame | null = null;
  private relaunchFailedAt: number | null = null;
  private readonly lifetime = new AbortController();

  constructor(
    public placement: RuntimeApplicationPlacement,
    zIndex: number,
    private readonly page: RuntimePage,
    private readonly host: PlacementHost,
    private readonly glass: OnGlass,
  ) {
    this.element = wrapper(placement, zIndex);
  }

  /** The placement's box as the frame lays it out (canvas units are the frame's CSS pixels). */
  private get box(): { width: number; height: number } {
    return { width: this.placement.rect.width, height: this.placement.rect.height };
  }

  private get controlsAdvance(): boolean {
    return this.page.advance.mode === 'application' && this.placement.controller === true;
  }

  /** Whether `launched` must be replaced: its grant was replaced, or it is old enough that its grant is due to lapse. */
  private stale(launched: LaunchedFrame): boolean {
    return (
      launched.grantId !== this.placement.content.grantId ||
      launched.contentGeneration !== this.host.contentGeneration() ||
      this.host.now() - launched.launchedAt >= APPLICATION_RELAUNCH_AFTER_MS
    );
  }

  async prepare(_turn: number, signal: AbortSignal): Promise<WarmResult> {
    const current = this.current;
    if (current?.ready) {
      if (this.stale(current)) this.relaunchBehind();
      return 'ready';
    }
    if (current) this.discard(current);
    const launched = this.open(false);
    this.current = launched;
    try {
      await this.connect(launched, signal);
    } catch (error) {
      if (this.current === launched) this.current = null;
      this.discard(launched);
      throw error;
    }
    return 'ready';
  }

  /** A new frame behind the one on glass; it takes over at a turn start once connected. */
  private relaunchBehind(): void {
    if (this.replacement && !this.stale(this.replacement)) return;
    if (this.replacement) this.discard(this.replacement);
    this.replacement = null;
    if (this.relaunchFailedAt !== null && this.host.now() - this.relaunchFailedAt < APPLICATION_RELAUNCH_RETRY_MS)
      return;
    const launched = this.open(true);
    this.replacement = launched;
    this.connect(launched, this.lifetime.signal).catch((error: unknown) => {
      if (this.replacement !== launched) return;
      this.replacement = null;
      this.discard(launched);
      this.relaunchFailedAt = this.host.now();
      this.host.log(
        `application ${this.placement.content.applicationId}: relaunch failed, the frame on glass plays on: ${String(error)}`,
      );
    });
  }

  /** A frame and its bridge, added to the placement (transparent when it warms behind another). */
  private open(behind: boolean): LaunchedFrame {
    const content = this.placement.content;
    const frame = document.createElement('iframe');
    frame.title = `Application ${content.applicationId}`;
    prepareApplicationFrame(frame);
    // Transparent rather than hidden: a hidden cross-site frame may not render until shown.
    if (behind) frame.style.opacity = '0';
    const bridge = new ApplicationFrameBridge({
      frame,
      releaseOrigin: content.origin,
      placementId: this.placement.id,
      applicationId: content.applicationId,
      releaseId: content.releaseId,
      screenId: this.host.screenId,
      capabilities: { 'page.advance': this.controlsAdvance, 'kv.read': true, 'kv.write': this.host.paired },
      viewport: this.host.viewport(),
      placement: this.box,
      runtimeKv: runtimeKvFetch({
        runtimeOrigin: this.host.runtimeOrigin,
        capabilityHandle: () => this.placement.capabilityHandle,
      }),
      onAdvance: () => this.host.onApplicationAdvance(this),
      onEvent: (code) => this.host.onApplicationEvent(this.placement.id, code),
      onLog: (entry) =>
        this.host.log(`application ${content.applicationId} ${entry.level} ${entry.code}: ${entry.message}`),
    });
    this.element.append(frame);
    return {
      frame,
      bridge,
      grantId: content.grantId,
      contentGeneration: this.host.contentGeneration(),
      launchedAt: this.host.now(),
      ready: false,
    };
  }

  /** Launch ticket, frame load, bridge handshake, within APPLICATION_READY_TIMEOUT_MS. */
  private async connect(launched: LaunchedFrame, signal: AbortSignal): Promise<void> {
    const content = this.placement.content;
    let ticketed = false;
    await withTimeout(
      (async () => {
        const launch = await this.host.launch(content.launchUrl);
        if (new URL(launch.launch_url).origin !== new URL(content.origin).origin)
          throw new Error('the launch URL is not on the release origin');
        ticketed = true;
        launched.frame.src = launch.launch_url;
        // The bridge handshakes on every load of the frame; wait until the release answered, or
        // for a while after its document loaded (an app without the SDK never answers).
        let loadedAt: number | null = null;
        while (!launched.bridge.isConnected) {
          signal.throwIfAborted();
          if (this.current !== launched && this.replacement !== launched)
            throw new Error('the application frame was released');
          if (launched.bridge.handshakeBegun) loadedAt ??= performance.now();
          if (loadedAt !== null && performance.now() - loadedAt >= APPLICATION_BRIDGE_GRACE_MS) {
            this.host.log(
              `application ${content.applicationId}: its release did not answer the SDK bridge; it plays without one (no key/value, no page.advance)`,
            );
            break;
          }
          await new Promise((r) => setTimeout(r, HANDSHAKE_POLL_MS));
        }
        launched.ready = true;
      })(),
      APPLICATION_READY_TIMEOUT_MS,
      'application launch',
    ).catch((error: unknown) => {
      if (!(error instanceof TimeoutError)) throw error;
      // Where it was stuck, for the log.
      const stage = !ticketed
        ? 'the launch ticket'
        : launched.bridge.handshakeBegun
          ? "the release's handshake answer"
          : 'the frame loading';
      throw new TimeoutError(`application launch (waiting for ${stage})`, APPLICATION_READY_TIMEOUT_MS);
    });
  }

  start(): void {
    const replacement = this.replacement;
    if (replacement?.ready && !this.stale(replacement)) {
      const old = this.current;
      this.current = replacement;
      this.replacement = null;
      replacement.frame.style.opacity = '';
      if (old) {
        old.bridge.deactivate();
        // The new frame is on top: drop the old one once the new one has had a frame to paint.
        requestAnimationFrame(() => requestAnimationFrame(() => this.discard(old)));
      }
    }
    const bridge = this.current?.bridge;
    bridge?.setViewport(this.host.viewport(), this.box);
    bridge?.activate();
    if (this.current) this.glass.begin({ applicationId: this.placement.content.applicationId });
  }

  stop(outcome: ShowingOutcome = 'complete'): void {
    this.glass.end(outcome);
    this.current?.bridge.deactivate();
  }

  cool(): void {}

  resized(viewport: { width: number; height: number }): void {
    for (const launched of [this.current, this.replacement]) launched?.bridge.setViewport(viewport, this.box);
  }

  /** A refreshed manifest: new capability handles; a new grant or content generation means a relaunch. */
  refresh(placement: RuntimePlacement): boolean {
    if (isPlacementOf(placement, 'application')) this.placement = placement;
    return this.current !== null && this.stale(this.current);
  }

  private discard(launched: LaunchedFrame): void {
    launched.bridge.destroy();
    launched.frame.removeAttribute('src');
    launched.frame.remove();
  }

  destroy(): void {
    this.glass.end('interrupted');
    this.lifetime.abort();
    for (const launched of [this.current, this.replacement]) if (launched) this.discard(launched);
    this.current = this.replacement = null;
    this.element.remove();
  }
}

export function createPlacementView(
  placement: RuntimePlacement,
  zIndex: number,
  page: RuntimePage,
  host: PlacementHost,
): PlacementView {
  const sequence = page.advance.mode === 'media_end';
  const p = kindOfPlacement(placement);
  const glass = new OnGlass(host, page, placement.id);
  switch (p.kind) {
    case 'image':
      return new ImageView(p.placement, zIndex, sequence && !p.placement.content.oneAtATime, host, glass);
    case 'video':
      return new VideoView(p.placement, zIndex, sequence && !p.placement.content.oneAtATime, host, glass);
    case 'iframe':
      return new IframeView(p.placement, zIndex);
    case 'application':
      return new ApplicationView(p.placement, zIndex, page, host, glass);
  }
}
