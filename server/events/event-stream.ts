// Replayable event streams over SSE: resolve the client's cursor (query `after` beats Last-Event-ID),
// replay the log after it, then follow live, woken by the notifier after each commit. The log is the
// buffer: a stream that falls behind stops reading it until its client catches up, and a client that
// stops reading altogether is dropped, so slow consumers cost neither memory nor writers' time.
import {
  STREAM_CURSOR,
  STREAM_RESYNC_REQUIRED,
  type ResyncReason,
  type ResyncRequired,
} from '../../sdk/contract/events';
import { isoTime } from '../clock';
import {
  encodeSseFrame,
  openSse,
  SSE_HEARTBEAT_MS,
  SSE_MAX_BUFFERED_BYTES,
  type SseFrame,
  type SseResponse,
  type SseStream,
} from '../http/sse';
import { serverCache } from '../caches';
import type { Services } from '../services';
import type { Db } from '../store/store';
import { EventCursors, scopeKey, type StreamScope } from './cursors';
import { credentialStreamsEndChannel, screenChannel, tenantChannel, tenantStreamsEndChannel } from './event-log';
import { checkCursor, eventRecord, readAfter, RESYNC_MESSAGES, type EventRow } from './event-reader';

/** Rows read per query: bounds the time and memory of one read. */
export const STREAM_BATCH_ROWS = 200;
/** Unsent bytes at which a stream stops reading the log until its client catches up. */
export const STREAM_LOW_WATER_BYTES = 64 * 1024;
/** A client that does not take the unsent bytes within this long has stopped reading and is dropped. */
export const STREAM_STALL_TIMEOUT_MS = 30_000;
/** Live reads of one scope with the same bounds are shared by every stream that wakes for them. */
const SHARED_READ_TTL_MS = 1000;

/** Stream timings and bounds of one server (ServerOptions.tuning; tests shorten heartbeats and stalls). */
export type StreamTuning = Services['tuning']['eventStreams'];

export const DEFAULT_STREAM_TUNING: StreamTuning = {
  heartbeatMs: SSE_HEARTBEAT_MS,
  stallTimeoutMs: STREAM_STALL_TIMEOUT_MS,
  lowWaterBytes: STREAM_LOW_WATER_BYTES,
  maxBufferedBytes: SSE_MAX_BUFFERED_BYTES,
};

const sharedReads = serverCache('event-reads', (services) => new SharedReads(new EventCursors(services.keys)));

export interface EventStreamRequest {
  scope: StreamScope;
  /** The query cursor; when present and non-empty it beats `lastEventId`. */
  after?: string;
  lastEventId?: string;
  /** Rows it refuses are not sent; the client's cursor moves past them with `stream.cursor` frames. */
  deliver?: (row: EventRow) => boolean;
  /** Notifier channels whose message ends the stream, besides its tenant's suspension. */
  endChannels?: readonly string[];
  /** Asked once subscribed to the ends: false when one of them came first, and the stream ends at once. */
  stillAuthorized?: () => Promise<boolean>;
}

/** One tenant's events: GET /api/v1/events/stream. It ends when the credential that opened it is revoked. */
export function serveTenantEventStream(
  services: Services,
  res: SseResponse,
  request: {
    tenantId: string;
    after?: string;
    lastEventId?: string;
    credentialId?: string;
    stillAuthorized?: () => Promise<boolean>;
  },
): Promise<SseStream> {
  return serveEventStream(services, res, {
    scope: { kind: 'tenant', tenantId: request.tenantId },
    after: request.after,
    lastEventId: request.lastEventId,
    endChannels: request.credentialId === undefined ? [] : [credentialStreamsEndChannel(request.credentialId)],
    stillAuthorized: request.stillAuthorized,
  });
}

/** Only rows marked for the runtime audience reach a screen. */
export const runtimeAudience = (row: EventRow): boolean => row.runtime === 1;

/**
 * One screen's runtime events (GET /runtime/v1/events mounts this behind the runtime cookie): rows
 * of that screen with `runtime = 1`, further narrowed by `deliver` when given. Filtered rows leave
 * payload-free `stream.cursor` frames so a reconnecting player resumes past them.
 */
export function serveScreenEventStream(
  services: Services,
  res: SseResponse,
  request: {
    tenantId: string;
    screenId: string;
    after?: string;
    lastEventId?: string;
    deliver?: (row: EventRow) => boolean;
    stillAuthorized?: () => Promise<boolean>;
  },
): Promise<SseStream> {
  const extra = request.deliver;
  return serveEventStream(services, res, {
    scope: { kind: 'screen', tenantId: request.tenantId, screenId: request.screenId },
    after: request.after,
    lastEventId: request.lastEventId,
    deliver: extra ? (row) => runtimeAudience(row) && extra(row) : runtimeAudience,
    stillAuthorized: request.stillAuthorized,
  });
}

/** Answers with a stream that ends on drain, on disconnect, or when its client stops reading. */
export async function serveEventStream(
  services: Services,
  res: SseResponse,
  request: EventStreamRequest,
): Promise<SseStream> {
  const { store, lifecycle, notifier } = services;
  const tuning = services.tuning.eventStreams;
  const reads = sharedReads(services);
  const given = nonEmpty(request.after) ?? nonEmpty(request.lastEventId);
  let start = 0; // no cursor: from the oldest retained event
  let resync: { reason: ResyncReason; head: number } | undefined;
  if (given !== undefined) {
    const check = await checkCursor(store.db, reads.cursors, request.scope, given);
    if (check.ok) start = check.position;
    else resync = check;
  }

  const sse = openSse(res, { lifecycle, heartbeatMs: tuning.heartbeatMs, maxBufferedBytes: tuning.maxBufferedBytes });
  // The client may have gone, or the server begun draining, while the cursor was checked.
  if (res.destroyed || !res.socket || res.socket.destroyed || lifecycle.state === 'draining') {
    sse.close();
    return sse;
  }
  if (resync) {
    sse.send(resyncFrame(reads.cursors, request.scope, resync.reason, resync.head, services.clock.now()));
    sse.close();
    return sse;
  }

  // Every stream of a tenant (its own, its screens') ends when the tenant is suspended.
  for (const channel of [tenantStreamsEndChannel(request.scope.tenantId), ...(request.endChannels ?? [])])
    sse.onClose(notifier.subscribe(channel, () => sse.close()));
  // Subscribed, then asked (as the pairing and agent status streams do): an end that committed
  // after the request was authenticated, before these subscriptions, ends the stream before a frame.
  if (request.stillAuthorized && !(await request.stillAuthorized())) sse.close();
  if (sse.closed) return sse;

  const pump = new Pump(services, res, sse, request, start, tuning, reads);
  const channel =
    request.scope.kind === 'tenant' ? tenantChannel(request.scope.tenantId) : screenChannel(request.scope.screenId);
  // Subscribed before the replay reads, so nothing committed in between is missed.
  // A wake-up with no position (a replica's notifier reconnected and may have missed some) reads
  // on from where this stream is, as a replay does.
  const unsubscribe = notifier.subscribe(channel, (position) =>
    typeof position === 'number' ? pump.wake(position) : pump.catchUp(),
  );
  sse.onClose(unsubscribe);
  pump.wake();
  return sse;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function resyncFrame(
  cursors: EventCursors,
  scope: StreamScope,
  reason: ResyncReason,
  head: number,
  now: number,
): SseFrame {
  const cursor = cursors.encode(scope, head);
  const data: ResyncRequired = {
    cursor,
    sequence: head,
    type: STREAM_RESYNC_REQUIRED,
    severity: 'warning',
    message: `${RESYNC_MESSAGES[reason]}; refetch authoritative state and resume at this cursor`,
    at: isoTime(now),
    details: { reason },
  };
  return { id: cursor, event: STREAM_RESYNC_REQUIRED, data };
}

/** Rows of one read with their encoded frames, built once however many streams send them. */
class Batch {
  private frames: string[] | undefined;
  constructor(
    readonly rows: EventRow[],
    private readonly cursors: EventCursors,
    private readonly scope: StreamScope,
  ) {}

  frame(index: number): string {
    this.frames ??= new Array<string>(this.rows.length);
    let frame = this.frames[index];
    if (frame === undefined) {
      const record = eventRecord(this.cursors, this.scope, this.rows[index]!);
      frame = this.frames[index] = encodeSseFrame({ id: record.cursor, event: record.type, data: record });
    }
    return frame;
  }
}

/**
 * Live reads keyed by scope and by the exact range (after, upTo]. Every row in that range committed
 * before the notification for upTo was published (the store has one writer at a time, positions
 * are taken inside it), so a cached answer for the key can never miss a row.
 */
class SharedReads {
  private readonly pending = new Map<string, Promise<Batch>>();
  constructor(readonly cursors: EventCursors) {}

  live(db: Db, scope: StreamScope, after: number, upTo: number): Promise<Batch> {
    const key = `${scopeKey(scope)}|${scope.tenantId}|${after}|${upTo}`;
    let batch = this.pending.get(key);
    if (!batch) {
      batch = readAfter(db, scope, after, STREAM_BATCH_ROWS, upTo).then((rows) => new Batch(rows, this.cursors, scope));
      this.pending.set(key, batch);
      const forget = () => setTimeout(() => this.pending.delete(key), SHARED_READ_TTL_MS).unref();
      batch.then(forget, () => this.pending.delete(key));
    }
    return batch;
  }

  async replay(db: Db, scope: StreamScope, after: number): Promise<Batch> {
    return new Batch(await readAfter(db, scope, after, STREAM_BATCH_ROWS), this.cursors, scope);
  }
}

type DrainOutcome = 'drained' | 'stalled' | 'closed';

/** Moves one stream's cursor through the log: replay first, then whatever notifications announce. */
class Pump {
  /** Last position handled (sent, or passed over as filtered). */
  private position: number;
  /** Last position whose cursor the client has. */
  private clientPosition: number;
  /** Position up to which the log has been read for this stream. */
  private readThrough: number;
  /** Newest position a notification announced. */
  private announced = 0;
  private replaying = true;
  /** A catch-up asked for while a read was under way: the next read replays. */
  private catchUpPending = false;
  private running = false;
  private again = false;

  constructor(
    private readonly services: Services,
    private readonly res: SseResponse,
    private readonly sse: SseStream,
    private readonly request: EventStreamRequest,
    start: number,
    private readonly tuning: StreamTuning,
    private readonly reads: SharedReads,
  ) {
    this.position = this.clientPosition = this.readThrough = start;
  }

  wake(position?: number): void {
    if (position !== undefined && position > this.announced) this.announced = position;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.run();
  }

  /** Reads everything after this stream's position, whatever was announced. */
  catchUp(): void {
    this.catchUpPending = true;
    this.wake();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      do {
        this.again = false;
        await this.follow();
      } while (this.again && !this.sse.closed);
    } catch (error) {
      if (!this.sse.closed && this.services.lifecycle.state !== 'draining') {
        this.services.logger.error({ err: error, scope: this.request.scope.kind }, 'event stream failed');
      }
      this.sse.close();
    } finally {
      this.running = false;
    }
  }

  private async follow(): Promise<void> {
    const { store } = this.services;
    const { scope } = this.request;
    while (!this.sse.closed) {
      if (this.res.writableLength > this.tuning.lowWaterBytes) {
        const outcome = await waitForDrain(this.res, this.tuning.stallTimeoutMs);
        if (outcome === 'stalled') return this.drop();
        continue;
      }
      let batch: Batch;
      let upTo: number | undefined;
      if (this.catchUpPending) {
        this.catchUpPending = false;
        this.replaying = true;
      }
      if (this.replaying) {
        batch = await this.reads.replay(store.db, scope, this.readThrough);
        if (batch.rows.length < STREAM_BATCH_ROWS) this.replaying = false;
      } else {
        if (this.announced <= this.readThrough) return;
        upTo = this.announced;
        batch = await this.reads.live(store.db, scope, this.readThrough, upTo);
      }
      if (this.sse.closed) return;
      if (!this.send(batch)) {
        // Paused mid-batch: the rest is read again, unbounded, once the client caught up.
        this.readThrough = this.position;
        this.replaying = true;
        continue;
      }
      const last = batch.rows.at(-1)?.position ?? this.readThrough;
      // A short live read has seen everything of this scope up to upTo.
      this.readThrough = Math.max(
        this.readThrough,
        last,
        upTo !== undefined && batch.rows.length < STREAM_BATCH_ROWS ? upTo : 0,
      );
      // A full batch means more may follow. A read never yields to I/O on SQLite, so without a turn
      // here a long replay would hold the whole server (every route, every other stream) until its end.
      if (batch.rows.length === STREAM_BATCH_ROWS) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Sends a batch's rows after the position; false when the stream closed or paused for backpressure. */
  private send(batch: Batch): boolean {
    const deliver = this.request.deliver;
    let finished = true;
    for (let i = 0; i < batch.rows.length; i++) {
      const row = batch.rows[i]!;
      if (row.position <= this.position) continue;
      if (!deliver || deliver(row)) {
        if (!this.sse.sendEncoded(batch.frame(i))) return false;
        this.clientPosition = row.position;
      }
      this.position = row.position;
      if (this.res.writableLength > this.tuning.lowWaterBytes) {
        finished = i === batch.rows.length - 1;
        break;
      }
    }
    if (this.position > this.clientPosition) {
      // Only filtered rows since the last frame: hand the client a cursor past them.
      const cursor = this.reads.cursors.encode(this.request.scope, this.position);
      if (!this.sse.send({ id: cursor, event: STREAM_CURSOR })) return false;
      this.clientPosition = this.position;
    }
    return finished;
  }

  private drop(): void {
    this.services.logger.info({ scope: this.request.scope.kind }, 'event stream dropped: the client stopped reading');
    this.sse.close();
    this.res.destroy();
  }
}

function waitForDrain(res: SseResponse, timeoutMs: number): Promise<DrainOutcome> {
  return new Promise((resolve) => {
    const done = (outcome: DrainOutcome) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(outcome);
    };
    const onDrain = () => done('drained');
    const onClose = () => done('closed');
    const timer = setTimeout(() => done('stalled'), timeoutMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}
