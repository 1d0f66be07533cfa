// The soundtrack: one audio element above the page tree, playing the manifest's tracks in order and
// looping the list. Page changes never touch it; a manifest update with the same soundtrack (same
// media and bytes, `soundtrackKey`) keeps it playing and only takes the new URLs for later tracks.
// A track that fails (refused, a server error, unreachable and not cached) is tried again with
// backoff and jitter, and the next track after repeated failures: never a request loop against the
// server, never silence for good while a track can play.
import { backoffDelay } from '../../../sdk/sse/event-stream-client';
import { soundtrackKey, type RuntimeSoundtrack } from '../../../sdk/contract/manifest';

/** The track after `index` in a looping list of `count`. */
export function nextTrackIndex(index: number, count: number): number {
  return count <= 0 ? 0 : (index + 1) % count;
}

export interface SoundtrackRetry {
  /** The first retry waits between half of this and this; each failure in a row doubles it. */
  initialMs: number;
  maxMs: number;
  /** Failures in a row of one track before the next track is tried. */
  attemptsPerTrack: number;
}

/** A failing soundtrack asks the server at most about once a minute once it has failed a few times. */
export const SOUNDTRACK_RETRY: SoundtrackRetry = { initialMs: 2_000, maxMs: 60_000, attemptsPerTrack: 3 };

export class SoundtrackPlayer {
  readonly element: HTMLAudioElement;
  private readonly retry: SoundtrackRetry;
  private soundtrack: RuntimeSoundtrack | undefined;
  private key = '';
  private index = 0;
  /** Failures in a row, whatever the track (drives the backoff); a track that plays resets it. */
  private failures = 0;
  /** Failures in a row of the current track. */
  private trackFailures = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(parent: HTMLElement, retry: Partial<SoundtrackRetry> = {}) {
    this.retry = { ...SOUNDTRACK_RETRY, ...retry };
    this.element = document.createElement('audio');
    this.element.className = 'soundtrack';
    this.element.preload = 'auto';
    this.element.addEventListener('ended', this.onEnded);
    this.element.addEventListener('error', this.onError);
    this.element.addEventListener('playing', this.onPlaying);
    parent.append(this.element);
  }

  get currentKey(): string {
    return this.key;
  }

  /** Called when a manifest goes on glass. */
  set(soundtrack: RuntimeSoundtrack | undefined): void {
    const key = soundtrackKey(soundtrack);
    this.soundtrack = soundtrack;
    if (key === this.key) return; // unchanged: keep playing where it is (a pending retry takes the new URLs)
    this.key = key;
    this.index = 0;
    this.failures = this.trackFailures = 0;
    clearTimeout(this.retryTimer);
    if (!soundtrack) {
      this.element.pause();
      this.element.removeAttribute('src');
      this.element.load();
      return;
    }
    this.playCurrent();
  }

  /** Loads and plays the current track (assigning `src` runs the load algorithm again, even for the same URL). */
  private playCurrent(): void {
    const track = this.soundtrack?.tracks[this.index];
    if (!track) return;
    this.element.src = track.src;
    this.element.dataset.mediaId = track.mediaId;
    void this.element.play().catch(() => undefined);
  }

  private readonly onPlaying = () => {
    this.failures = 0;
    this.trackFailures = 0;
  };

  private readonly onEnded = () => {
    if (!this.soundtrack) return;
    const count = this.soundtrack.tracks.length;
    if (count === 1) {
      // One track: start it over without reloading it.
      this.element.currentTime = 0;
      void this.element.play().catch(() => undefined);
      return;
    }
    this.index = nextTrackIndex(this.index, count);
    this.playCurrent();
  };

  /** The track failed: the same one again after a backoff, or the next after repeated failures (never sooner). */
  private readonly onError = () => {
    if (!this.soundtrack || !this.element.getAttribute('src')) return;
    this.failures++;
    this.trackFailures++;
    if (this.trackFailures >= this.retry.attemptsPerTrack) {
      this.index = nextTrackIndex(this.index, this.soundtrack.tracks.length);
      this.trackFailures = 0;
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(
      () => this.playCurrent(),
      backoffDelay(this.failures - 1, this.retry.initialMs, this.retry.maxMs),
    );
  };

  /** Autoplay may need a gesture on some browsers; signage browsers allow it (kiosk flags). */
  resume(): void {
    if (this.soundtrack && this.element.paused) void this.element.play().catch(() => undefined);
  }

  destroy(): void {
    clearTimeout(this.retryTimer);
    this.element.removeEventListener('ended', this.onEnded);
    this.element.removeEventListener('error', this.onError);
    this.element.removeEventListener('playing', this.onPlaying);
    this.element.pause();
    this.element.removeAttribute('src');
    this.element.load();
    this.element.remove();
  }
}
