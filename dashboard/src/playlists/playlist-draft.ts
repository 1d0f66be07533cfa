// A playlist as the editor holds it: the write document (PlaylistWrite) made from the server's
// answer, changed by the page's controls, and judged by the contract's own schema so each problem
// lands on the field its path names. The media a selector resolved to stay with the answer
// (`resolvedItems`), keyed by page and placement id, so a moved page keeps its pictures. Pure.
import {
  type AdvanceWrite,
  type PageWrite,
  type Playlist,
  type PlaylistMediaItem,
  PlaylistWrite,
} from '../../../sdk/contract/playlist';
import { writeDocumentOf } from '../../../sdk/contract/playlist-documents';
import type { Visibility } from '../../../sdk/contract/visibility';
import { issuesByField } from '../fleet/field-problems';

export type PlaylistDraft = PlaylistWrite;

/** The write document of a playlist as the server answered it (what `playlist update` would send back). */
export const draftOf: (playlist: Playlist) => PlaylistDraft = writeDocumentOf;

export const itemKey = (pageId: string, placementId: string) => `${pageId}/${placementId}`;

/** The media each image or video placement resolved to, by `itemKey`. */
export function resolvedItems(playlist: Playlist): Map<string, PlaylistMediaItem[]> {
  const items = new Map<string, PlaylistMediaItem[]>();
  for (const page of playlist.pages)
    for (const p of page.placements)
      if (p.content.type === 'image' || p.content.type === 'video') items.set(itemKey(page.id, p.id), p.content.items);
  return items;
}

/**
 * `items` with the one at `from` taken out and put at `to` (both indexes of the list as it is);
 * out of range leaves the list as it is. Drag and drop and the move buttons both end here.
 */
export function movedTo<T>(items: readonly T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= items.length || to >= items.length) return [...items];
  const next = [...items];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item!);
  return next;
}

/** The draft's problems by dotted field path (`pages.1.advance.after_ms`), from the contract's schema. */
export function draftProblems(draft: PlaylistDraft): Record<string, string> {
  const result = PlaylistWrite.safeParse(draft);
  return result.success ? {} : issuesByField(result.error);
}

/** Whether two drafts are the same document (key order aside: both come from the same builders). */
export function sameDraft(a: PlaylistDraft, b: PlaylistDraft): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The draft with page `index` changed by `change`. */
export function withPage(draft: PlaylistDraft, index: number, change: (page: PageWrite) => PageWrite): PlaylistDraft {
  return { ...draft, pages: draft.pages.map((p, i) => (i === index ? change(p) : p)) };
}

/** Whole seconds (or tenths) as typed → milliseconds; an empty or non-numeric entry stays NaN for the schema to name. */
export function msFromSeconds(text: string): number {
  const trimmed = text.trim();
  if (trimmed === '') return Number.NaN;
  return Math.round(Number(trimmed) * 1000);
}

export function secondsOf(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return '';
  return String(ms / 1000);
}

/** A page that advances after a time shows this long when it is switched to that mode with nothing to go on. */
export const DEFAULT_AFTER_MS = 8000;
/** The backstop of a page switched to application advance with nothing to go on. */
export const DEFAULT_MAX_MS = 60_000;

/** The advance in `mode`, keeping the time the old one had (its after_ms or max_ms). */
export function advanceIn(mode: AdvanceWrite['mode'], old: AdvanceWrite): AdvanceWrite {
  const ms = old.mode === 'duration' ? old.after_ms : old.max_ms;
  if (mode === 'duration') return { mode, after_ms: ms ?? DEFAULT_AFTER_MS };
  if (mode === 'application') return { mode, max_ms: ms ?? DEFAULT_MAX_MS };
  return { mode, ...(ms !== undefined ? { max_ms: ms } : {}) };
}

/**
 * The page with its visibility rule changed: null removes the rule; a member set to undefined is
 * removed (a PUT document has no undefined members); a page without a rule gets an enabled one.
 */
export function withVisibility(page: PageWrite, change: Partial<Visibility> | null): PageWrite {
  if (change === null) {
    const { visibility: _, ...rest } = page;
    return rest;
  }
  const next: Visibility = { ...(page.visibility ?? { enabled: true }), ...change };
  for (const key of ['from', 'until', 'windows'] as const) if (next[key] === undefined) delete next[key];
  return { ...page, visibility: next };
}
