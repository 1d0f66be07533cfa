// The kiosk agent: the device's identity, its mirror of manifests and content, the queues of what
// upstream must hear, and the loop that keeps all of it in step with the real runtime plane when
// the network allows. The renderer talks to the agent only (sync-server.ts), on loopback, and
// gets the same answers online or off: a kiosk boots and plays from disk with no network at all.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {
  MANIFEST_CHANGE_REASONS,
  parseRuntimeEvent,
  type EventDetails,
  type ManifestChangeReason,
} from '../../sdk/contract/event-types';
import type { DisplayState } from '../../sdk/contract/fleet';
import { abortableSleep } from '../../sdk/abortable-sleep';
import type { RuntimeManifest } from '../../sdk/contract/manifest';
import type { HostFacts } from '../../sdk/contract/native';
import type { RuntimeReport } from '../../sdk/contract/runtime';
import type { PairingCompletion } from '../../sdk/contract/screens';
import { MarqueeProblem } from '../../sdk/client/problem';
import { isUnreachable } from '../../sdk/client/runtime';
import { backoffDelay, type EventStream } from '../../sdk/sse/event-stream-client';
import { AgentDb } from './agent-db';
import { ContentClient } from './content-client';
import { linuxHostFacts, type HostFactsSource } from './host-facts';
import { DeviceIdentity } from './identity';
import { KvMirror } from './kv-mirror';
import { AgentLockstep, type LanSettings } from './lan-lockstep';
import { timelineKey } from '../../sdk/lockstep/timeline';
import { isDisplayOn } from '../../sdk/schedule/display-power';
import { localReleaseLabel, mirrorItemsOf, neededKeys, releasesOf } from './local-manifest';
import { LocalEvents } from './local-events';
import { ManifestBook } from './manifest-book';
import { parsePageCall, runPageCall } from './page-hooks';
import type { PlatformAdapter } from './platform';
import { IntegrityError, MIRROR_CONCURRENCY, Mirror, MirrorFullError, type ContentFetch } from './mirror';
import { ReleaseTrees } from './release-trees';
import type { RendererChannel } from './renderer-channel';
import { ReportQueue } from './report-queue';
import { KIOSK_VERSION, KioskScreenshots } from './screenshots';
import { createSyncServer } from './sync-server';
import { EnrollmentLost, UPSTREAM_CALL_TIMEOUT_MS, Upstream, type PendingPairing } from './upstream';

/** Default mirror budget when none is configured: generous for signage, bounded for small SD cards. */
export const DEFAULT_BUDGET_BYTES = 8 * 1024 ** 3;
/** Clock skew below this is the Date header's own resolution plus latency (the player's tolerance too). */
const UPSTREAM_CLOCK_SKEW_TOLERANCE_MS = 2000;
/** While upstream is away, how often at most the agent looks again (cheap, and a change shows in seconds). */
export const RECONNECT_MAX_MS = 3_000;
/** A missed event costs at most this: the manifest is asked for again on this period. */
export const MANIFEST_POLL_MS = 10 * 60_000;
/** A failed refresh is tried again after this, doubling up to the max (the player's manifest backoff). */
const REFRESH_RETRY_INITIAL_MS = 1000;
const REFRESH_RETRY_MAX_MS = 60_000;
/** The mirror is re-hashed once the screen plays (not while it boots), then daily. */
const VERIFY_AFTER_BOOT_MS = 60_000;
const VERIFY_EVERY_MS = 24 * 3600_000;
/**
 * Local capabilities and launch tickets are the agent's own and never regranted by generation:
 * the renderer's manifest changes carry this constant where upstream's carry its generation.
 */
const LOCAL_CONTENT_ACCESS_GENERATION = 1;
/** The runtime condition of a manifest that does not fit the mirror's disk budget (an error: it never reaches glass). */
export const MIRROR_FULL = 'kiosk.mirror_full';
/** The runtime condition of a manifest whose content upstream refuses or no longer has (an error: it never reaches glass). */
export const CONTENT_UNAVAILABLE = 'kiosk.content_unavailable';
/** Content answers that no retry changes: the manifest waits for another one, and its owner should know. */
const REFUSED_CONTENT_STATUSES = new Set([403, 404, 410]);

/** Upstream refused content a manifest names (the mirror's fetch answered `problem`). */
class ContentRefusedError extends Error {
  constructor(readonly problem: MarqueeProblem) {
    super(`upstream refused content of the manifest: ${problem.status} ${problem.code}`);
  }
}
/** Queued reports and key/value writes are offered upstream at least this often. */
const QUEUE_REPLAY_MS = 30_000;

export type LogLevel = 'info' | 'warn' | 'error';
export type AgentLog = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

export interface AgentOptions {
  /** The real runtime plane's origin (the server's play origin). */
  server: string;
  dataDir: string;
  /** Loopback port; 0 picks one. */
  port: number;
  /** The built player (dist/player). */
  playerDir: string;
  budgetBytes?: number;
  /** What fleet control and screenshots act through; its host facts go with native pairing. */
  platform?: PlatformAdapter;
  /** Host facts when no platform adapter gives them (tests). */
  hostFacts?: HostFactsSource;
  /** The fetch of upstream's runtime calls (the mirror's downloads go over contentFetch). */
  fetch?: typeof fetch;
  /** Wraps the mirror's downloads (tests cut a transfer with it). */
  contentFetch?: (download: ContentFetch) => ContentFetch;
  log?: AgentLog;
  /** Upper bound of the wait between reconnection attempts (RECONNECT_MAX_MS). */
  reconnectMaxMs?: number;
  /** The LAN carrier of the screen's sync group (opt-in): listener, peers, preferred lead. */
  lan?: LanSettings;
  /** Tests: how far this kiosk's clock reads off before lockstep synchronizes it. */
  clockSkewMs?: number;
}

/** The group's LAN key as the runtime plane handed it (kept, so a wall starts with the internet down). */
interface StoredLanKey {
  group: string;
  key: string;
}

export interface Enrollment {
  completion: PairingCompletion;
  /** What the renderer's pairing completion must present (it heard it on the local pairing stream). */
  localNonce: string;
}

/** The process's memory as the status reports it: resident, and what of it V8 and buffers account for. */
function memoryFigures() {
  const usage = process.memoryUsage();
  return {
    rss_bytes: usage.rss,
    heap_used_bytes: usage.heapUsed,
    heap_total_bytes: usage.heapTotal,
    external_bytes: usage.external,
    array_buffers_bytes: usage.arrayBuffers,
  };
}

export class KioskAgent {
  readonly events = new LocalEvents();
  readonly db: AgentDb;
  readonly book: ManifestBook;
  readonly mirror: Mirror;
  readonly trees: ReleaseTrees;
  readonly reports: ReportQueue;
  readonly kv: KvMirror;
  readonly upstream: Upstream;
  /** The mirror's downloads (node:http, a socket per concurrent download). */
  private readonly content: ContentClient;
  /** Answers screenshot requests with the window's pixels (the shell sets its source). */
  readonly screenshots: KioskScreenshots;
  /** Signs local capabilities and release grants: the agent's own, never upstream's. */
  readonly localKey: Buffer;
  private server: http.Server | undefined;
  private port = 0;
  private readonly stopped = new AbortController();
  private upstreamStream: EventStream | undefined;
  private online = false;
  /** Upstream's clock minus this device's, from its answers' Date headers (0 within the tolerance). */
  private upstreamClockOffsetMs = 0;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private refreshFailures = 0;
  /** The manifest last reported as not fitting the mirror's budget. */
  /** The manifest revision each once-per-manifest report was last made for, by code. */
  private readonly reportedFor = new Map<string, string>();
  private refreshRetry: ReturnType<typeof setTimeout> | undefined;
  /** Why upstream last said the manifest changed, told on to the renderer with the mirrored one. */
  private upstreamReason: ManifestChangeReason | undefined;
  /** The upstream session the held manifests' capabilities came with. */
  private capabilitiesOf = -1;
  private pairingWait: Promise<void> | undefined;
  private readonly pairingListeners = new Set<() => void>();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  readonly recoveries = new Map<string, number>();
  /** The ws channel to the renderer (set by the sync server). */
  channel: RendererChannel | undefined;
  /** The clock the renderer plays a sync group by, and the group on the LAN. */
  readonly lockstep: AgentLockstep;
  private lanKeyAskedAt = 0;
  /** The group's last barrier told to the renderer (one that reloads asks for it). */
  lastBarrier: { timeline: string; page_index: number; at: string } | null = null;

  private constructor(
    readonly options: AgentOptions,
    readonly identity: DeviceIdentity,
    readonly log: AgentLog,
  ) {
    this.db = new AgentDb(options.dataDir);
    // A pairing started with another key cannot be completed with this one (its proof would not verify).
    if (identity.created) this.db.delete('pairing');
    this.book = new ManifestBook(this.db);
    this.content = new ContentClient(options.server, {
      headers: () => this.upstream.credentialHeaders(),
      sockets: MIRROR_CONCURRENCY,
      timeoutMs: UPSTREAM_CALL_TIMEOUT_MS,
    });
    const download = options.contentFetch?.(this.content.fetch) ?? this.content.fetch;
    const fetchContent: ContentFetch = (p, o) => this.upstream.withSession(() => download(p, o));
    this.mirror = new Mirror(this.db, path.join(options.dataDir, 'mirror'), {
      budgetBytes: options.budgetBytes ?? DEFAULT_BUDGET_BYTES,
      fetch: fetchContent,
    });
    this.trees = new ReleaseTrees(this.mirror);
    this.reports = new ReportQueue(this.db);
    this.kv = new KvMirror(this.db);
    this.upstream = new Upstream(options.server, identity, {
      fetch: options.fetch,
      onSession: (session) => this.mirrorDisplay(session.display),
      onServerDate: (serverMs, localMs) => {
        const offset = serverMs - localMs;
        this.upstreamClockOffsetMs = Math.abs(offset) < UPSTREAM_CLOCK_SKEW_TOLERANCE_MS ? 0 : offset;
      },
    });
    this.screenshots = new KioskScreenshots(
      {
        upload: (c) => this.upstream.withSession(() => this.upstream.client.screenshot(c)),
        observe: (o) => this.upstream.withSession(() => this.upstream.client.observation(o, `kiosk/${KIOSK_VERSION}`)),
      },
      (message) => this.log('warn', message),
    );
    this.lockstep = new AgentLockstep({
      lan: options.lan,
      clockSkewMs: options.clockSkewMs,
      upstreamTime: async (signal) => {
        if (!this.online || !this.enrollment()) throw new Error('upstream is unreachable');
        const t = await this.upstream.withSession(() => this.upstream.client.time(signal));
        return { receivedAt: t.received_at_ms, sentAt: t.sent_at_ms };
      },
      onBarrier: (barrier) => {
        const group = this.book.active()?.manifest.sync?.group;
        if (!group) return;
        this.lastBarrier = {
          timeline: barrier.timeline,
          page_index: barrier.pageIndex,
          at: new Date(barrier.at).toISOString(),
        };
        this.events.emit('screen.sync_barrier', { details: { group, ...this.lastBarrier } });
      },
      onReferenceChanged: () => this.channel?.send({ type: 'lockstep.reference_changed' }),
      log: (message, fields) => this.log('info', message, fields),
    });
    let secret = this.db.get<string>('local-key');
    if (!secret) this.db.set('local-key', (secret = crypto.randomBytes(32).toString('base64url')));
    this.localKey = Buffer.from(secret, 'base64url');
  }

  static async start(options: AgentOptions): Promise<KioskAgent> {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const identity = await DeviceIdentity.load(path.join(options.dataDir, 'identity'));
    const agent = new KioskAgent(options, identity, options.log ?? (() => undefined));
    await agent.listen();
    await agent.lockstep.start();
    agent.begin();
    return agent;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get listeningPort(): number {
    return this.port;
  }

  get isOnline(): boolean {
    return this.online;
  }

  /** The release's own local origin (one per release: another site than the player's). */
  releaseOrigin(releaseId: string): string {
    return `http://${localReleaseLabel(releaseId)}.release.localhost:${this.port}`;
  }

  private async listen(): Promise<void> {
    const app = createSyncServer(this);
    this.server = http.createServer(app);
    this.server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      // Loopback only: the renderer is on this machine, and nothing else may reach the agent.
      this.server!.listen(this.options.port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as { port: number }).port;
    (app as unknown as { attachChannel?: (s: http.Server) => void }).attachChannel?.(this.server);
  }

  // ---- State

  /**
   * The server's time as this device last learned it. The renderer's player takes its clock from
   * the Date headers of its runtime, which is this agent: they carry this, so schedules, visibility
   * and upcoming switches keep the server's time on a device whose clock is off, as in a browser.
   */
  serverNow(): number {
    return Date.now() + this.upstreamClockOffsetMs;
  }

  enrollment(): Enrollment | undefined {
    return this.db.get<Enrollment>('enrollment');
  }

  pendingPairing(): PendingPairing | undefined {
    return this.db.get<PendingPairing>('pairing');
  }

  /** The screen's display state as upstream last told it: the renderer applies it offline too. */
  display(): DisplayState {
    return this.db.get<DisplayState>('display') ?? { power: null, schedule: null };
  }

  /**
   * Whether content should be on glass now (the watchdog judges blank glass only then): paired, a
   * manifest with pages, and the display on. A display turned off, by fleet control or by its
   * schedule, is black glass on purpose.
   */
  contentExpected(now = this.serverNow()): boolean {
    const manifest = this.book.active()?.manifest;
    if (!this.enrollment() || !manifest || manifest.pages.length === 0) return false;
    return isDisplayOn(this.display(), now, manifest.timezone);
  }

  private mirrorDisplay(display: DisplayState | undefined): void {
    if (display) this.db.set('display', { power: display.power, schedule: display.schedule });
  }

  /**
   * A call of the page on glass (`marqueeKiosk.setDisplayPower/reboot`), handed over by the shell
   * that installed the hooks; anything but a well-formed call is ignored.
   */
  pageCall(payload: unknown): Promise<void> {
    const call = parsePageCall(payload);
    if (!call) return Promise.resolve();
    return runPageCall(call, this.options.platform, this.log);
  }

  status() {
    const active = this.book.active();
    return {
      paired: this.enrollment() !== undefined,
      online: this.online,
      screen_id: this.enrollment()?.completion.screen.id,
      active_manifest: active?.manifest.manifestRevision ?? null,
      active_since: active?.activatedAt ? new Date(active.activatedAt).toISOString() : null,
      next_manifest: this.book.next()?.manifest.manifestRevision ?? null,
      mirror_bytes: this.mirror.usage(),
      mirror_budget_bytes: this.mirror.budgetBytes,
      queued_reports: this.reports.size(),
      queued_kv_writes: this.kv.pending(),
      recoveries: Object.fromEntries(this.recoveries),
      lockstep: this.lockstep.status(),
      memory: memoryFigures(),
    };
  }

  // ---- Lifecycle

  private begin(): void {
    // At boot a missing or truncated file of what is on glass is dropped at once (a cheap check);
    // the full re-hash of the mirror waits until the screen is playing, then runs daily.
    for (const key of neededKeys(this.book.needed())) if (!key.startsWith('tree:')) this.mirror.intact(key);
    void this.restoreTrees();
    const verify = () =>
      void this.mirror
        .verify()
        .then((dropped) => {
          if (dropped.length === 0) return;
          this.log('warn', 'mirror: corrupt files dropped; fetching them again', { count: dropped.length });
          void this.refresh();
        })
        .catch((error) => this.log('error', 'mirror verification failed', { error: String(error) }));
    const first = setTimeout(verify, VERIFY_AFTER_BOOT_MS);
    first.unref();
    this.stopped.signal.addEventListener('abort', () => clearTimeout(first), { once: true });
    this.timers.push(
      setInterval(() => this.enrollment() && void this.refresh(), MANIFEST_POLL_MS),
      setInterval(() => this.online && void this.replayQueues(), QUEUE_REPLAY_MS),
      setInterval(verify, VERIFY_EVERY_MS),
    );
    for (const t of this.timers) t.unref();
    this.followGroup();
    void this.run();
  }

  /**
   * The active manifest's release trees, unpacked again from their mirrored packages where a power
   * cut left them short: no network needed, so an offline boot repairs them too (a refresh does
   * the same, but only once upstream answers).
   */
  private async restoreTrees(): Promise<void> {
    const active = this.book.active()?.manifest;
    if (!active) return;
    const keep = neededKeys(this.book.needed());
    for (const release of releasesOf(active)) {
      try {
        if (this.trees.intact(release.releaseId) || !(await this.mirror.servable(release.packageSha256))) continue;
        this.log('warn', 'a release tree is incomplete; unpacking it again', { release: release.releaseId });
        await this.trees.extract(release.releaseId, release.packageSha256, keep);
      } catch (error) {
        this.log('error', 'a release tree could not be unpacked again', { error: String(error) });
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    this.upstreamStream?.close();
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.refreshRetry);
    await new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await this.refreshing?.catch(() => undefined);
    await this.lockstep.stop();
    this.content.close();
    await this.mirror.close();
    this.db.close();
  }

  /** Waits `ms`, or less when the agent stops; leaves no listener behind (it runs every few seconds offline). */
  private sleep(ms: number): Promise<void> {
    return abortableSleep(ms, this.stopped.signal);
  }

  private setOnline(online: boolean): void {
    if (online === this.online) return;
    this.online = online;
    this.log('info', online ? 'upstream reachable' : 'upstream unreachable: playing from the mirror');
    if (online) void this.replayQueues();
  }

  /** Follows upstream while enrolled; waits for a pairing otherwise. Never gives up. */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped.signal.aborted) {
      if (!this.enrollment()) {
        await new Promise<void>((resolve) => {
          const done = () => {
            this.pairingListeners.delete(done);
            this.stopped.signal.removeEventListener('abort', done);
            resolve();
          };
          this.pairingListeners.add(done);
          this.stopped.signal.addEventListener('abort', done, { once: true });
        });
        continue;
      }
      try {
        const session = await this.upstream.ensureSession();
        failures = 0;
        this.setOnline(true);
        await this.follow(session.event_cursor);
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        if (error instanceof EnrollmentLost) {
          this.unpair('upstream no longer knows this device');
          continue;
        }
        if (error instanceof MarqueeProblem && error.status === 401) this.upstream.dropSession();
        if (isUnreachable(error) || error instanceof MarqueeProblem) this.setOnline(false);
        else this.log('error', 'upstream loop failed', { error: String(error) });
      }
      await this.sleep(backoffDelay(failures++, 500, this.options.reconnectMaxMs ?? RECONNECT_MAX_MS));
    }
  }

  /** The upstream runtime stream: every (re)connection refreshes the manifest; events act. */
  private async follow(sessionCursor: string): Promise<void> {
    const stream = this.upstream.client.events({
      cursor: this.db.get<string>('upstream-cursor') ?? sessionCursor,
      signal: this.stopped.signal,
      maxDelayMs: this.options.reconnectMaxMs ?? RECONNECT_MAX_MS,
      initialDelayMs: 500,
      onOpen: () => {
        this.setOnline(true);
        void this.refresh();
        void this.screenshots.reportSurface().catch(() => undefined);
      },
      onRetry: () => this.setOnline(false),
      onCursor: (cursor) => this.db.set('upstream-cursor', cursor),
      onResync: async () => {
        // Events were missed: the manifest again, and a new session for the display state now.
        this.upstream.dropSession();
        await this.upstream.ensureSession();
        await this.refresh();
      },
      onEvent: (message) => {
        // An event the agent fails on is passed over, not delivered again and again (the stream
        // would stall on it and every later event, reassignments included, would wait behind it).
        try {
          this.onUpstreamEvent(message.type, (message.data ?? {}) as Record<string, unknown>);
        } catch (error) {
          this.log('error', 'an upstream event could not be handled', { type: message.type, error: String(error) });
        }
      },
    });
    this.upstreamStream = stream;
    try {
      await stream.done;
    } catch (error) {
      // A refused stream (the session lapsed or was revoked): a new session, and the head again.
      if (error instanceof Error && 'status' in error && (error as { status?: number }).status === 401) {
        this.upstream.dropSession();
        this.db.delete('upstream-cursor');
      }
      throw error;
    }
  }

  private onUpstreamEvent(type: string, record: Record<string, unknown>): void {
    switch (type) {
      case 'screen.manifest_changed': {
        const reason = (record.details as { reason?: unknown } | undefined)?.reason;
        if (MANIFEST_CHANGE_REASONS.includes(reason as never)) this.upstreamReason = reason as ManifestChangeReason;
        void this.refresh();
        return;
      }
      case 'screen.archived':
      case 'screen.unarchived':
        // Told on as the web player hears it (archived: dark glass at once); the manifest that
        // goes with it reaches the renderer once it is on disk (refresh).
        this.events.emit(type, record);
        void this.refresh();
        return;
      case 'player.reload':
        this.events.emit(type, record);
        return;
      case 'screen.display_changed': {
        // Kept, so a renderer that starts with no network still applies the power and the schedule.
        const event = parseRuntimeEvent(record);
        if (event?.type === 'screen.display_changed') this.mirrorDisplay(event.details);
        this.events.emit(type, record);
        return;
      }
      case 'screen.sync_barrier': {
        // The server's barrier (a kiosk with no LAN carrier): told on, and kept for a renderer that reloads.
        const event = parseRuntimeEvent(record);
        if (event?.type !== 'screen.sync_barrier') return;
        const { timeline, page_index, at } = event.details;
        this.lastBarrier = { timeline, page_index, at };
        this.events.emit(type, record);
        return;
      }
      case 'screen.screenshot_requested':
        // Real pixels from the shell's window; the renderer never hears it (it cannot reach upstream).
        void this.screenshots.answer((record.details ?? {}) as Record<string, unknown>);
        return;
      case 'screen.deleted':
        this.unpair('the screen was deleted upstream');
        return;
      default:
        // Fleet commands (toast, display, ...) reach the renderer as they are.
        if (type.startsWith('screen.') || type.startsWith('player.')) this.events.emit(type, record);
    }
  }

  /**
   * Forgets the screen, with the reports and key/value writes queued for it (a pairing that follows
   * may be another owner's screen: they must never go up as its own), the content mirrored for it
   * (its owner's media and applications do not stay on a box that is no longer theirs) and the key
   * its launch tickets and release grants were sealed with (a grant cookie still held by the
   * renderer opens nothing). The renderer pairs again.
   */
  private unpair(why: string): void {
    this.log('warn', `unpaired: ${why}`);
    this.reports.clear();
    this.kv.clear();
    this.db.delete('enrollment');
    this.db.delete('pairing');
    this.db.delete('upstream-cursor');
    this.db.delete('display');
    this.db.delete('lan-key');
    this.book.clear();
    this.mirror.forgetAll();
    crypto.randomFillSync(this.localKey);
    this.db.set('local-key', this.localKey.toString('base64url'));
    this.followGroup();
    this.upstream.dropSession();
    this.upstreamStream?.close();
    this.events.emit('screen.deleted', {});
  }

  // ---- Manifests

  /**
   * Fetches the manifest; a new one is mirrored whole before it becomes active. One at a time: asked
   * again while one runs, it runs once more after it (the change that prompted the ask may have
   * landed after the first read). A failed refresh is tried again with backoff, so a transfer cut
   * off mid-way does not leave the new manifest waiting for the next event or poll.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    clearTimeout(this.refreshRetry);
    this.refreshRetry = undefined;
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          await this.refreshOnce();
        } while (this.refreshAgain && !this.stopped.signal.aborted);
        this.refreshFailures = 0;
      } catch (error) {
        // The mirror's own failures say nothing of the network: upstream answered.
        if (error instanceof MirrorFullError) this.reportMirrorFull(error);
        else if (error instanceof ContentRefusedError) this.reportContentRefused(error);
        else if (isUnreachable(error) && !(error instanceof IntegrityError)) this.setOnline(false);
        this.log('warn', 'manifest refresh failed', { error: String(error) });
        this.retryRefresh();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** The manifest that does not fit, told to the owner once per manifest (the refresh is tried again and again). */
  private reportMirrorFull(error: MirrorFullError): void {
    this.reportOncePerManifest(MIRROR_FULL, { needed_bytes: error.neededBytes, budget_bytes: this.mirror.budgetBytes });
  }

  /**
   * A manifest whose content upstream refuses (403, 404, 410): told to the owner once per manifest,
   * while the screen keeps what it plays and the refresh is tried again (a newer manifest ends it).
   */
  private reportContentRefused(error: ContentRefusedError): void {
    this.reportOncePerManifest(CONTENT_UNAVAILABLE, { status: error.problem.status, problem_code: error.problem.code });
  }

  /** An error report of the manifest waiting to go on glass, once per manifest and code. */
  private reportOncePerManifest(code: string, context: Record<string, unknown>): void {
    const revision = this.book.next()?.manifest.manifestRevision ?? this.book.active()?.manifest.manifestRevision;
    if (!revision || this.reportedFor.get(code) === revision) return;
    this.reportedFor.set(code, revision);
    this.report({ severity: 'error', code, context: { manifest_revision: revision, ...context } });
  }

  private retryRefresh(): void {
    if (this.stopped.signal.aborted || !this.enrollment()) return;
    const delay = backoffDelay(this.refreshFailures++, REFRESH_RETRY_INITIAL_MS, REFRESH_RETRY_MAX_MS);
    this.refreshRetry = setTimeout(() => void this.refresh(), delay);
    this.refreshRetry.unref();
  }

  private async refreshOnce(): Promise<void> {
    if (!this.enrollment()) return;
    const active = this.book.active();
    const next = this.book.next();
    const etag = next?.etag ?? active?.etag ?? null;
    let fetched: RuntimeManifest | undefined;
    let fetchedTag: string | null = null;
    try {
      const result = await this.upstream.withSession(() => this.upstream.client.manifest(etag, this.upstream.origin));
      this.setOnline(true);
      if (result.status === 'fresh') {
        fetched = result.manifest;
        fetchedTag = result.etag;
      }
    } catch (error) {
      if (error instanceof MarqueeProblem && error.code === 'screen_archived') return;
      throw error;
    }
    if (fetched) {
      this.capabilitiesOf = this.upstream.sessionMark;
      const known = this.book.byRevision(fetched.manifestRevision);
      if (known && known.role !== 'old') this.book.refresh(fetched, fetchedTag);
      else this.book.setNext(fetched, fetchedTag);
      if (fetched.sync) await this.fetchLanKey();
    }
    await this.completeNext();
    this.followGroup();
  }

  /** The sync group's LAN key, asked for with each new manifest of a group (a group change brings another). */
  private async fetchLanKey(): Promise<void> {
    if (!this.options.lan) return;
    try {
      const answer = await this.upstream.withSession(() => this.upstream.client.syncLanKey());
      const stored: StoredLanKey = { group: answer.group, key: answer.key };
      this.db.set('lan-key', stored);
    } catch (error) {
      this.log('warn', 'the sync group’s LAN key could not be fetched', { error: String(error) });
    }
  }

  /** Lockstep follows what is on glass: its group, the group's key, its timeline. */
  private followGroup(): void {
    const enrollment = this.enrollment();
    const manifest = this.book.active()?.manifest;
    const sync = manifest?.sync;
    if (!enrollment || !manifest || !sync) return this.lockstep.configure(null);
    const stored = this.db.get<StoredLanKey>('lan-key');
    // A kiosk given a LAN carrier after its manifest came (a restart with new settings) asks now.
    if (this.options.lan && stored?.group !== sync.group && this.online && Date.now() - this.lanKeyAskedAt > 60_000) {
      this.lanKeyAskedAt = Date.now();
      void this.fetchLanKey().then(() => this.followGroup());
    }
    this.lockstep.configure({
      self: enrollment.completion.screen.id,
      group: sync.group,
      key: stored?.group === sync.group ? Buffer.from(stored.key, 'base64url') : null,
      timeline: timelineKey(manifest),
    });
  }

  /** Mirrors what the next manifest needs, then puts it on glass and tells the renderer. */
  private async completeNext(): Promise<void> {
    const next = this.book.next();
    if (!next) {
      // Nothing new: still make sure what is on glass is whole (after a corruption, say).
      const active = this.book.active();
      if (active) await this.mirrorContent(active.manifest);
      return;
    }
    await this.mirrorContent(next.manifest);
    const promoted = this.book.promoteNext();
    if (!promoted) return;
    this.log('info', 'manifest on disk and active', { manifest: promoted.manifest.manifestRevision });
    this.events.emit('screen.manifest_changed', { details: this.localManifestChange() });
  }

  /**
   * The details of a local `screen.manifest_changed`, in the runtime contract's shape (the player
   * ignores an event it cannot parse, so a change told any other way never reaches glass): the
   * agent's own count of activations, which only grows, and upstream's reason when it gave one.
   */
  private localManifestChange(): EventDetails<'screen.manifest_changed'> {
    const revision = (this.db.get<number>('local-manifest-revision') ?? 0) + 1;
    this.db.set('local-manifest-revision', revision);
    const reason = this.upstreamReason ?? 'playlist_updated';
    this.upstreamReason = undefined;
    return { manifest_revision: revision, content_access_generation: LOCAL_CONTENT_ACCESS_GENERATION, reason };
  }

  private async mirrorContent(manifest: RuntimeManifest): Promise<void> {
    const keep = neededKeys(this.book.needed());
    try {
      await this.mirror.ensure(mirrorItemsOf(manifest), keep, this.stopped.signal);
    } catch (error) {
      if (error instanceof MarqueeProblem && REFUSED_CONTENT_STATUSES.has(error.status))
        throw new ContentRefusedError(error);
      throw error;
    }
    for (const release of releasesOf(manifest))
      await this.trees.extract(release.releaseId, release.packageSha256, keep);
  }

  // ---- Reports and key/value writes

  report(report: RuntimeReport): void {
    this.reports.enqueue(report);
    if (this.online) void this.replayQueues();
  }

  /** A recovery the watchdog made: counted, and reported upstream like any runtime condition. */
  recordRecovery(reason: string): void {
    const count = (this.recoveries.get(reason) ?? 0) + 1;
    this.recoveries.set(reason, count);
    this.report({ severity: 'warning', code: 'kiosk.renderer_recovered', context: { reason, count } });
  }

  private replaying: Promise<void> | undefined;

  replayQueues(): Promise<void> {
    this.replaying ??= (async () => {
      try {
        await this.reports.replay((r) => this.upstream.withSession(() => this.upstream.client.report(r)));
        await this.kv.replay(
          (w) => this.upstreamKvWrite(w),
          async (w) => {
            const entry = await this.upstreamKv('GET', w.applicationId, w.placement, w.key, {}).catch(() => undefined);
            if (entry) this.kv.remember(entry as never);
          },
        );
      } catch (error) {
        if (isUnreachable(error)) this.setOnline(false);
      }
    })().finally(() => (this.replaying = undefined));
    return this.replaying;
  }

  /** The upstream capability of a placement of the active manifest, fresh (the manifest is fetched again when it lapsed). */
  async upstreamCapability(placement: string): Promise<string> {
    const find = () => {
      const manifest = this.book.active()?.manifest;
      for (const page of manifest?.pages ?? [])
        for (const p of page.placements)
          if (`${page.id}/${p.id}` === placement && p.content.type === 'application')
            return p as { capabilityHandle: string; capabilityExpiresAt: string };
      return undefined;
    };
    let found = find();
    // Capabilities are bound to the upstream session they were issued with, and live five minutes.
    if (
      !found ||
      this.capabilitiesOf !== this.upstream.sessionMark ||
      Date.parse(found.capabilityExpiresAt) - 30_000 < Date.now()
    ) {
      await this.upstream.ensureSession();
      await this.refresh();
      found = find();
    }
    if (!found) throw new MarqueeProblem(404, { code: 'not_found', detail: 'no such placement on glass' });
    return found.capabilityHandle;
  }

  async upstreamKv(
    method: 'GET' | 'PUT' | 'DELETE',
    applicationId: string,
    placement: string,
    key: string | undefined,
    options: { json?: unknown; ifMatch?: number; idempotencyKey?: string },
  ): Promise<unknown> {
    return this.upstream.withSession(async () =>
      this.upstream.client.kv(method, applicationId, key, {
        capability: await this.upstreamCapability(placement),
        ...options,
      }),
    );
  }

  private async upstreamKvWrite(w: {
    applicationId: string;
    placement: string;
    method: 'PUT' | 'DELETE';
    key: string;
    body: unknown;
    ifMatch: number | null;
    idempotencyKey: string;
  }) {
    const answer = await this.upstreamKv(w.method, w.applicationId, w.placement, w.key, {
      json: w.body ?? undefined,
      ifMatch: w.ifMatch ?? undefined,
      idempotencyKey: w.idempotencyKey,
    });
    return (answer ?? undefined) as never;
  }

  // ---- Pairing for the renderer

  /** The code to show: the pending native pairing, or a new one (upstream must be reachable for that). */
  async pairingCode(): Promise<PendingPairing> {
    let pairing = this.pendingPairing();
    if (!pairing || pairing.expiresAt <= Date.now()) {
      pairing = await this.upstream.startPairing(this.hostFacts());
      this.db.set('pairing', pairing);
    }
    this.awaitClaim(pairing);
    return pairing;
  }

  private hostFacts(): HostFacts {
    return (this.options.hostFacts ?? this.options.platform?.hostFacts ?? linuxHostFacts()).read();
  }

  get platform(): PlatformAdapter | undefined {
    return this.options.platform;
  }

  /** Completes the pairing in the background once claimed: the key proves itself, the screen is ours. */
  private awaitClaim(pairing: PendingPairing): void {
    if (this.pairingWait) return;
    const stop = new AbortController();
    const abort = () => stop.abort();
    this.stopped.signal.addEventListener('abort', abort, { once: true });
    this.pairingWait = (async () => {
      for (;;) {
        try {
          const nonce = await this.upstream.waitForClaim(pairing, stop.signal);
          const completion = await this.upstream.completePairing(pairing, nonce);
          this.book.clear();
          this.db.delete('upstream-cursor');
          this.db.set('enrollment', { completion, localNonce: crypto.randomBytes(32).toString('base64url') });
          this.db.delete('pairing');
          this.log('info', 'paired', { screen: completion.screen.id });
          for (const listener of [...this.pairingListeners]) listener();
          return;
        } catch (error) {
          if (stop.signal.aborted) return;
          this.log('warn', 'pairing wait failed; trying again', { error: String(error) });
          await this.sleep(2_000);
          if (this.pendingPairing()?.credential !== pairing.credential) return;
        }
      }
    })().finally(() => {
      this.stopped.signal.removeEventListener('abort', abort);
      this.pairingWait = undefined;
    });
  }

  /** Resolves when the agent is paired (the renderer's pairing stream waits on it). */
  onPaired(listener: () => void): () => void {
    this.pairingListeners.add(listener);
    return () => this.pairingListeners.delete(listener);
  }
}
