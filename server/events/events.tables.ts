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
  at: number;
}

export interface EventTables {
  events: EventTable;
}
