// The durable event log: every mutation appends its events in its own transaction, and open streams
// are woken only after that transaction commits (no event without its change, and none before it).
import type { Notifier } from '../notifier';
import type { Work } from '../store/store';

export type Severity = 'info' | 'warning' | 'error';

export interface NewEvent {
  tenantId: string;
  type: string;
  message: string;
  severity?: Severity;
  /** Screen-scoped events reach that screen's runtime stream when `runtime` is true. */
  screenId?: string;
  runtime?: boolean;
  resource?: { type: string; id: string };
  details?: Record<string, unknown>;
  requestId?: string;
  operationId?: string;
}

/** Notifier channels: one per tenant, one per screen. */
export const tenantChannel = (tenantId: string) => `events:tenant:${tenantId}`;
export const screenChannel = (screenId: string) => `events:screen:${screenId}`;
/** Published when a tenant's open streams must end (an operator suspended it). */
export const tenantStreamsEndChannel = (tenantId: string) => `streams-end:tenant:${tenantId}`;
/** Published when the streams a credential opened must end (it was revoked). */
export const credentialStreamsEndChannel = (credentialId: string) => `streams-end:credential:${credentialId}`;

export class EventLog {
  constructor(private readonly notifier: Notifier) {}

  /** Appends one event in the caller's transaction and returns its position. */
  async append(work: Work, event: NewEvent, now: number): Promise<number> {
    const inserted = await work.db
      .insertInto('events')
      .values({
        tenant_id: event.tenantId,
        screen_id: event.screenId ?? null,
        type: event.type,
        severity: event.severity ?? 'info',
        message: event.message,
        resource_type: event.resource?.type ?? null,
        resource_id: event.resource?.id ?? null,
        details: event.details ? JSON.stringify(event.details) : null,
        runtime: event.runtime ? 1 : 0,
        request_id: event.requestId ?? null,
        operation_id: event.operationId ?? null,
        at: now,
      })
      .returning('position')
      .executeTakeFirstOrThrow();
    const position = inserted.position;
    work.afterCommit(() => {
      this.notifier.publish(tenantChannel(event.tenantId), position);
      if (event.screenId) this.notifier.publish(screenChannel(event.screenId), position);
    });
    return position;
  }
}
