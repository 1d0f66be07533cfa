// The player's proof-of-play queue: every item that starts on glass is written down (with a new
// report id) before anything is uploaded, closed when it leaves glass, and deleted only after the
// server acknowledged it. A crash loses nothing written: at the next start, showings left open are
// closed as interrupted (their time on glass unknown, so counted as none). The queue is bounded
// (QUEUE_MAX_SHOWINGS, over a week of a busy screen): past it the oldest are dropped and counted,
// and the player reports how many (`playback.reports_dropped`) once it is online.
import {
  PLAYBACK_BATCH_MAX,
  PLAYBACK_REPORT_MAX_AGE_MS,
  type PlaybackReport,
  type ShowingOutcome,
} from '../../../sdk/contract/playback';

/**
 * Showings kept while the server is away: a screen changing items every 8 s on three placements
 * makes about 227,000 a week; each is a few hundred bytes in IndexedDB.
 */
export const QUEUE_MAX_SHOWINGS = 250_000;

/** What the engine knows when an item comes on glass. */
export interface ShowingFacts {
  manifestRevision: string;
  pageId: string;
  /** The adslot the page is, if it is one. */
  slotKey?: string;
  placementId: string;
  mediaId?: string;
  applicationId?: string;
  /** On the playback clock (the server's, as well as the player knows it). */
  startedAt: number;
}

/** One written-down showing; `endedAt` is null while it is on glass. */
export interface QueuedShowing {
  /** Assigned by the store, increasing: the order showings started in. */
  seq?: number;
  id: string;
  facts: ShowingFacts;
  endedAt: number | null;
  outcome: ShowingOutcome | null;
}

/** Where the queue lives: IndexedDB in the player (offline/player-database.ts), memory in tests. */
export interface ShowingStore {
  /** Adds a showing; answers its seq. */
  add(showing: QueuedShowing): Promise<number>;
  /** Closes the showing `seq` (a no-op when it is gone). */
  close(seq: number, endedAt: number, outcome: ShowingOutcome): Promise<void>;
  /** Up to `limit` showings in seq order from the oldest. */
  oldest(limit: number): Promise<QueuedShowing[]>;
  /** Every showing still open. */
  open(): Promise<QueuedShowing[]>;
  delete(seqs: readonly number[]): Promise<void>;
  count(): Promise<number>;
  /** Deletes the `n` oldest; answers how many went. */
  dropOldest(n: number): Promise<number>;
}

/** A showing on glass: end it once it leaves. */
export interface ShowingHandle {
  end(at: number, outcome: ShowingOutcome): void;
}

export interface PlaybackQueueOptions {
  store: ShowingStore;
  /** A new report id (a UUID). */
  newId?: () => string;
  max?: number;
  onError?: (error: unknown) => void;
}

/** The report a closed showing is uploaded as. */
export function reportOf(s: QueuedShowing): PlaybackReport {
  const f = s.facts;
  return {
    id: s.id,
    manifest_revision: f.manifestRevision,
    page_id: f.pageId,
    placement_id: f.placementId,
    ...(f.slotKey !== undefined ? { slot_key: f.slotKey } : {}),
    ...(f.mediaId !== undefined ? { media_id: f.mediaId } : { application_id: f.applicationId! }),
    started_at: new Date(f.startedAt).toISOString(),
    ended_at: new Date(Math.max(s.endedAt ?? f.startedAt, f.startedAt)).toISOString(),
    outcome: s.outcome ?? 'interrupted',
  };
}

export class PlaybackQueue {
  private readonly store: ShowingStore;
  private readonly newId: () => string;
  private readonly max: number;
  private readonly onError: (error: unknown) => void;
  /** Writes in the order they were asked for (a close must follow its add). */
  private tail: Promise<unknown> = Promise.resolve();
  /** Showings dropped at the bound (or too old to count) since the last time they were reported. */
  dropped = 0;
  /** How many the store holds, counted once and then kept (a count of a large IndexedDB store walks it). */
  private held: number | null = null;

  constructor(options: PlaybackQueueOptions) {
    this.store = options.store;
    this.newId = options.newId ?? (() => crypto.randomUUID());
    this.max = options.max ?? QUEUE_MAX_SHOWINGS;
    this.onError = options.onError ?? (() => undefined);
  }

  private write<T>(fn: () => Promise<T>): Promise<T | undefined> {
    const next = this.tail.then(fn).catch((error: unknown) => {
      this.onError(error);
      return undefined;
    });
    this.tail = next;
    return next;
  }

  /** Waits for every write asked for so far. */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** An item came on glass: written down at once, with its own report id. */
  begin(facts: ShowingFacts): ShowingHandle {
    const seq = this.write(async () => {
      const added = await this.store.add({ id: this.newId(), facts, endedAt: null, outcome: null });
      this.held = (this.held ?? (await this.store.count()) - 1) + 1;
      if (this.held > this.max) {
        const gone = await this.store.dropOldest(this.held - this.max);
        this.dropped += gone;
        this.held -= gone;
      }
      return added;
    });
    let ended = false;
    return {
      end: (at, outcome) => {
        if (ended) return;
        ended = true;
        void this.write(async () => {
          const s = await seq;
          if (s !== undefined) await this.store.close(s, Math.max(at, facts.startedAt), outcome);
        });
      },
    };
  }

  /** At start: showings a crash (or a closed tab) left open are closed as interrupted, with no time on glass. */
  recover(): Promise<number | undefined> {
    return this.write(async () => {
      const open = await this.store.open();
      for (const s of open) await this.store.close(s.seq!, s.facts.startedAt, 'interrupted');
      return open.length;
    });
  }

  /**
   * The next upload: closed showings from the oldest, in order, at most PLAYBACK_BATCH_MAX. Open ones
   * wait (they are on glass); ones the server would refuse as too old are dropped here.
   */
  async nextBatch(now: number, max = PLAYBACK_BATCH_MAX): Promise<QueuedShowing[]> {
    await this.settled();
    const batch: QueuedShowing[] = [];
    const stale: number[] = [];
    // Open showings are few (what is on glass now), so a window a little larger than a batch is enough.
    for (const s of await this.store.oldest(max + 64)) {
      if (s.endedAt === null) continue;
      if (s.facts.startedAt < now - PLAYBACK_REPORT_MAX_AGE_MS) stale.push(s.seq!);
      else if (batch.length < max) batch.push(s);
    }
    if (stale.length > 0) {
      await this.remove(stale);
      this.dropped += stale.length;
    }
    return batch;
  }

  /** The server acknowledged these (counted, duplicate or refused): they go. */
  acknowledge(showings: readonly QueuedShowing[]): Promise<void | undefined> {
    return this.remove(showings.map((s) => s.seq!));
  }

  private remove(seqs: number[]): Promise<void | undefined> {
    return this.write(async () => {
      await this.store.delete(seqs);
      if (this.held !== null) this.held = Math.max(0, this.held - seqs.length);
    });
  }

  size(): Promise<number> {
    return this.settled().then(() => this.store.count());
  }
}

/** The queue in memory (tests; a player without IndexedDB, which then loses its queue on a reload). */
export class MemoryShowingStore implements ShowingStore {
  private readonly rows = new Map<number, QueuedShowing>();
  private next = 1;

  async add(showing: QueuedShowing): Promise<number> {
    const seq = this.next++;
    this.rows.set(seq, { ...showing, seq });
    return seq;
  }

  async close(seq: number, endedAt: number, outcome: ShowingOutcome): Promise<void> {
    const row = this.rows.get(seq);
    if (row) this.rows.set(seq, { ...row, endedAt, outcome });
  }

  async oldest(limit: number): Promise<QueuedShowing[]> {
    return [...this.rows.values()].slice(0, limit);
  }

  async open(): Promise<QueuedShowing[]> {
    return [...this.rows.values()].filter((r) => r.endedAt === null);
  }

  async delete(seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) this.rows.delete(seq);
  }

  async count(): Promise<number> {
    return this.rows.size;
  }

  async dropOldest(n: number): Promise<number> {
    const seqs = [...this.rows.keys()].slice(0, n);
    for (const seq of seqs) this.rows.delete(seq);
    return seqs.length;
  }
}
