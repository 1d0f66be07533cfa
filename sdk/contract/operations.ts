// Durable operations: the shape GET /api/v1/operations/{id} answers with.

export const OPERATION_STATES = ['receiving', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type OperationState = (typeof OPERATION_STATES)[number];
export const TERMINAL_OPERATION_STATES: readonly OperationState[] = ['succeeded', 'failed', 'cancelled'];

/** An operation's error is a problem document (code, status, detail, errors …). */
export interface OperationError {
  type?: string;
  title?: string;
  status: number;
  detail: string;
  code: string;
  errors?: { field: string; code: string; detail: string }[];
  [member: string]: unknown;
}

export interface Operation {
  id: string;
  /** e.g. application.upload (result {application_id, release_id}) or media.upload (result {media_id}). */
  kind: string;
  state: OperationState;
  created_at: string;
  updated_at: string;
  request_id?: string;
  result?: Record<string, unknown>;
  error?: OperationError;
}

export function isTerminal(state: OperationState): boolean {
  return TERMINAL_OPERATION_STATES.includes(state);
}
