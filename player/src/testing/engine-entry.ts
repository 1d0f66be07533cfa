// Entry of the bundle the player's browser tests load: the playback engine and the soundtrack on a
// stage, a playback clock the test can shift (so a rule boundary or a DST change is seconds away),
// a fake launch route, and a sampler that records what is on glass every animation frame.
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import type { ShowingFacts } from '../offline/playback-queue';
import { PlaybackEngine } from '../playback/playback-engine';
import { SoundtrackPlayer, type SoundtrackRetry } from '../soundtrack/soundtrack-player';

/** The playback clock: real time running from a chosen instant; `shift` moves it (a clock correction). */
export class TestClock {
  private offset: number;

  constructor(start: number) {
    this.offset = start - performance.now();
  }

  now(): number {
    return this.offset + performance.now();
  }

  shift(ms: number): void {
    this.offset += ms;
  }
}

export interface Sample {
  /** The playback clock at the frame. */
  t: number;
  /** The playback clock at the frame's own timestamp (what "the first frame at or after T" is judged by). */
  frame: number;
  /** The live page on top (the incoming one during a transition), or null. */
  page: string | null;
  /** The label (`labelOf`) of the topmost visible element of each placement, by placement id. */
  shown: Record<string, string | null>;
  /** Every topmost visible element has something to paint (an image decoded, a video frame, a loaded frame). */
  painted: boolean;
  /** The current time of each placement's topmost video. */
  videoTime: Record<string, number>;
  /** The playback rate of each placement's topmost video. */
  videoRate: Record<string, number>;
}

export interface Records {
  activated: string[];
  launches: string[];
  advances: string[];
  logs: string[];
  /** Lockstep advances the engine handed to its host: `<timeline> <page index>`. */
  lockstepAdvances: string[];
  /** Proof of play: each item the engine said came on glass, and how it ended (null while on glass). */
  showings: (ShowingFacts & { endedAt: number | null; outcome: string | null })[];
}

/** A page came on glass: which, and the playback clock of the animation frame that showed it. */
export interface PageChange {
  page: string;
  frame: number;
}

const byZ = (el: HTMLElement) => Number(el.style.zIndex || 0);

function topmostChild(placement: HTMLElement): HTMLElement | null {
  const visible = [...placement.children].filter((c): c is HTMLElement => {
    if (!(c instanceof HTMLElement) || c.hidden) return false;
    const style = getComputedStyle(c);
    return style.display !== 'none' && style.visibility !== 'hidden' && style.opacity !== '0';
  });
  // Paint order: z-index, then document order (a stable sort keeps document order among equals).
  return visible.sort((a, b) => byZ(a) - byZ(b)).at(-1) ?? null;
}

function paints(el: HTMLElement): boolean {
  if (el instanceof HTMLImageElement) return el.complete && el.naturalWidth > 0;
  if (el instanceof HTMLVideoElement) return el.readyState >= HTMLMediaElement.HAVE_CURRENT_DATA;
  if (el instanceof HTMLIFrameElement) return el.getAttribute('src') !== null;
  return false;
}

/** A media element's media id; an application frame's launch number (`launch:<n>`, from the fake launch URL). */
function labelOf(el: HTMLElement): string {
  if (el.dataset.mediaId) return el.dataset.mediaId;
  const src = el.getAttribute('src');
  const launch = src ? new URL(src, location.href).searchParams.get('launch') : null;
  return launch ? `launch:${launch}` : el.tagName.toLowerCase();
}

function livePage(stage: HTMLElement): HTMLElement | undefined {
  return [...stage.querySelectorAll<HTMLElement>('.page[data-state="live"]')].sort((a, b) => byZ(a) - byZ(b)).at(-1);
}

function sampleStage(stage: HTMLElement, t: number, frame: number): Sample {
  const live = livePage(stage);
  const sample: Sample = {
    t,
    frame,
    page: live?.dataset.pageId ?? null,
    shown: {},
    painted: live !== undefined,
    videoTime: {},
    videoRate: {},
  };
  for (const placement of live?.querySelectorAll<HTMLElement>('.placement') ?? []) {
    const top = topmostChild(placement);
    sample.shown[placement.dataset.placementId!] = top ? labelOf(top) : null;
    if (!top || !paints(top)) sample.painted = false;
    if (top instanceof HTMLVideoElement) {
      sample.videoTime[placement.dataset.placementId!] = top.currentTime;
      sample.videoRate[placement.dataset.placementId!] = top.playbackRate;
    }
  }
  return sample;
}

export interface Mounted {
  clock: TestClock;
  engine: PlaybackEngine;
  stage: HTMLElement;
  records: Records;
  samples: Sample[];
  /** Every page that came on glass, with its frame (seen as the DOM changed, within that frame). */
  changes: PageChange[];
  /**
   * Every page element that came on glass, with its frame and what its placements show: unlike
   * `changes`, also the same page of another loop (a new revision joining on the page on glass).
   */
  swaps: (PageChange & { shown: Sample['shown'] })[];
}

/** The playback clock at the current animation frame's timestamp (inside a frame callback, or a microtask after one). */
function frameTime(clock: TestClock, timestamp = Number(document.timeline.currentTime)): number {
  return clock.now() - (performance.now() - timestamp);
}

/**
 * Mounts an engine on a fresh stage, playing on a clock that starts at `start` (`'wall'`: the
 * browser's own time, the same in every page of the test's browser: lockstep members).
 */
export function mountEngine(options: {
  start: number | 'wall';
  releaseOrigin: string;
  /** The release page launches open (default the fixture's app.html, which speaks the bridge). */
  launchPath?: string;
}): Mounted {
  const stage = document.createElement('div');
  stage.className = 'stage';
  document.body.append(stage);
  const clock = new TestClock(options.start === 'wall' ? performance.timeOrigin + performance.now() : options.start);
  const records: Records = {
    activated: [],
    launches: [],
    advances: [],
    logs: [],
    lockstepAdvances: [],
    showings: [],
  };
  const samples: Sample[] = [];
  const changes: PageChange[] = [];
  const swaps: Mounted['swaps'] = [];
  let shown: HTMLElement | undefined;
  new MutationObserver(() => {
    const live = livePage(stage);
    const page = live?.dataset.pageId;
    if (live && page && live !== shown) {
      const frame = frameTime(clock);
      if (page !== shown?.dataset.pageId) changes.push({ page, frame });
      swaps.push({ page, frame, shown: sampleStage(stage, clock.now(), frame).shown });
    }
    shown = live;
  }).observe(stage, { subtree: true, attributes: true, attributeFilter: ['data-state', 'style'] });
  const engine = new PlaybackEngine(stage, {
    now: () => clock.now(),
    runtimeOrigin: location.origin,
    paired: true,
    screenId: 'scr_test',
    launch: async (launchUrl) => {
      records.launches.push(launchUrl);
      return {
        launch_url: `${options.releaseOrigin}${options.launchPath ?? '/app.html'}?launch=${records.launches.length}`,
      };
    },
    onActivated: (manifest: RuntimeManifest, derived: boolean) =>
      records.activated.push(derived ? `${manifest.manifestRevision} derived` : manifest.manifestRevision),
    onApplicationEvent: (placementId, code) => records.logs.push(`event ${placementId} ${code}`),
    log: (message) => records.logs.push(message),
    onLockstepAdvance: (timeline, pageIndex) => records.lockstepAdvances.push(`${timeline} ${pageIndex}`),
    showing: (facts) => {
      const record = { ...facts, endedAt: null as number | null, outcome: null as string | null };
      records.showings.push(record);
      return {
        end: (at, outcome) => {
          record.endedAt = at;
          record.outcome = outcome;
        },
      };
    },
  });
  const tick = (timestamp: number) => {
    if (!stage.isConnected) return;
    samples.push(sampleStage(stage, clock.now(), frameTime(clock, timestamp)));
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return { clock, engine, stage, records, samples, changes, swaps };
}

/** A soundtrack element on the page, with the retry timings the test chooses. */
export function mountSoundtrack(retry?: Partial<SoundtrackRetry>): SoundtrackPlayer {
  return new SoundtrackPlayer(document.body, retry);
}
