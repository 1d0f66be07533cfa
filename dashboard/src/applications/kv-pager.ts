// Paging through an application's keys: the list answers a page and the cursor of the next, so
// going back means remembering the cursors of the pages already seen.
import type { KVSummary } from '../../../sdk/contract/kv';

export interface KvPages {
  /** The cursor each page seen so far was read with (undefined: the first page). */
  cursors: (string | undefined)[];
  /** Which of them is shown. */
  index: number;
  /** The shown page's next_cursor: null on the last page. */
  next: string | null;
}

export const FIRST_PAGE: KvPages = { cursors: [undefined], index: 0, next: null };

/** The cursor to read the shown page with. */
export const currentCursor = (pages: KvPages): string | undefined => pages.cursors[pages.index];

/** After a page was read: remember where the following one starts. */
export const pageRead = (pages: KvPages, next: string | null): KvPages => ({ ...pages, next });

/** Forward, when there is a next page. */
export function nextPage(pages: KvPages): KvPages {
  if (pages.next === null) return pages;
  const cursors = [...pages.cursors.slice(0, pages.index + 1), pages.next];
  return { cursors, index: pages.index + 1, next: null };
}

/** Back to the page before (its cursor is remembered). */
export function previousPage(pages: KvPages): KvPages {
  if (pages.index === 0) return pages;
  return { ...pages, index: pages.index - 1, next: pages.cursors[pages.index] ?? null };
}

/**
 * The page's keys with what the detail last read of one of them: a value read after the list (a
 * write, a conflict that showed a screen's newer value) is newer than the list's row, so the row
 * shows that size and revision too, never an older one beside it.
 */
export function withEntryRead(items: readonly KVSummary[], read: KVSummary | null): KVSummary[] {
  if (!read) return [...items];
  return items.map((item) =>
    item.key === read.key && read.revision > item.revision
      ? { ...item, content_type: read.content_type, bytes: read.bytes, sha256: read.sha256, revision: read.revision }
      : item,
  );
}

/** "Keys 201–400" for the shown page. */
export function pageRange(pages: KvPages, items: readonly KVSummary[], pageSize: number): string {
  if (items.length === 0) return pages.index === 0 ? 'No keys' : 'No more keys';
  const first = pages.index * pageSize + 1;
  return `Keys ${first}–${first + items.length - 1}`;
}

/** Whether a value of this content type is text a person can read and edit here. */
export function isTextual(contentType: string): boolean {
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') || /^application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded)$/.test(type)
  );
}

/** A value as text, or null when its bytes are not UTF-8. */
export function decodeText(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
