// Applies schedule boundaries and takeover ends exactly when they are due, durably. Each screen's
// next boundary is a row of screen_boundaries (written by screen-resolution.ts in the transaction
// that changed the screen); this timer holds one setTimeout, for the earliest row, and re-arms when
// a write announces an earlier one. Boundaries that passed while the server was down are applied at
// start-up. No screen is looked at before its boundary: nothing polls the fleet.
import type { Clock } from '../clock';
import type { EventLog } from '../events/event-log';
import type { Logger } from '../logger';
import type { Notifier } from '../notifier';
import type { Store } from '../store/store';
import { screenChanged } from './remint';
import { BOUNDARY_CHANNEL } from './screen-resolution';

/** Screens one pass reads at a time; a pass runs until no due boundary is left. */
const BOUNDARIES_PER_PASS = 200;
/**
 * The longest single wait: setTimeout holds at most 2^31-1 ms, and a wall clock that jumps (NTP, a
 * suspended VM) is caught within this. Re-arming reads one indexed MIN(due_at), not the screens.
 */
const MAX_WAIT_MS = 60 * 60_000;
/**
 * A boundary that failed to apply (a screen whose resolution throws, after the store's own retries
 * of a transient conflict) is tried again this much later: the screens due after it still switch on
 * time, the timer does not spin on the same failure, and a passing fault costs seconds, not minutes.
 */
export const FAILED_BOUNDARY_RETRY_MS = 10_000;

export interface BoundaryTimerDeps {
  store: Store;
  events: EventLog;
  clock: Clock;
  notifier: Notifier;
  logger: Logger;
}

export class BoundaryTimer {
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private unsubscribe: (() => void) | undefined;
  private running: Promise<void> | undefined;
  /**
   * The earliest boundary announced while a pass runs: its read of the earliest row may have been
   * taken before that write committed, and the pass's arming must not replace the wait for it.
   */
  private heardDuringPass = Number.POSITIVE_INFINITY;
  private stopped = true;

  constructor(private readonly deps: BoundaryTimerDeps) {}

  /** Applies what came due while the server was down, then waits for the earliest boundary. */
  async start(): Promise<void> {
    this.stopped = false;
    this.unsubscribe = this.deps.notifier.subscribe(BOUNDARY_CHANNEL, (dueAt) => {
      if (typeof dueAt !== 'number') return;
      if (this.running) this.heardDuringPass = Math.min(this.heardDuringPass, dueAt);
      if (dueAt < this.armedFor) this.armAt(dueAt);
    });
    await this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  /** Applies every boundary due at the clock's now (also what the timer calls); returns how many. */
  async runDue(): Promise<number> {
    let applied = 0;
    for (;;) {
      const now = this.deps.clock.now();
      const due = await this.deps.store.db
        .selectFrom('screen_boundaries')
        .select('screen_id')
        .where('due_at', '<=', now)
        .orderBy('due_at')
        .limit(BOUNDARIES_PER_PASS)
        .execute();
      if (due.length === 0) return applied;
      for (const { screen_id } of due) {
        try {
          await this.apply(screen_id, now);
          applied++;
        } catch (error) {
          this.deps.logger.error(
            { err: error, screen_id },
            'applying a schedule boundary failed; the screen is tried again shortly',
          );
          await this.postpone(screen_id, now, now + FAILED_BOUNDARY_RETRY_MS);
        }
      }
    }
  }

  /** Moves a due boundary that failed to `retryAt`, unless a write moved it meanwhile. */
  private async postpone(screenId: string, now: number, retryAt: number): Promise<void> {
    await this.deps.store.db
      .updateTable('screen_boundaries')
      .set({ due_at: retryAt })
      .where('screen_id', '=', screenId)
      .where('due_at', '<=', now)
      .execute();
  }

  /** One screen's boundary, in its own transaction: re-resolved at now, reminted when it switched. */
  private async apply(screenId: string, now: number): Promise<void> {
    const { store, events } = this.deps;
    await store.transaction(async (work) => {
      // Every replica runs a timer: one applies the boundary, the others then read it moved.
      await work.lock(`screen-boundary:${screenId}`);
      const row = await work.db
        .selectFrom('screen_boundaries')
        .select('due_at')
        .where('screen_id', '=', screenId)
        .executeTakeFirst();
      if (!row || row.due_at > now) return; // moved by a write meanwhile
      const screen = await work.db.selectFrom('screens').selectAll().where('id', '=', screenId).executeTakeFirst();
      if (!screen || screen.state === 'deleted') {
        await work.db.deleteFrom('screen_boundaries').where('screen_id', '=', screenId).execute();
        return;
      }
      await screenChanged(events, work, screen, screen, now, { cause: 'boundary' });
    });
  }

  /**
   * The clock moved other than by time passing (a test's injected clock jumped): applies what is
   * due now and arms for the next boundary as the clock now reads it.
   */
  wake(): Promise<void> {
    return this.tick();
  }

  /** Runs the due boundaries (one pass at a time) and arms for the next. */
  private async tick(): Promise<void> {
    if (this.running) return this.running;
    this.heardDuringPass = Number.POSITIVE_INFINITY;
    this.running = (async () => {
      let failed = false;
      try {
        await this.runDue();
      } catch (error) {
        failed = true;
        this.deps.logger.error({ err: error }, 'applying schedule boundaries failed; retrying shortly');
      }
      const next = await this.deps.store.db
        .selectFrom('screen_boundaries')
        .select((eb) => eb.fn.min('due_at').as('due_at'))
        .executeTakeFirst()
        .catch(() => undefined);
      this.armedFor = Number.POSITIVE_INFINITY;
      // After a failure (the store itself), a boundary still due would re-arm at once: wait instead.
      const notBefore = failed ? this.deps.clock.now() + FAILED_BOUNDARY_RETRY_MS : 0;
      const earliest = Math.min(
        next?.due_at == null ? Number.POSITIVE_INFINITY : Number(next.due_at),
        this.heardDuringPass,
      );
      if (earliest !== Number.POSITIVE_INFINITY) this.armAt(Math.max(earliest, notBefore));
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private armAt(dueAt: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.armedFor = dueAt;
    const wait = Math.min(Math.max(0, dueAt - this.deps.clock.now()), MAX_WAIT_MS);
    this.timer = setTimeout(() => void this.tick(), wait);
    this.timer.unref();
  }
}
