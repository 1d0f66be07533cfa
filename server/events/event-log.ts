// The durable event log: every mutation appends its events in its own transaction, and open streams
// are woken only after that transaction commits (no event without its change, and none before it).
// Events are typed by the contract's catalog (sdk/contract/event-types.ts): a writer cannot put a
// wrong details shape in, and the log checks each event against its schema before writing it.
import { EVENT_TYPES, eventDetailsIssues, type TypedEvent } from '../../sdk/contract/event-types';
import type { EventActor, EventSeverity } from '../../sdk/contract/events';
import type { Notifier } from '../notifier';
import { compiledOnce, type CompiledOnce } from '../store/compiled-once';
import type { Tx, Work } from '../store/store';

export type Severity = EventSeverity;

interface EventEnvelope {
  tenantId: string;
  message: string;
  severity?: Severity;
  /** Screen-scoped events reach that screen's runtime stream when their type is a runtime type. */
  screenId?: string;
  resource?: { type: string; id: string };
  requestId?: string;
  operationId?: string;
  /** The person whose dashboard request caused it (never set by agents, players or workers). */
  actor?: EventActor;
}

/** An event to append: its envelope and one type of the catalog with that type's details. */
export type NewEvent = EventEnvelope & TypedEvent;

/**
 * Rows of one INSERT: a 500-screen change is one statement, and the bound parameters (12 a row)
 * stay far below SQLite's 32,766 and PostgreSQL's 65,535.
 */
export const EVENTS_PER_STATEMENT = 1000;

/** Notifier channels: one per tenant, one per screen. */
export const tenantChannel = (tenantId: string) => `events:tenant:${tenantId}`;
export const screenChannel = (screenId: string) => `events:screen:${screenId}`;
/** Published when a tenant's open streams must end (an operator suspended it). */
export const tenantStreamsEndChannel = (tenantId: string) => `streams-end:tenant:${tenantId}`;
/** Published when the streams a credential opened must end (it was revoked). */
export const credentialStreamsEndChannel = (credentialId: string) => `streams-end:credential:${credentialId}`;

/** An event whose details break the contract is a server bug: refused, and its transaction with it. */
function checked(event: NewEvent): NewEvent {
  const issues = eventDetailsIssues(event.type, event.details);
  if (issues.length > 0) throw new Error(`event ${event.type} does not match its contract: ${issues.join('; ')}`);
  return event;
}

/** An event a unit of work holds back, with the instant it was appended at. */
export interface HeldEvent {
  event: NewEvent;
  now: number;
}

/** A unit of work whose events wait to be written with its group's (EventLog.hold). */
export interface HoldingWork extends Work {
  heldEvents: HeldEvent[];
}

export class EventLog {
  constructor(private readonly notifier: Notifier) {}

  /**
   * Wakes a listener that is not an event stream (the manifests' boundary timer) once the work
   * commits, through the same notifier, so replicas sharing a store hear it too.
   */
  announce(work: Work, channel: string, message?: unknown): void {
    work.afterCommit(() => this.notifier.publish(channel, message));
  }

  /** Appends one event in the caller's transaction; answers its position (none while held: `hold`). */
  async append(work: Work, event: NewEvent, now: number): Promise<number | undefined> {
    return (await this.appendMany(work, [event], now))?.[0];
  }

  /**
   * Appends events in the caller's transaction, in this order, with one INSERT per
   * EVENTS_PER_STATEMENT events, and answers their positions in the same order. A unit of work
   * that holds its events (`hold`) keeps them instead, and no position is known yet.
   */
  async appendMany(work: Work, events: readonly NewEvent[], now: number): Promise<number[] | undefined> {
    const entries = events.map((event) => ({ event: checked(event), now }));
    const held = (work as Partial<HoldingWork>).heldEvents;
    if (!held) return this.write(work, entries);
    held.push(...entries);
    return undefined;
  }

  /**
   * A unit of `work` that holds the events appended through it (one unit of a group sharing a transaction: a fleet
   * action's screen) instead of inserting each; the caller writes a group's held events with
   * `writeHeld` in the same transaction, one INSERT for all. Checked when appended, so a unit
   * with a bad event still fails; a unit rolled back never passes its held events on.
   */
  hold(work: Work): HoldingWork {
    return { ...work, heldEvents: [] };
  }

  /** Writes held events, in the order they were appended. */
  async writeHeld(work: Work, held: readonly HeldEvent[]): Promise<void> {
    await this.write(work, held);
  }

  private async write(work: Work, entries: readonly HeldEvent[]): Promise<number[]> {
    if (entries.length === 0) return [];
    // Positions are taken at insert but seen at commit. Where transactions run side by side
    // (PostgreSQL), a reader could pass position 11 before a concurrent 10 commits and never see
    // it; one appending transaction per project at a time keeps every scope's commits in position
    // order (every stream scope lies inside one project).
    await work.lock(...entries.map((entry) => `events:${entry.event.tenantId}`));
    const positions: number[] = [];
    for (let start = 0; start < entries.length; start += EVENTS_PER_STATEMENT) {
      const batch = entries.slice(start, start + EVENTS_PER_STATEMENT);
      const inserted = await insertEvents(work.db, batch);
      // Rows are numbered in the order they are inserted; RETURNING's order is not promised.
      positions.push(...inserted.map((row) => row.position).sort((a, b) => a - b));
    }
    work.afterCommit(() => {
      entries.forEach(({ event }, i) => {
        this.notifier.publish(tenantChannel(event.tenantId), positions[i]!);
        if (event.screenId) this.notifier.publish(screenChannel(event.screenId), positions[i]!);
      });
    });
    return positions;
  }
}

/** An event row's values, in the order the compiled INSERT names its columns (insertOf). */
function rowValues({ event, now }: HeldEvent): unknown[] {
  return [
    event.tenantId,
    event.screenId ?? null,
    event.type,
    event.severity ?? 'info',
    event.message,
    event.resource?.type ?? null,
    event.resource?.id ?? null,
    event.details === undefined ? null : JSON.stringify(event.details),
    EVENT_TYPES[event.type].runtime ? 1 : 0,
    event.requestId ?? null,
    event.operationId ?? null,
    event.actor?.user_id ?? null,
    event.actor?.display_name ?? null,
    now,
  ];
}

/** Values a row binds (rowValues). */
const ROW_VALUES = 14;

/**
 * The INSERT of `rows` events, compiled once for each number of rows: a fleet group appends the
 * same number of events each time, and building a 200-row INSERT cost more than SQLite takes to
 * run it. At most COMPILED_INSERT_SIZES sizes are kept (then they are compiled again as needed).
 */
const COMPILED_INSERT_SIZES = 64;
const compiledInserts = new Map<number, CompiledOnce<unknown[], { position: number }>>();

function insertOf(rows: number): CompiledOnce<unknown[], { position: number }> {
  let insert = compiledInserts.get(rows);
  if (!insert) {
    if (compiledInserts.size >= COMPILED_INSERT_SIZES) compiledInserts.clear();
    insert = compiledOnce<unknown[], { position: number }>((db, slot) =>
      db
        .insertInto('events')
        .values(
          Array.from({ length: rows }, (_, r) => {
            const value = (c: number) => slot(r * ROW_VALUES + c);
            return {
              tenant_id: value(0),
              screen_id: value(1),
              type: value(2),
              severity: value(3),
              message: value(4),
              resource_type: value(5),
              resource_id: value(6),
              details: value(7),
              runtime: value(8),
              request_id: value(9),
              operation_id: value(10),
              actor_id: value(11),
              actor_name: value(12),
              at: value(13),
            };
          }),
        )
        .returning('position'),
    );
    compiledInserts.set(rows, insert);
  }
  return insert;
}

async function insertEvents(db: Tx, batch: readonly HeldEvent[]): Promise<{ position: number }[]> {
  return (await insertOf(batch.length).run(db, ...batch.flatMap(rowValues))).rows;
}
