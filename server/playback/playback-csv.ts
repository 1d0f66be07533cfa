// Proof of play as CSV (RFC 4180, CRLF, a header line), for advertisers' spreadsheets. A text cell
// that a spreadsheet would read as a formula (a filename starting with `=`, `+`, `-`, `@`) is
// prefixed with an apostrophe: the media's filename is whatever its uploader named it.
import { PLAYBACK_CSV_COLUMNS, type PlaybackRow } from '../../sdk/contract/playback';

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvHeader(): string {
  return `${PLAYBACK_CSV_COLUMNS.join(',')}\r\n`;
}

export function csvLine(row: PlaybackRow): string {
  return `${PLAYBACK_CSV_COLUMNS.map((column) => csvCell(row[column])).join(',')}\r\n`;
}
