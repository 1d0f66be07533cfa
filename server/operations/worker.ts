// Durable operations: rows with a state, attempts and a fence token. A worker claims a queued
// operation (bumping the fence) under a lease it renews while the run goes on, does the slow work
// outside any transaction, then publishes and finalizes in one transaction that only commits while
// it still holds the fence. Cancel bumps the fence too, so a worker that lost it can never publish.
// A run that outlives its deadline stops being renewed; once its lease lapses the watchdog aborts
// it and requeues (or fails) the operation, so a hung runner never holds a worker slot for good.
import {
  TERMINAL_OPERATION_STATES,
  type Operation,
  type OperationError,
  type OperationState,
} from '../../sdk/contract/operations';
import { isoTime, type Clock } from '../clock';
import type { EventLog } from '../events/event-log';
import { ProblemError, problem, type Generation } from '../problem';
import { problemBody } from '../http/problem-response';
import { newId } from '../keys';
import type { Logger } from '../logger';
import type { Notifier } from '../notifier';
import { expectUpdated, type Db, type Store, type Tx, type Work } from '../store/store';
import type { OperationTable } from './operations.tables';

export type OperationRow = OperationTable;

/** An interrupted operation is retried this many times in all before it fails. */
export const MAX_ATTEMPTS = 3;
/** A claim lapses this long after its last renewal: a dead worker's runs are retaken within it. */
export const LEASE_MS = 2 * 60_000;
/** Live runs renew their lease this often (a quarter of it, so a slow renewal never lets it lapse). */
export const LEASE_RENEW_EVERY_MS = 30_000;
/** The watchdog looks for lapsed leases this often. */
export const LEASE_CHECK_EVERY_MS = 30_000;
/**
 * A run that failed because a dependency was down (the database, the bucket) is tried again once
 * its lease, set to lapse this long after the failure, lapses: the watchdog requeues it, up to
 * MAX_ATTEMPTS in all, so an outage of a minute does not fail an upload for good.
 */
export const UNAVAILABLE_RETRY_MS = 30_000;
/** The failure of a streamed upload whose receiving server stopped renewing its lease. */
const RECEIVER_GONE = 'the server receiving the upload stopped; upload again';
/** Longest one attempt may run unless its runner says otherwise; verifying 1 GiB takes minutes, not this. */
export const RUN_DEADLINE_MS = 30 * 60_000;
const IDLE_POLL_MS = 2000;
const WAKE_CHANNEL = 'operations:queued';

export const TERMINAL: ReadonlySet<OperationState> = new Set(TERMINAL_OPERATION_STATES);

export interface RunControl {
  fence: number;
  /** Aborted when the operation is cancelled or the server drains. */
  signal: AbortSignal;
}

/** Publication step: runs in the finalizing transaction and returns the operation's public result. */
export type Publish = (work: Work) => Promise<Record<string, unknown>>;

export interface OperationRunner {
  kind: string;
  /** Slow work outside transactions; throw a ProblemError to fail the operation with it. */
  run(op: OperationRow, control: RunControl): Promise<Publish>;
  /** In the transaction that fails or cancels the operation: release reservations, mark resources. */
  onTerminal?(work: Work, op: OperationRow, state: 'failed' | 'cancelled', now: number): Promise<void>;
  /** After a run that did not publish (failure, cancel, lost fence): remove staged bytes. */
  discard?(op: OperationRow): Promise<void>;
  /** Whether a `receiving` operation survives a restart (media waits for its PUT) or fails (a streamed body died). */
  receivingSurvivesRestart?: boolean;
  /** Longest one attempt may run (default RUN_DEADLINE_MS); past it the lease is no longer renewed. */
  maxRunMs?: number;
}

/** One run in this process. */
interface Execution {
  op: OperationRow;
  controller: AbortController;
  /** After this (clock time) the lease is no longer renewed. */
  deadline: number;
  /** Set once the run no longer counts against the worker's concurrency. */
  released: boolean;
}

export class FenceLostError extends Error {
  constructor(id: string) {
    super(`operation ${id} lost its fence`);
  }
}

/** The wire shape (sdk/contract/operations.ts) of a stored operation. */
export function operationView(op: OperationRow): Operation {
  const view: Operation = {
    id: op.id,
    kind: op.kind,
    state: op.state,
    created_at: isoTime(op.created_at),
    updated_at: isoTime(op.updated_at),
  };
  if (op.request_id) view.request_id = op.request_id;
  if (op.result) view.result = JSON.parse(op.result) as Record<string, unknown>;
  if (op.error) view.error = JSON.parse(op.error) as OperationError;
  return view;
}

/** The problem document stored on a failed operation: the HTTP rendering, in its tenant's generation. */
export function operationProblem(
  error: ProblemError,
  context: { controlOrigin: string; generation: Generation; operationId: string },
): OperationError {
  return problemBody(error, {
    controlOrigin: context.controlOrigin,
    generation: context.generation,
    instance: `/api/v1/operations/${context.operationId}`,
  }) as OperationError;
}

export interface NewOperation {
  tenantId: string;
  kind: string;
  state: 'receiving' | 'queued';
  input: Record<string, unknown>;
  requestId?: string;
  id?: string;
}

export class OperationWorker {
  private readonly runners = new Map<string, OperationRunner>();
  private readonly running = new Map<string, Execution>();
  private active = 0;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private pump: Promise<void> = Promise.resolve();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      notifier: Notifier;
      events: EventLog;
      logger: Logger;
      controlOrigin: string;
      /** This worker's identity, stable across restarts of the same node (its data directory). */
      workerId: string;
    },
    private readonly concurrency = 2,
  ) {}

  get workerId(): string {
    return this.deps.workerId;
  }

  register(runner: OperationRunner): void {
    this.runners.set(runner.kind, runner);
  }

  /** Creates an operation in the caller's transaction; queued ones wake the worker after commit. */
  async create(work: Work, input: NewOperation, now: number): Promise<OperationRow> {
    const receivesStream = input.state === 'receiving' && !this.runners.get(input.kind)?.receivingSurvivesRestart;
    const row: OperationRow = {
      id: input.id ?? newId('op'),
      tenant_id: input.tenantId,
      kind: input.kind,
      state: input.state,
      fence: 0,
      attempts: 0,
      // A streamed body being received belongs to this process, which renews its lease while it lives:
      // its restart gives it up, and so does the watchdog once the lease lapses (a replica gone for good).
      lease_expires_at: receivesStream ? now + LEASE_MS : null,
      lease_owner: input.state === 'receiving' ? this.deps.workerId : null,
      input: JSON.stringify(input.input),
      result: null,
      error: null,
      request_id: input.requestId ?? null,
      created_at: now,
      updated_at: now,
    };
    await work.db.insertInto('operations').values(row).execute();
    if (input.state === 'queued') work.afterCommit(() => this.deps.notifier.publish(WAKE_CHANNEL));
    return row;
  }

  /** Moves a `receiving` operation to `queued` (its bytes are staged); false when it was cancelled meanwhile. */
  async enqueue(work: Work, id: string, now: number, input?: Record<string, unknown>): Promise<boolean> {
    const result = await work.db
      .updateTable('operations')
      .set({
        state: 'queued',
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
        ...(input ? { input: JSON.stringify(input) } : {}),
      })
      .where('id', '=', id)
      .where('state', '=', 'receiving')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    work.afterCommit(() => this.deps.notifier.publish(WAKE_CHANNEL));
    return true;
  }

  async get(db: Db | Tx, tenantId: string, id: string): Promise<OperationRow> {
    const op = await db
      .selectFrom('operations')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!op) throw problem('not_found', 'operation not found');
    return op;
  }

  /**
   * Cancels a non-final operation in the caller's transaction: the fence moves, so a worker still
   * running it cannot finalize. Cancelling a cancelled operation is a no-op; a finished one conflicts.
   */
  async cancel(work: Work, tenantId: string, id: string, now: number, requestId?: string): Promise<OperationRow> {
    const op = await this.get(work.db, tenantId, id);
    if (op.state === 'cancelled') return op;
    if (TERMINAL.has(op.state))
      throw problem('resource_conflict', `operation already ${op.state}; only unfinished operations can be cancelled`);
    // Only if still unfinished: a cancel or a finalization that committed since the read ran the
    // outcome already, and this unit of work runs again to find it.
    expectUpdated(
      await work.db
        .updateTable('operations')
        .set({ state: 'cancelled', fence: op.fence + 1, updated_at: now, lease_expires_at: null, lease_owner: null })
        .where('id', '=', id)
        .where('state', 'not in', [...TERMINAL])
        .executeTakeFirst(),
      'operation',
    );
    await this.runners.get(op.kind)?.onTerminal?.(work, op, 'cancelled', now);
    await this.appendOutcome(work, op, 'cancelled', now, requestId);
    work.afterCommit(() => this.running.get(id)?.controller.abort(new Error('cancelled')));
    return { ...op, state: 'cancelled', fence: op.fence + 1, updated_at: now };
  }

  /** The failure problem as stored on the operation, rendered for its tenant's generation. */
  private async storedProblem(work: Work, op: OperationRow, error: ProblemError): Promise<string> {
    const tenant = await work.db
      .selectFrom('tenants')
      .select('generation')
      .where('id', '=', op.tenant_id)
      .executeTakeFirst();
    return JSON.stringify(
      operationProblem(error, {
        controlOrigin: this.deps.controlOrigin,
        generation: tenant?.generation ?? 'P',
        operationId: op.id,
      }),
    );
  }

  /** Fails a non-final operation outside the worker (an upload body that could not be staged). */
  async fail(work: Work, op: OperationRow, error: ProblemError, now: number): Promise<boolean> {
    const result = await work.db
      .updateTable('operations')
      .set({
        state: 'failed',
        error: await this.storedProblem(work, op, error),
        fence: op.fence + 1,
        updated_at: now,
        lease_expires_at: null,
        lease_owner: null,
      })
      .where('id', '=', op.id)
      .where('state', 'not in', [...TERMINAL])
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await this.runners.get(op.kind)?.onTerminal?.(work, op, 'failed', now);
    await this.appendOutcome(work, op, 'failed', now);
    return true;
  }

  /**
   * Requeues or fails what this worker left running or receiving before it restarted, and any run
   * whose lease lapsed; another live worker's runs and uploads are left alone. Then starts claiming.
   */
  async start(): Promise<void> {
    const now = this.deps.clock.now();
    const interrupted = await this.deps.store.db
      .selectFrom('operations')
      .selectAll()
      .where('state', 'in', ['running', 'receiving'])
      .execute();
    for (const op of interrupted) {
      const runner = this.runners.get(op.kind);
      const mine = op.lease_owner === null || op.lease_owner === this.deps.workerId;
      if (op.state === 'receiving' && (!mine || runner?.receivingSurvivesRestart)) continue;
      // Another live worker's run, or one waiting out its retry delay (no owner; D-420), is left alone.
      const waiting = op.lease_owner === null && op.lease_expires_at !== null;
      if (op.state === 'running' && (!mine || waiting) && op.lease_expires_at !== null && op.lease_expires_at > now)
        continue;
      await this.reclaim(
        op,
        now,
        op.state === 'receiving' ? 'the upload was interrupted by a server restart; upload again' : undefined,
      );
    }
    this.stopped = false;
    this.unsubscribe = this.deps.notifier.subscribe(WAKE_CHANNEL, () => this.kick());
    this.timer = setInterval(() => this.kick(), IDLE_POLL_MS);
    this.timer.unref();
    this.renewTimer = setInterval(
      () => void this.renewLeases().catch((error) => this.deps.logger.warn({ err: error }, 'lease renewal failed')),
      LEASE_RENEW_EVERY_MS,
    );
    this.renewTimer.unref();
    this.kick();
  }

  /**
   * Takes back an operation whose run is over without an outcome (its worker restarted or its
   * lease lapsed): requeued with a new fence while attempts remain, else failed. A `receiving` one
   * fails with `receivingDetail`. Returns the new state, or undefined when it moved meanwhile.
   */
  private async reclaim(
    op: OperationRow,
    now: number,
    receivingDetail?: string,
  ): Promise<'queued' | 'failed' | undefined> {
    const runner = this.runners.get(op.kind);
    const state = await this.deps.store.transaction(async (work) => {
      if (op.state === 'running' && op.attempts < MAX_ATTEMPTS && runner) {
        const result = await work.db
          .updateTable('operations')
          .set({ state: 'queued', fence: op.fence + 1, lease_expires_at: null, lease_owner: null, updated_at: now })
          .where('id', '=', op.id)
          .where('state', '=', 'running')
          .where('fence', '=', op.fence)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) return undefined;
        work.afterCommit(() => this.deps.notifier.publish(WAKE_CHANNEL));
        return 'queued' as const;
      }
      const current = await work.db.selectFrom('operations').select('fence').where('id', '=', op.id).executeTakeFirst();
      if (current?.fence !== op.fence) return undefined;
      const detail =
        receivingDetail ?? `the operation was interrupted or did not finish in time ${op.attempts} times; giving up`;
      return (await this.fail(work, op, problem('internal_error', detail), now)) ? ('failed' as const) : undefined;
    });
    if (state !== undefined && op.state === 'running') {
      const local = this.running.get(op.id);
      if (local?.op.fence === op.fence) {
        // A run of this process that overran: abort it and free its slot even if it never returns.
        local.controller.abort(new Error('lease expired'));
        this.release(local);
      } else {
        await runner?.discard?.(op).catch(() => undefined);
      }
    }
    return state;
  }

  /**
   * Extends the lease of every run of this process that is still within its deadline, and of every
   * streamed body it is receiving.
   */
  async renewLeases(): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.store.db
      .updateTable('operations')
      .set({ lease_expires_at: now + LEASE_MS })
      .where('state', '=', 'receiving')
      .where('lease_owner', '=', this.deps.workerId)
      .where('lease_expires_at', 'is not', null)
      .execute();
    for (const run of this.running.values()) {
      if (run.released || now >= run.deadline) continue;
      await this.deps.store.db
        .updateTable('operations')
        .set({ lease_expires_at: now + LEASE_MS })
        .where('id', '=', run.op.id)
        .where('fence', '=', run.op.fence)
        .where('state', '=', 'running')
        .where('lease_owner', '=', this.deps.workerId)
        .execute();
    }
  }

  /** The watchdog (a housekeeping job): takes back every running operation whose lease lapsed. */
  async expireLeases(): Promise<number> {
    const now = this.deps.clock.now();
    const lapsed = await this.deps.store.db
      .selectFrom('operations')
      .selectAll()
      .where('state', '=', 'running')
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
      .execute();
    let reclaimed = 0;
    for (const op of lapsed) {
      const state = await this.reclaim(op, now);
      if (state === undefined) continue;
      reclaimed++;
      this.deps.logger.warn(
        { operation_id: op.id, kind: op.kind, attempts: op.attempts, outcome: state },
        'operation lease lapsed; run taken back',
      );
    }
    // Streamed bodies whose receiver stopped renewing (it died, and may never start again).
    const abandoned = await this.deps.store.db
      .selectFrom('operations')
      .selectAll()
      .where('state', '=', 'receiving')
      .where('lease_expires_at', 'is not', null)
      .where('lease_expires_at', '<=', now)
      .execute();
    for (const op of abandoned) {
      if ((await this.reclaim(op, now, RECEIVER_GONE)) === undefined) continue;
      this.deps.logger.warn(
        { operation_id: op.id, kind: op.kind, lease_owner: op.lease_owner },
        'upload receiver lease lapsed; upload failed',
      );
    }
    if (reclaimed > 0) this.kick();
    return reclaimed;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.renewTimer);
    this.unsubscribe?.();
    // A claim under way when stop began may still start a run: let it, then abort it with the rest.
    await this.pump;
    for (const run of this.running.values()) run.controller.abort(new Error('server stopping'));
    if (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves once nothing is queued or running (tests). */
  async idle(): Promise<void> {
    for (;;) {
      await this.pump;
      const busy = await this.deps.store.db
        .selectFrom('operations')
        .select('id')
        .where('state', 'in', ['queued', 'running'])
        .executeTakeFirst();
      if (!busy && this.active === 0) return;
      await new Promise((r) => setTimeout(r, 10));
      this.kick();
    }
  }

  kick(): void {
    if (this.stopped) return;
    this.pump = this.pump
      .then(() => this.fill())
      .catch((error) => this.deps.logger.error({ err: error }, 'operation claim failed'));
  }

  private async fill(): Promise<void> {
    while (!this.stopped && this.active < this.concurrency) {
      const op = await this.claim();
      if (!op) return;
      this.active++;
      const run: Execution = {
        op,
        controller: new AbortController(),
        deadline: this.deps.clock.now() + (this.runners.get(op.kind)!.maxRunMs ?? RUN_DEADLINE_MS),
        released: false,
      };
      this.running.set(op.id, run);
      void this.execute(run).finally(() => this.release(run));
    }
  }

  /** The run no longer counts against concurrency (it ended, or it overran and was taken back). */
  private release(run: Execution): void {
    if (this.running.get(run.op.id) === run) this.running.delete(run.op.id);
    if (run.released) return;
    run.released = true;
    this.active--;
    if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.kick();
  }

  private async claim(): Promise<OperationRow | undefined> {
    const now = this.deps.clock.now();
    const kinds = [...this.runners.keys()];
    if (kinds.length === 0) return undefined;
    return this.deps.store.transaction(async ({ db }) => {
      const next = await db
        .selectFrom('operations')
        .selectAll()
        .where('state', '=', 'queued')
        .where('kind', 'in', kinds)
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (!next) return undefined;
      const claimed = {
        ...next,
        state: 'running' as const,
        fence: next.fence + 1,
        attempts: next.attempts + 1,
        lease_expires_at: now + LEASE_MS,
        lease_owner: this.deps.workerId,
        updated_at: now,
      };
      const result = await db
        .updateTable('operations')
        .set({
          state: claimed.state,
          fence: claimed.fence,
          attempts: claimed.attempts,
          lease_expires_at: claimed.lease_expires_at,
          lease_owner: claimed.lease_owner,
          updated_at: now,
        })
        .where('id', '=', next.id)
        .where('state', '=', 'queued')
        .where('fence', '=', next.fence)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1 ? claimed : undefined;
    });
  }

  private async execute(run: Execution): Promise<void> {
    const { op, controller } = run;
    const runner = this.runners.get(op.kind)!;
    let published = false;
    try {
      const publish = await runner.run(op, { fence: op.fence, signal: controller.signal });
      published = await this.deps.store.transaction(async (work) => {
        const now = this.deps.clock.now();
        const result = await work.db
          .updateTable('operations')
          .set({ state: 'succeeded', updated_at: now, lease_expires_at: null, lease_owner: null })
          .where('id', '=', op.id)
          .where('fence', '=', op.fence)
          .where('state', '=', 'running')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) throw new FenceLostError(op.id);
        const outcome = await publish(work);
        await work.db
          .updateTable('operations')
          .set({ result: JSON.stringify(outcome) })
          .where('id', '=', op.id)
          .execute();
        await this.appendOutcome(work, op, 'succeeded', now);
        return true;
      });
    } catch (error) {
      if (error instanceof FenceLostError)
        this.deps.logger.info({ operation_id: op.id }, 'operation was cancelled before it could publish');
      // An aborted run was taken away: cancelled, taken back after its lease lapsed (both moved the
      // fence), or stopped mid-run, which leaves the row running for the next start to requeue.
      else if (controller.signal.aborted) return;
      else
        await this.recordOutcome(op, error).catch((recording: unknown) =>
          // The database is out of reach as well: nothing renews the run's lease any more, so the
          // watchdog takes it back once it lapses. Thrown on, it would be an unhandled rejection.
          this.deps.logger.warn(
            { err: recording, operation_id: op.id },
            'operation outcome not recorded; the watchdog takes the run back once its lease lapses',
          ),
        );
    } finally {
      if (!published)
        await runner
          .discard?.(op)
          .catch((error) => this.deps.logger.warn({ err: error, operation_id: op.id }, 'discard failed'));
    }
  }

  /** A failed run: tried again later when a dependency was down and attempts remain, else failed. */
  private async recordOutcome(op: OperationRow, error: unknown): Promise<void> {
    if (isUnavailable(error) && op.attempts < MAX_ATTEMPTS) await this.retryLater(op, error);
    else await this.recordFailure(op, error);
  }

  /** Leaves the run to lapse UNAVAILABLE_RETRY_MS from now, when the watchdog requeues it. */
  private async retryLater(op: OperationRow, error: ProblemError): Promise<void> {
    this.deps.logger.warn(
      { err: error.options.cause ?? error, operation_id: op.id, attempts: op.attempts },
      `operation will be tried again: ${error.code}`,
    );
    await this.deps.store.db
      .updateTable('operations')
      .set({ lease_expires_at: this.deps.clock.now() + UNAVAILABLE_RETRY_MS, lease_owner: null })
      .where('id', '=', op.id)
      .where('fence', '=', op.fence)
      .where('state', '=', 'running')
      .execute();
  }

  private async recordFailure(op: OperationRow, error: unknown): Promise<void> {
    const p =
      error instanceof ProblemError
        ? error
        : problem('internal_error', 'the operation failed unexpectedly; see the server log for its id');
    if (!(error instanceof ProblemError))
      this.deps.logger.error({ err: error, operation_id: op.id }, 'operation failed unexpectedly');
    else if (error.options.cause !== undefined)
      this.deps.logger.warn({ err: error.options.cause, operation_id: op.id }, `operation failed: ${error.code}`);
    await this.deps.store.transaction(async (work) => {
      const now = this.deps.clock.now();
      const result = await work.db
        .updateTable('operations')
        .set({
          state: 'failed',
          error: await this.storedProblem(work, op, p),
          updated_at: now,
          lease_expires_at: null,
          lease_owner: null,
        })
        .where('id', '=', op.id)
        .where('fence', '=', op.fence)
        .where('state', '=', 'running')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return;
      await this.runners.get(op.kind)?.onTerminal?.(work, op, 'failed', now);
      await this.appendOutcome(work, op, 'failed', now);
    });
  }

  private async appendOutcome(
    work: Work,
    op: OperationRow,
    state: 'succeeded' | 'failed' | 'cancelled',
    now: number,
    requestId?: string,
  ): Promise<void> {
    await this.deps.events.append(
      work,
      {
        tenantId: op.tenant_id,
        type: `operation.${state}`,
        severity: state === 'failed' ? 'warning' : 'info',
        message: `${op.kind} operation ${state}`,
        resource: { type: 'operation', id: op.id },
        operationId: op.id,
        requestId: requestId ?? op.request_id ?? undefined,
        details: { kind: op.kind },
      },
      now,
    );
  }
}

/** A failure that says a dependency was down, not that the work itself is wrong. */
function isUnavailable(error: unknown): error is ProblemError {
  return error instanceof ProblemError && error.code === 'dependency_unavailable';
}
