import type { Generated } from 'kysely';

export interface EventTable {
  /** Monotonically increasing position; cursors encode it. */
  position: Generated<number>;
  tenant_id: string;
  /** Set for screen-scoped events. */
  screen_id: string | null;
  type: string;
  severity: 'info' | 'warning' | 'error';
  message: string;
  resource_type: string | null;
  resource_id: string | null;
  /** JSON object. */
  details: string | null;
  /** 1 when the screen's runtime stream carries it (audience filter). */
  runtime: number;
  request_id: string | null;
  operation_id: string | null;
  /** The signed-in person whose dashboard request caused it (issue 19); null otherwise. */
  actor_id: string | null;
  actor_name: string | null;
  at: number;
}

/**
 * Per stream scope (`tenant:<id>`, `screen:<id>`), the highest position retention has pruned, so a
 * cursor before it is known to have missed events and gets stream.resync_required.
 */
export interface EventWatermarkTable {
  scope: string;
  pruned_through: number;
}

export interface EventTables {
  events: EventTable;
  event_watermarks: EventWatermarkTable;
}
