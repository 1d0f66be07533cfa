import { describe, expect, it } from 'vitest';
import { throughLastPage } from './all-pages';

describe('throughLastPage (--all)', () => {
  const pages: Record<string, { items: number[]; next_cursor: string | null; extra: string }> = {
    first: { items: [1, 2], next_cursor: 'b', extra: 'kept' },
    b: { items: [3], next_cursor: 'c', extra: 'dropped' },
    c: { items: [4, 5], next_cursor: null, extra: 'dropped' },
  };
  const asked: (string | undefined)[] = [];
  const page = async (cursor: string | undefined) => {
    asked.push(cursor);
    return pages[cursor ?? 'first']!;
  };

  it('follows next_cursor from the first page to the last, as one list with the first page’s other fields', async () => {
    asked.length = 0;
    expect(await throughLastPage(page)).toEqual({ items: [1, 2, 3, 4, 5], next_cursor: null, extra: 'kept' });
    expect(asked).toEqual([undefined, 'b', 'c']);
  });

  it('starts at the cursor given', async () => {
    asked.length = 0;
    expect((await throughLastPage(page, 'b')).items).toEqual([3, 4, 5]);
    expect(asked).toEqual(['b', 'c']);
  });
});
