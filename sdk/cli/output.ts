// What the CLI prints: one JSON envelope per command with --json, or human blocks (a table, a list
// of fields, lines). Every value that came from the server goes through the project's one rule for
// untrusted text (sdk/contract/untrusted-text.ts), so a screen label cannot drive the terminal or
// reorder what the reader sees; the envelope's JSON gets the same escapes as a log line.
import { escapeUnsafe, escapeUnsafeInJson } from '../contract/untrusted-text';
import type { ErrorReport } from './exit-codes';

export type Envelope =
  | { ok: true; data: unknown; request_id: string | null }
  | { ok: false; error: ErrorReport; request_id: string | null };

/** The envelope as one line of JSON. */
export function envelopeText(envelope: Envelope): string {
  return `${escapeUnsafeInJson(JSON.stringify(envelope))}\n`;
}

/** A cell or field value: text from the server, or a number, boolean, nothing. */
export type Value = string | number | boolean | null | undefined;

export type Block =
  | { kind: 'table'; columns: string[]; rows: Value[][]; empty?: string }
  | { kind: 'fields'; fields: [label: string, value: Value][] }
  | { kind: 'lines'; lines: Value[] };

export const table = (columns: string[], rows: Value[][], empty = '(none)'): Block => ({
  kind: 'table',
  columns,
  rows,
  empty,
});
export const fields = (...entries: [string, Value][]): Block => ({ kind: 'fields', fields: entries });
export const lines = (...entries: Value[]): Block => ({ kind: 'lines', lines: entries });

/** A value made safe to print whole (fields, lines). */
export function shown(value: Value): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return escapeUnsafe(String(value));
}

/** How a failure reads for a person: the code, the detail, field errors, and what to do next. */
export function renderError(error: ErrorReport): string {
  const out = [`error: ${shown(error.code)}: ${shown(error.detail)}`];
  for (const field of error.errors ?? [])
    out.push(`  ${shown(field.field)}: ${shown(field.detail)} (${shown(field.code)})`);
  if (error.current_revision !== undefined)
    out.push(
      `  the resource is now at revision ${error.current_revision}: read it again, then retry with --if-match ${error.current_revision}`,
    );
  if (error.retry_after !== undefined && error.code === 'rate_limited')
    out.push(`  retry after ${error.retry_after} s`);
  if (Array.isArray(error.checks))
    for (const check of error.checks as { name: string; status: string; detail: string }[])
      out.push(`  ${shown(check.status).padEnd(4)} ${shown(check.name)}: ${shown(check.detail)}`);
  if (error.hint) out.push(`  ${shown(error.hint)}`);
  if (error.request_id) out.push(`  request id: ${shown(error.request_id)}`);
  return `${out.join('\n')}\n`;
}

/** Bytes for people: 1536 → "1.5 KiB". */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
