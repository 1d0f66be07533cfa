// Single byte ranges for media served from the offline cache: media elements ask for `bytes=a-b`
// (or `bytes=a-`, or a suffix `bytes=-n`); the cache holds whole objects.

export type RangeAnswer = { start: number; end: number } | 'whole' | 'unsatisfiable';

/** The inclusive range `header` asks of an object of `size` bytes; `whole` when there is no usable Range. */
export function parseByteRange(header: string | null, size: number): RangeAnswer {
  if (header === null) return 'whole';
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return 'whole';
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/** `bytes 0-(n-1)/n`: a 206 that carries the whole object, which the cache may keep as a 200. */
export function coversWholeObject(contentRange: string | null): number | null {
  const match = /^bytes 0-(\d+)\/(\d+)$/.exec(contentRange ?? '');
  if (!match) return null;
  const size = Number(match[2]);
  return Number(match[1]) === size - 1 ? size : null;
}
