// One byte range per request (spec Limits: "one byte range per request"). Anything else that is not
// a plain absent header — several ranges, another unit, bad syntax, or a range beyond the end —
// is refused with 416 invalid_range rather than silently ignored (spec: "unsatisfiable or malformed").

export type RangeRequest =
  | { kind: 'whole' }
  | { kind: 'range'; start: number; end: number }
  | { kind: 'refused'; reason: string };

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/i;
/** Beyond this many digits a position is larger than any object we store (1 GiB). */
const MAX_DIGITS = 15;

function position(digits: string): number {
  return digits.length > MAX_DIGITS ? Number.MAX_SAFE_INTEGER : Number(digits);
}

/** Parses a Range header against an object of `size` (> 0) bytes; `end` is inclusive. */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' };
  const value = header.trim();
  if (value.includes(',')) return { kind: 'refused', reason: 'only one byte range per request is served' };
  const match = SINGLE_RANGE.exec(value);
  if (!match) return { kind: 'refused', reason: 'Range must be bytes=first-last, bytes=first- or bytes=-suffix' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'refused', reason: 'Range names no bytes' };
  if (first === '') {
    const suffix = position(last);
    if (suffix === 0) return { kind: 'refused', reason: 'a suffix range of zero bytes is unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = position(first);
  if (start >= size)
    return { kind: 'refused', reason: `the range starts at or beyond the end of the ${size}-byte object` };
  if (last === '') return { kind: 'range', start, end: size - 1 };
  const end = position(last);
  if (end < start) return { kind: 'refused', reason: 'the range ends before it starts' };
  return { kind: 'range', start, end: Math.min(end, size - 1) };
}

/** If-None-Match against a strong entity tag: weak comparison, lists and `*` (RFC 9110 13.1.2). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
