// The player's life: open a runtime session (paired device, provisioning link, anonymous public
// URL, or pairing), fetch and validate the manifest, follow the runtime event stream, hand each new
// manifest to the engine, report activation, persist what is on glass for offline starts, and keep
// retrying with backoff and jitter while the runtime is unreachable. A manifest of a sync group
// also puts the playback clock on the server's (timed exchanges, slewed, never jumped on glass;
// in a kiosk, on its agent's, which follows the LAN lead), and carries the group's barriers: an
// application's advance goes to the runtime plane, the barrier comes back on the stream.
// Proof of play: what the engine puts on glass is queued (IndexedDB) and uploaded while paired.
import { backoffDelay, type EventStream } from '../../../sdk/sse/event-stream-client';
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import type { RuntimeSession } from '../../../sdk/contract/screens';
import { parseRuntimeEvent, type RuntimeEvent } from '../../../sdk/contract/event-types';
import { grantedPages, isPlacementOf, parseRuntimeManifest } from '../../../sdk/contract/manifest';
import type { PlayerConfig } from '../config/player-config';
import { forgetAllMedia, recordAndEvict } from '../offline/media-cache';
import type { MediaToFill } from '../offline/media-fill';
import { storableManifest, type PlayerDatabase } from '../offline/player-database';
import { MemoryShowingStore, PlaybackQueue, type ShowingFacts, type ShowingHandle } from '../offline/playback-queue';
import { PlaybackUploader } from './playback-uploader';
import { pairScreen } from '../pairing/pairing-flow';
import {
  estimateClockOffset,
  markReachable,
  markUnreachable,
  playbackNow,
  type PlayerStore,
} from '../state/player-store';
import { readActedReload, reloadRequestOf, shouldActOnReload, writeActedReload } from './reload-rule';
import { isDisplayOn, nextDisplaySwitch } from '../../../sdk/schedule/display-power';
import type { KioskHooks } from './kiosk-hooks';
import { ACTED_REBOOT_KEY, admitToast, dropStaleWaiting, shouldReboot, toastOf } from './screen-commands';
import { MarqueeProblem } from '../../../sdk/client/problem';
import { isUnreachable, ManifestRejected, RuntimeClient } from '../../../sdk/client/runtime';
import { MANIFEST_ACTIVATED } from '../../../sdk/contract/runtime';
import { ClockSync } from '../../../sdk/lockstep/clock-sync';
import { GlassClock } from '../../../sdk/lockstep/glass-clock';
import { type BarrierAnnouncement, BarrierBook } from '../../../sdk/lockstep/group-protocol';
import { timelineKey } from '../../../sdk/lockstep/timeline';
import type { ScreenSurface } from '../../../sdk/contract/screen-health';
import { abortableSleep } from '../../../sdk/abortable-sleep';
import type { CaptureRequest } from './glass-capture';

/** Refetch the manifest this long before its placement capabilities expire (they live five minutes). */
export const CAPABILITY_REFRESH_MARGIN_MS = 60_000;
/** Even without capabilities, look at the manifest this often (a missed event costs at most this). */
export const MANIFEST_POLL_MS = 10 * 60_000;
export const RETRY_INITIAL_MS = 1000;
export const RETRY_MAX_MS = 60_000;
/** A session whose stream lasted this long held: the next one after it opens without backoff. */
export const SESSION_HELD_MS = RETRY_MAX_MS;
const PROVISION_FRAGMENT = /^#provision=([A-Za-z0-9_-]{43})$/;
const PUBLIC_PATH = /^\/s\/([A-Za-z0-9_-]+)\/?$/;
const EXCHANGE_ID_KEY = 'marquee.player.exchange-id';
/**
 * Whether this device last held a paired session ('1') or an anonymous one or none ('0'): a player
 * started offline records proof of play only as a paired device (a viewer of a public URL never uploads).
 */
export const PAIRED_DEVICE_KEY = 'marquee.player.paired';
const NOT_COUNTED: ShowingHandle = { end: () => undefined };

export interface ControllerHost {
  config: PlayerConfig;
  store: PlayerStore;
  db: PlayerDatabase | null;
  location: Location;
  history: History;
  storage: Storage;
  reload(): void;
  log(message: string): void;
  /** The network (tests give a fake runtime). */
  fetch?: typeof fetch;
  /** Deadline of each runtime call (RUNTIME_CALL_TIMEOUT_MS). */
  callTimeoutMs?: number;
  /** What a kiosk shell offers (display power, reboot); a browser has none. */
  kiosk?: KioskHooks;
  /** What is on glass: a composed screenshot and the display surface (glass-capture.ts); tests may omit it. */
  glass?: {
    capture(request: CaptureRequest): Promise<Blob>;
    surface(): ScreenSurface;
  };
}

/** The player's build, told with its observation (kept equal to the package's version by a test). */
export const PLAYER_VERSION = '0.1.0';

/**
 * A schedule boundary in the manifest: fetch again this long after it, so the server (whose timer
 * fires at the boundary) has reminted; the stream's manifest_changed usually comes first.
 */
export const BOUNDARY_REFETCH_DELAY_MS = 1500;

/** When the manifest must be fetched again: before its first capability expires, or the poll interval. */
export function manifestRefreshDelay(manifest: RuntimeManifest, now: number): number {
  let earliest = now + MANIFEST_POLL_MS;
  for (const page of manifest.pages) {
    for (const placement of page.placements) {
      if (!isPlacementOf(placement, 'application')) continue;
      const expires = Date.parse(placement.capabilityExpiresAt);
      if (Number.isFinite(expires)) earliest = Math.min(earliest, expires - CAPABILITY_REFRESH_MARGIN_MS);
    }
  }
  if (manifest.nextBoundaryAt) {
    const boundary = Date.parse(manifest.nextBoundaryAt) + BOUNDARY_REFETCH_DELAY_MS;
    // A boundary is exact: it is not held to the 5 s floor that guards capability refreshes. One
    // already past (the server has not applied it yet) waits for the stream or the usual refresh.
    if (Number.isFinite(boundary) && boundary > now && boundary < earliest) return boundary - now;
  }
  return Math.max(5_000, earliest - now);
}

export class PlayerController {
  readonly client: RuntimeClient;
  private readonly stop = new AbortController();
  private events: EventStream | null = null;
  private etag: string | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private publicId: string | undefined;
  private failures = 0;
  /** Manifest fetches that failed in a row: the next is scheduled with backoff and jitter. */
  private manifestFailures = 0;
  private fetching: Promise<void> | null = null;
  /** A fetch was asked for while one was in flight: that one may have read the manifest before the change. */
  private fetchAgain = false;
  /** The issues of the manifest last rejected: the same one fetched again is not reported again. */
  private rejected: string | null = null;
  private reported = new Set<string>();
  /** The screen whose manifest and media this device holds (from disk or played since). */
  private heldScreenId: string | undefined;
  /** The server's clock on the device's monotonic one, kept by `clockSync` while a sync group plays. */
  private readonly glass = new GlassClock(() => performance.now(), Date.now() - performance.now());
  private clockSync: ClockSync | null = null;
  private readonly clockListeners = new Set<() => void>();
  private readonly barrierListeners = new Set<(barrier: BarrierAnnouncement) => void>();
  /**
   * Each timeline's last barrier handed on: the same one heard again (the answer, then the stream)
   * is not applied twice, and a late one of an old timeline does not stand in for the new one's.
   */
  private readonly barriers = new BarrierBook();
  private displayTimer: ReturnType<typeof setTimeout> | undefined;
  private toastTimer: ReturnType<typeof setTimeout> | undefined;
  /** Proof of play: showings written down as they start, uploaded while paired. */
  readonly proofOfPlay: PlaybackQueue;
  private readonly uploader: PlaybackUploader;

  constructor(private readonly host: ControllerHost) {
    this.client = new RuntimeClient({
      runtimeOrigin: host.config.runtimeOrigin,
      ...(host.fetch ? { fetch: host.fetch } : {}),
      ...(host.callTimeoutMs !== undefined ? { callTimeoutMs: host.callTimeoutMs } : {}),
      onServerDate: (server, local) => {
        const offset = estimateClockOffset(server, local);
        if (offset !== host.store.getState().clockOffsetMs) host.store.setState({ clockOffsetMs: offset });
      },
    });
    this.publicId = PUBLIC_PATH.exec(host.location.pathname)?.[1];
    this.proofOfPlay = new PlaybackQueue({
      store: host.db?.showings() ?? new MemoryShowingStore(),
      onError: (error) => host.log(`proof of play: ${String(error)}`),
    });
    this.uploader = new PlaybackUploader({
      queue: this.proofOfPlay,
      upload: (reports, signal) => this.client.reportPlayback(reports, signal),
      now: () => this.now(),
      canUpload: () => host.store.getState().session?.paired === true,
      reportDropped: (count) =>
        this.client.report({ severity: 'warning', code: 'playback.reports_dropped', context: { count } }),
      log: (message) => host.log(message),
    });
    // The display is judged in the manifest's time zone: a new manifest may bring another.
    host.store.subscribe((state, previous) => {
      if (state.manifest?.timezone !== previous.manifest?.timezone) this.judgeDisplay();
    });
  }

  /** The playback clock: the server's, synchronized when a sync group needed it, else from Date headers. */
  now(): number {
    return this.glass.synchronized ? this.glass.now() : playbackNow(this.host.store.getState());
  }

  /** Whether the playback clock is synchronized to the server's (lockstep), and within how many ms. */
  get clock(): { synchronized: boolean; uncertaintyMs: number } {
    return { synchronized: this.glass.synchronized, uncertaintyMs: this.glass.uncertainty };
  }

  /** Called whenever the playback clock steps (its first synchronization): lockstep re-judges where it is. */
  onClockStep(listener: () => void): () => void {
    this.clockListeners.add(listener);
    return () => this.clockListeners.delete(listener);
  }

  /** The group's barriers ("page P at instant T"), from the runtime stream or the answer to an advance. */
  onBarrier(listener: (barrier: BarrierAnnouncement) => void): () => void {
    this.barrierListeners.add(listener);
    return () => this.barrierListeners.delete(listener);
  }

  /**
   * Lockstep: the controlling application of the page on glass asked for page `pageIndex`. The
   * group's lead (the server, or a kiosk's LAN lead through its agent) makes it a barrier; the
   * page changes only when that barrier comes back, on every member alike.
   */
  async advanceGroup(timeline: string, pageIndex: number): Promise<void> {
    try {
      const { barrier } = await this.client.syncAdvance({ timeline, page_index: pageIndex }, this.stop.signal);
      if (barrier) this.barrier(barrier);
    } catch (error) {
      // Unreachable or refused: the page plays to its max_ms, as every member's does.
      this.host.log(`lockstep advance not sent: ${String(error)}`);
    }
  }

  /**
   * The last barrier of each timeline the player heard of (oldest first): the stage hands them to a
   * new engine, which starts each new loop of a timeline from that timeline's.
   */
  get latestBarriers(): BarrierAnnouncement[] {
    return this.barriers.all();
  }

  /** A member that starts (or reloads) after a barrier joins the timeline that barrier began. */
  private async catchUpBarrier(): Promise<void> {
    try {
      const { barrier } = await this.client.syncBarrier(this.stop.signal);
      if (barrier) this.barrier(barrier);
    } catch {
      // Unreachable: the stream brings the next one.
    }
  }

  private barrier(details: { timeline: string; page_index: number; at: string }): void {
    const at = Date.parse(details.at);
    if (!Number.isFinite(at)) return;
    const barrier: BarrierAnnouncement = { timeline: details.timeline, pageIndex: details.page_index, at };
    if (!this.barriers.offer(barrier)) return;
    for (const listener of this.barrierListeners) listener(barrier);
  }

  /**
   * In a kiosk: the agent's clock moved onto another reference (it joined its LAN group, or the
   * group's lead changed). What the estimator learnt goes; the glass clock slews onto the new one.
   */
  clockReferenceChanged(): void {
    this.clockSync?.referenceChanged({ step: false });
  }

  /** Timed exchanges with the server run while the manifest to play is a sync group's, and stop after. */
  private followClock(manifest: RuntimeManifest | null): void {
    if (!manifest?.sync) {
      this.clockSync?.stop();
      this.clockSync = null;
      return;
    }
    if (this.clockSync) return;
    this.clockSync = new ClockSync({
      exchange: async (signal) => {
        const stamps = await this.client.time(signal);
        return { receivedAt: stamps.received_at_ms, sentAt: stamps.sent_at_ms };
      },
      local: () => performance.now(),
      clock: this.glass,
      onSteer: (steering) => {
        if (steering === 'stepped') for (const listener of this.clockListeners) listener();
      },
    });
    this.clockSync.start();
  }

  async start(): Promise<void> {
    // The worker claims the page after the first manifest may have been fetched: tell it then.
    globalThis.navigator?.serviceWorker?.addEventListener('controllerchange', () => {
      const manifest = this.host.store.getState().manifest;
      if (manifest) askToCacheMedia(manifest);
    });
    // Showings a crash left on glass are closed before anything new starts.
    await this.proofOfPlay.recover();
    this.uploader.start();
    await this.playCachedManifest();
    void this.run();
  }

  /** An item came on glass (the engine's proof of play): queued on a paired device, else not counted. */
  showing(facts: ShowingFacts): ShowingHandle {
    if (this.host.storage.getItem(PAIRED_DEVICE_KEY) !== '1') return NOT_COUNTED;
    return this.proofOfPlay.begin(facts);
  }

  /** Plays the last activated manifest at once (a reboot without a server still shows content). */
  private async playCachedManifest(): Promise<void> {
    const stored = await this.host.db?.loadActiveManifest().catch(() => undefined);
    if (!stored) return;
    const parsed = parseRuntimeManifest(stored.manifest, this.host.config.contentOrigin);
    if (!parsed.ok) return;
    this.heldScreenId = parsed.manifest.screenId;
    this.etag = stored.etag;
    this.followClock(parsed.manifest);
    this.host.store.setState({ phase: 'playing', manifest: parsed.manifest });
  }

  private async run(): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        const session = await this.openSession();
        if (!session) return; // pairing took over, or the screen does not exist
        markReachable(this.host.store);
        // The stream opens at once (a slow or hung first manifest must not keep it shut); the
        // manifest comes meanwhile, and again whenever the stream (re)opens.
        void this.fetchManifest().catch(() => undefined);
        const opened = Date.now();
        try {
          await this.followEvents(session);
        } finally {
          // Only a session that held counts as a success: one whose stream is refused at once (a
          // proxy's page, a cookie the stream does not take) is retried with backoff like any failure.
          if (Date.now() - opened >= SESSION_HELD_MS) this.failures = 0;
        }
      } catch (error) {
        if (this.stop.signal.aborted) return;
        if (isUnreachable(error)) markUnreachable(this.host.store);
        else this.host.log(`runtime: ${String(error)}`);
      }
      await this.sleep(backoffDelay(this.failures++, RETRY_INITIAL_MS, RETRY_MAX_MS));
    }
  }

  /** Waits `ms`, or less when the player stops; leaves no listener behind (it runs again and again offline). */
  private sleep(ms: number): Promise<void> {
    return abortableSleep(ms, this.stop.signal);
  }

  /** A runtime session: provisioning link, paired device, anonymous public URL, or pairing. */
  private async openSession(): Promise<RuntimeSession | null> {
    const signal = this.stop.signal;
    const provision = PROVISION_FRAGMENT.exec(this.host.location.hash)?.[1];
    if (provision) {
      const exchangeId = this.host.storage.getItem(EXCHANGE_ID_KEY) ?? `xchg_${randomBase64Url(32)}`;
      this.host.storage.setItem(EXCHANGE_ID_KEY, exchangeId);
      try {
        await this.client.exchangeProvisioning(provision, exchangeId, signal);
      } catch (error) {
        if (!(error instanceof MarqueeProblem)) throw error;
        this.host.log(`provisioning link refused: ${error.code}`);
      }
      this.host.storage.removeItem(EXCHANGE_ID_KEY);
      this.host.history.replaceState(null, '', this.host.location.pathname);
    }
    try {
      return this.adopt(await this.client.deviceSession(this.publicId, signal));
    } catch (error) {
      if (!(error instanceof MarqueeProblem)) throw error;
      if (error.status === 409 && typeof error.document.public_url === 'string') {
        // This device belongs to another screen: go where it lives.
        this.publicId = PUBLIC_PATH.exec(new URL(error.document.public_url).pathname)?.[1];
        return this.adopt(await this.client.deviceSession(this.publicId, signal));
      }
      if (error.status !== 401 && error.status !== 403) throw error;
    }
    if (this.publicId) {
      try {
        return this.adopt(await this.client.anonymousSession(this.publicId, signal));
      } catch (error) {
        if (error instanceof MarqueeProblem && error.status === 404) {
          this.host.store.setState({ phase: 'unknown-screen', manifest: null });
          await this.forgetScreen();
          return null;
        }
        throw error;
      }
    }
    await this.pair();
    return this.adopt(await this.client.deviceSession(undefined, signal));
  }

  private async pair(): Promise<void> {
    // A device without a session forgets what an earlier pairing played.
    this.host.store.setState({ phase: 'pairing', manifest: null, session: null });
    this.host.storage.setItem(PAIRED_DEVICE_KEY, '0');
    await this.forgetScreen();
    markReachable(this.host.store);
    await pairScreen({
      client: this.client,
      signal: this.stop.signal,
      onCode: (code, expiresAt) => this.host.store.setState({ pairing: { code, expiresAt } }),
    });
    this.host.store.setState({ pairing: null });
  }

  private adopt(session: RuntimeSession): RuntimeSession {
    this.host.storage.setItem(PAIRED_DEVICE_KEY, session.paired ? '1' : '0');
    const path = new URL(session.public_url).pathname;
    if (this.publicId !== undefined && this.host.location.pathname !== path)
      this.host.history.replaceState(null, '', path);
    const phase = this.host.store.getState().phase;
    this.host.store.setState({
      session: { paired: session.paired, publicUrl: session.public_url, capabilities: session.capabilities },
      // The display state now: commands that expired while offline are not replayed, this is.
      ...(session.display ? { display: session.display } : {}),
      // Paired or opened: the stage takes over (its starting card until the manifest is on glass).
      ...(phase === 'booting' || phase === 'pairing' ? { phase: 'playing' as const } : {}),
    });
    this.judgeDisplay();
    // Back with a session: what was queued meanwhile goes up now.
    if (session.paired) this.uploader.nudge();
    this.sentSurface = null; // a new session: tell the surface again
    void this.observe();
    return session;
  }

  /** Answers a screenshot request with a composed still, unless it expired (a late delivery). */
  private async answerScreenshot(request: CaptureRequest & { capture_id: string; expires_at: string }): Promise<void> {
    const glass = this.host.glass;
    if (!glass || !this.host.store.getState().session?.paired) return;
    if (Date.parse(request.expires_at) <= this.now()) return;
    try {
      const image = await glass.capture(request);
      await this.client.screenshot({ captureId: request.capture_id, method: 'composed', image }, this.stop.signal);
    } catch (error) {
      // A later request replaced this one (409), or the capture failed: the request times out upstream.
      this.host.log(`screenshot ${request.capture_id} not sent: ${String(error)}`);
    }
  }

  private sentSurface: string | null = null;

  /** Tells the server the surface the player lays its canvas out on, when it changed (resize, session). */
  async observe(): Promise<void> {
    const glass = this.host.glass;
    if (!glass || !this.host.store.getState().session?.paired) return;
    const surface = glass.surface();
    const key = JSON.stringify(surface);
    if (key === this.sentSurface) return;
    this.sentSurface = key;
    try {
      await this.client.observation(
        { observed_at: new Date(this.now()).toISOString(), surfaces: [surface] },
        `browser/${PLAYER_VERSION}`,
        this.stop.signal,
      );
    } catch (error) {
      this.sentSurface = null; // told again on the next session or resize
      this.host.log(`observation not sent: ${String(error)}`);
    }
  }

  /**
   * Black glass (and panel power through the kiosk) while the display is off; judged again at the
   * schedule's next switch, not on an interval.
   */
  judgeDisplay(): void {
    clearTimeout(this.displayTimer);
    const state = this.host.store.getState();
    const now = this.now();
    const zone = state.manifest?.timezone;
    const on = isDisplayOn(state.display, now, zone);
    if (on !== state.displayOn) {
      this.host.store.setState({ displayOn: on });
      this.host.kiosk?.setDisplayPower?.(on);
    }
    const next = nextDisplaySwitch(state.display, now, zone);
    if (next !== null && !this.stop.signal.aborted)
      this.displayTimer = setTimeout(() => this.judgeDisplay(), Math.min(next - now + 50, 2 ** 31 - 1));
  }

  /** Shows the next toast for its duration; waiting ones that could not start in time are skipped. */
  private showToasts(): void {
    if (this.toastTimer !== undefined) return;
    const queue = dropStaleWaiting(this.host.store.getState().toasts, this.now());
    this.host.store.setState({ toasts: queue });
    const current = queue[0];
    if (!current) return;
    this.toastTimer = setTimeout(() => {
      this.toastTimer = undefined;
      this.host.store.setState({ toasts: this.host.store.getState().toasts.slice(1) });
      this.showToasts();
    }, current.durationMs);
  }

  /**
   * Fetches the manifest (once at a time); a fresh one goes to the engine. Asked again while a
   * fetch is in flight, it fetches once more after it: the change that prompted the second ask
   * may have landed after the first read (a missed change would wait for the next poll).
   */
  fetchManifest(): Promise<void> {
    if (this.fetching) {
      this.fetchAgain = true;
      return this.fetching;
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.fetchAgain = false;
          await this.doFetchManifest();
        } while (this.fetchAgain && !this.stop.signal.aborted);
      } finally {
        this.fetching = null;
      }
    };
    this.fetching = run();
    return this.fetching;
  }

  private async doFetchManifest(): Promise<void> {
    clearTimeout(this.refreshTimer);
    let failed = false;
    try {
      const result = await this.client.manifest(this.etag, this.host.config.contentOrigin, this.stop.signal);
      markReachable(this.host.store);
      const state = this.host.store.getState();
      if (result.status === 'fresh') {
        this.rejected = null;
        // Another screen than the one whose data this device holds (re-homed): drop that first.
        if (this.heldScreenId !== undefined && this.heldScreenId !== result.manifest.screenId)
          await this.forgetScreen();
        this.heldScreenId = result.manifest.screenId;
        this.etag = result.etag;
        askToCacheMedia(result.manifest);
        this.followClock(result.manifest);
        if (result.manifest.sync && !this.barriers.of(timelineKey(result.manifest))) void this.catchUpBarrier();
        this.host.store.setState({ phase: 'playing', manifest: result.manifest });
      } else if (state.phase !== 'playing') {
        this.host.store.setState({ phase: 'playing' });
      }
    } catch (error) {
      if (error instanceof MarqueeProblem && error.code === 'screen_archived') {
        this.host.store.setState({ phase: 'archived' });
      } else if (error instanceof ManifestRejected) {
        // Keep the last good manifest on glass; say why once (the same manifest comes at every poll).
        const issues = error.issues.slice(0, 5);
        const key = JSON.stringify(issues);
        if (key !== this.rejected) {
          this.rejected = key;
          this.host.log(error.message);
          void this.report('error', 'manifest.rejected', { issues });
        }
      } else {
        failed = true;
        if (isUnreachable(error)) markUnreachable(this.host.store);
        throw error;
      }
    } finally {
      if (!this.stop.signal.aborted) this.scheduleRefresh(failed);
    }
  }

  /**
   * The next manifest fetch: after a failure, with backoff and jitter (an outage costs a request a
   * minute at most, not one per 5 s for expired capabilities); otherwise before the capabilities
   * expire, judged on the server's clock (a device clock that is off would miss them or spin).
   */
  private scheduleRefresh(failed: boolean): void {
    clearTimeout(this.refreshTimer);
    let delay: number;
    if (failed) delay = backoffDelay(this.manifestFailures++, RETRY_INITIAL_MS, RETRY_MAX_MS);
    else {
      this.manifestFailures = 0;
      const manifest = this.host.store.getState().manifest;
      delay = manifest ? manifestRefreshDelay(manifest, this.now()) : MANIFEST_POLL_MS;
    }
    this.refreshTimer = setTimeout(() => void this.fetchManifest().catch(() => undefined), delay);
  }

  /** Follows the runtime stream until it fails for good (the session lapsed); transport errors retry inside. */
  private async followEvents(session: RuntimeSession): Promise<void> {
    this.events?.close();
    const stream = this.client.events({
      cursor: session.event_cursor,
      signal: this.stop.signal,
      maxDelayMs: RETRY_MAX_MS,
      onOpen: () => {
        markReachable(this.host.store);
        // Back after an outage: whatever changed meanwhile, and the proof of play queued meanwhile.
        void this.fetchManifest().catch(() => undefined);
        this.uploader.nudge();
      },
      onRetry: () => markUnreachable(this.host.store),
      onEvent: (message) => {
        // Types this build does not know (a newer server) and malformed details are ignored.
        const event = parseRuntimeEvent(message.data);
        if (event) this.onRuntimeEvent(event);
      },
      onResync: () => this.fetchManifest().catch(() => undefined),
    });
    this.events = stream;
    await stream.done;
  }

  /** Every runtime event type is handled here: a type added to the catalog does not compile until it is. */
  private onRuntimeEvent(event: RuntimeEvent): void {
    switch (event.type) {
      case 'screen.manifest_changed':
      case 'screen.unarchived':
        void this.fetchManifest().catch(() => undefined);
        return;
      case 'screen.archived':
        this.host.store.setState({ phase: 'archived' });
        return;
      case 'player.reload': {
        const request = reloadRequestOf(event.details);
        // expires_at is the server's time: compare it with the server-corrected clock.
        const now = this.now();
        if (!shouldActOnReload(request, now, readActedReload(this.host.storage))) return;
        writeActedReload(this.host.storage, { reloadId: request.reloadId, at: now });
        this.host.reload();
        return;
      }
      case 'screen.toast': {
        const toasts = admitToast(this.host.store.getState().toasts, toastOf(event.details), this.now());
        this.host.store.setState({ toasts });
        this.showToasts();
        return;
      }
      case 'screen.display_changed':
        this.host.store.setState({ display: event.details });
        this.judgeDisplay();
        return;
      case 'player.reboot': {
        if (!shouldReboot(event.details, this.now(), this.host.storage.getItem(ACTED_REBOOT_KEY))) return;
        this.host.storage.setItem(ACTED_REBOOT_KEY, event.details.reboot_id);
        // A kiosk reboots the box; a browser player can only reload.
        if (this.host.kiosk?.reboot) this.host.kiosk.reboot();
        else this.host.reload();
        return;
      }
      case 'screen.screenshot_requested':
        void this.answerScreenshot(event.details);
        return;
      case 'screen.sync_barrier':
        this.barrier(event.details);
        return;
      case 'screen.takeover_changed':
        // What shows comes with the manifest (screen.manifest_changed follows a takeover that switched it).
        return;
      case 'screen.deleted':
      case 'screen.public_id_rotated':
        // The session ends with these; the stream fails and the session is opened anew.
        this.events?.close();
        return;
      default:
        return unhandled(event);
    }
  }

  /**
   * The engine put `manifest` on glass. A derived loop (the upcoming pages of a manifest past its
   * boundary, player offline) is not a revision the server minted: it is neither stored as the
   * active manifest (the served one is, and derives again after a restart) nor reported.
   */
  async activated(manifest: RuntimeManifest, derived = false): Promise<void> {
    this.host.store.setState({
      activeRevision: manifest.manifestRevision,
      onGlass: {
        pages: manifest.pages.length,
        darkened: manifest.darkened === true,
        screenLabel: manifest.screenLabel,
      },
    });
    if (derived) return;
    this.heldScreenId = manifest.screenId;
    const db = this.host.db;
    if (db) {
      const storable = storableManifest(manifest);
      await db
        .saveActiveManifest({
          manifest: storable.manifest,
          etag: storable.stripped ? null : this.etag,
          activatedAt: Date.now(),
        })
        .catch(() => undefined);
      await recordAndEvict(db, [manifest], Date.now()).catch(() => undefined);
    }
    if (this.reported.has(manifest.manifestRevision)) return;
    for (let attempt = 0; !this.stop.signal.aborted; attempt++) {
      if (!this.host.store.getState().session?.paired) return;
      if (this.host.store.getState().activeRevision !== manifest.manifestRevision) return;
      try {
        await this.client.report(
          { severity: 'info', code: MANIFEST_ACTIVATED, context: { manifest_revision: manifest.manifestRevision } },
          this.stop.signal,
        );
        this.reported.add(manifest.manifestRevision);
        return;
      } catch (error) {
        if (error instanceof MarqueeProblem && error.status < 500 && error.status !== 429 && error.status !== 401)
          return;
        await this.sleep(backoffDelay(attempt, RETRY_INITIAL_MS, RETRY_MAX_MS));
      }
    }
  }

  /** The screen whose data this device holds is not its screen any more: manifest, media references and cached media go. */
  private async forgetScreen(): Promise<void> {
    this.heldScreenId = undefined;
    this.etag = null;
    await this.host.db?.forgetActiveManifest().catch(() => undefined);
    await forgetAllMedia(this.host.db);
  }

  async report(
    severity: 'info' | 'warning' | 'error',
    code: string,
    context: Record<string, unknown> | null,
  ): Promise<void> {
    if (!this.host.store.getState().session?.paired) return;
    await this.client.report({ severity, code, context }, this.stop.signal).catch(() => undefined);
  }

  destroy(): void {
    this.stop.abort();
    this.uploader.destroy();
    clearTimeout(this.refreshTimer);
    clearTimeout(this.displayTimer);
    clearTimeout(this.toastTimer);
    this.events?.close();
    this.clockSync?.stop();
  }
}

/** Compile-time exhaustiveness: reached only when a runtime event type has no case above. */
function unhandled(event: never): void {
  void event;
}

/** Asks the service worker to fetch every medium of a manifest that it does not hold yet. */
function askToCacheMedia(manifest: RuntimeManifest): void {
  const worker = typeof navigator !== 'undefined' ? navigator.serviceWorker?.controller : null;
  if (!worker) return;
  const items = new Map<string, MediaToFill>();
  const add = (item: { mediaId: string; src: string; bytes: number }) =>
    items.set(item.mediaId, { mediaId: item.mediaId, url: item.src, bytes: item.bytes });
  // The upcoming pages' media too: an offline player switches to them at the boundary.
  for (const page of grantedPages(manifest)) {
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') for (const item of content.items) add(item);
    }
  }
  for (const track of manifest.soundtrack?.tracks ?? []) add(track);
  worker.postMessage({ type: 'cache-media', items: [...items.values()] });
}

function randomBase64Url(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
    .slice(0, 43);
}
