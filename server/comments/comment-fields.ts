// The stored form of comments as the views read it (a leaf module: screens and playlists show
// comments without depending on the comments routes).

export type Note = Record<string, unknown>;

export function parseComments(text: string | null | undefined): Note | null {
  return text ? (JSON.parse(text) as Note) : null;
}

/** The comments member of a view: absent when unset. */
export function commentsMember(text: string | null | undefined): { comments?: Note } {
  const note = parseComments(text);
  return note ? { comments: note } : {};
}

/** Page comments of the pages still in a rewritten document; the rest go with their pages. */
export function keptPageComments(pageComments: string | null | undefined, pageIds: readonly string[]): string | null {
  const map = parseComments(pageComments) as Record<string, Note> | null;
  if (!map) return null;
  const kept = Object.fromEntries(Object.entries(map).filter(([id]) => pageIds.includes(id)));
  return Object.keys(kept).length === 0 ? null : JSON.stringify(kept);
}

/** A page of a view with its comments, when it has any. */
export function withPageComments<P extends { id: string }>(pages: P[], pageComments: string | null | undefined): P[] {
  const map = parseComments(pageComments) as Record<string, Note> | null;
  if (!map) return pages;
  return pages.map((page) => (map[page.id] ? { ...page, comments: map[page.id] } : page));
}
