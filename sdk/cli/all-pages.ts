// `--all` on a list command: the page asked for and every page after it, as one list.

interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Follows next_cursor from `cursor` (the first page when undefined) to the last page. */
export async function throughLastPage<T, P extends Page<T>>(
  page: (cursor: string | undefined) => Promise<P>,
  cursor?: string,
): Promise<P> {
  const first = await page(cursor);
  const items = [...first.items];
  for (let next = first.next_cursor; next !== null; ) {
    const more = await page(next);
    items.push(...more.items);
    next = more.next_cursor;
  }
  return { ...first, items, next_cursor: null };
}
