// The soundtrack: one audio element above the page tree, playing the manifest's tracks in order and
// looping the list. Page changes never touch it; a manifest update with the same soundtrack (same
// media and bytes, `soundtrackKey`) keeps it playing and only takes the new URLs for later tracks.
import { soundtrackKey, type RuntimeSoundtrack } from '../../../sdk/contract/manifest';

/** The track after `index` in a looping list of `count`. */
export function nextTrackIndex(index: number, count: number): number {
  return count <= 0 ? 0 : (index + 1) % count;
}

export class SoundtrackPlayer {
  readonly element: HTMLAudioElement;
  private soundtrack: RuntimeSoundtrack | undefined;
  private key = '';
  private index = 0;

  constructor(parent: HTMLElement) {
    this.element = document.createElement('audio');
    this.element.className = 'soundtrack';
    this.element.preload = 'auto';
    this.element.addEventListener('ended', this.onEnded);
    this.element.addEventListener('error', this.onEnded);
    parent.append(this.element);
  }

  get currentKey(): string {
    return this.key;
  }

  /** Called when a manifest goes on glass. */
  set(soundtrack: RuntimeSoundtrack | undefined): void {
    const key = soundtrackKey(soundtrack);
    this.soundtrack = soundtrack;
    if (key === this.key) return; // unchanged: keep playing where it is
    this.key = key;
    this.index = 0;
    if (!soundtrack) {
      this.element.pause();
      this.element.removeAttribute('src');
      this.element.load();
      return;
    }
    this.playCurrent();
  }

  private playCurrent(): void {
    const track = this.soundtrack?.tracks[this.index];
    if (!track) return;
    this.element.src = track.src;
    this.element.dataset.mediaId = track.mediaId;
    void this.element.play().catch(() => undefined);
  }

  private readonly onEnded = () => {
    if (!this.soundtrack) return;
    const count = this.soundtrack.tracks.length;
    const next = nextTrackIndex(this.index, count);
    this.index = next;
    if (count === 1) {
      // One track: start it over without reloading it.
      this.element.currentTime = 0;
      void this.element.play().catch(() => undefined);
      return;
    }
    this.playCurrent();
  };

  /** Autoplay may need a gesture on some browsers; signage browsers allow it (kiosk flags). */
  resume(): void {
    if (this.soundtrack && this.element.paused) void this.element.play().catch(() => undefined);
  }

  destroy(): void {
    this.element.removeEventListener('ended', this.onEnded);
    this.element.removeEventListener('error', this.onEnded);
    this.element.pause();
    this.element.removeAttribute('src');
    this.element.load();
    this.element.remove();
  }
}
