import { describe, expect, it } from 'vitest';
import type { KVSummary } from '../../../sdk/contract/kv';
import {
  currentCursor,
  decodeText,
  FIRST_PAGE,
  isTextual,
  nextPage,
  pageRange,
  pageRead,
  previousPage,
  withEntryRead,
} from './kv-pager';

const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}` }) as KVSummary);

describe('paging through keys', () => {
  it('goes forward by next_cursor and back by the cursors it remembers', () => {
    let pages = pageRead(FIRST_PAGE, 'c2');
    expect(currentCursor(pages)).toBeUndefined();
    pages = nextPage(pages);
    expect(currentCursor(pages)).toBe('c2');
    expect(pages.next).toBeNull();
    pages = pageRead(pages, 'c3');
    pages = nextPage(pages);
    expect(currentCursor(pages)).toBe('c3');
    pages = pageRead(pages, null);
    expect(nextPage(pages)).toBe(pages);
    pages = previousPage(pages);
    expect(currentCursor(pages)).toBe('c2');
    expect(pages.next).toBe('c3');
    pages = previousPage(previousPage(pages));
    expect(currentCursor(pages)).toBeUndefined();
    expect(pages.next).toBe('c2');
  });

  it('names the range shown', () => {
    expect(pageRange(FIRST_PAGE, [], 200)).toBe('No keys');
    expect(pageRange(FIRST_PAGE, keys(3), 200)).toBe('Keys 1–3');
    expect(pageRange(nextPage(pageRead(FIRST_PAGE, 'c')), keys(200), 200)).toBe('Keys 201–400');
  });
});

describe('values', () => {
  it('shows text and JSON as text, other types and invalid UTF-8 as binary', () => {
    expect(isTextual('text/plain; charset=utf-8')).toBe(true);
    expect(isTextual('application/json')).toBe(true);
    expect(isTextual('application/ld+json')).toBe(true);
    expect(isTextual('image/png')).toBe(false);
    expect(isTextual('application/octet-stream')).toBe(false);
    expect(decodeText(new TextEncoder().encode('héllo'))).toBe('héllo');
    expect(decodeText(new Uint8Array([0xff, 0xfe]))).toBeNull();
  });
});

describe('the list beside the value read', () => {
  const row = (key: string, revision: number, bytes: number) =>
    ({ key, revision, bytes, content_type: 'text/plain', sha256: `h${revision}` }) as KVSummary;

  it('shows the size and revision of a value read after the list was', () => {
    const items = [row('blob', 1, 9), row('greeting', 2, 6)];
    expect(withEntryRead(items, row('greeting', 3, 8))).toEqual([row('blob', 1, 9), row('greeting', 3, 8)]);
  });

  it('keeps a row the list read after the value', () => {
    const items = [row('greeting', 4, 12)];
    expect(withEntryRead(items, row('greeting', 3, 8))).toEqual(items);
    expect(withEntryRead(items, null)).toEqual(items);
  });
});
