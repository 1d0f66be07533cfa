// Comments on screens, playlists and playlist pages: last write wins on the comments alone. Nothing
// else of the row moves (no revision, no updated_at, no event, no manifest), so a comment can never
// make a screen refetch or a client's If-Match go stale.
import type { Comments, CommentTarget } from '../../sdk/contract/comments';
import { findPlaylist, pageCommentsLock, playlistPageIds } from '../playlists/playlists';
import { problem } from '../problem';
import { findScreen } from '../screens/screens';
import type { Db, Tx, Work } from '../store/store';

import { type Note, parseComments as parse } from './comment-fields';

/** The page id's map entry, after checking the page is in the playlist as it now is. */
async function pageComments(db: Db | Tx, tenantId: string, id: string, pageId: string) {
  const playlist = await findPlaylist(db, tenantId, id);
  if (!playlistPageIds(playlist).includes(pageId)) throw problem('not_found', `playlist ${id} has no page "${pageId}"`);
  return { playlist, map: (parse(playlist.page_comments) ?? {}) as Record<string, Note> };
}

export async function readComments(db: Db | Tx, tenantId: string, target: CommentTarget): Promise<Comments> {
  switch (target.kind) {
    case 'screen':
      return { comments: parse((await findScreen(db, tenantId, target.id)).comments) };
    case 'playlist':
      return { comments: parse((await findPlaylist(db, tenantId, target.id)).comments) };
    case 'page': {
      const { map } = await pageComments(db, tenantId, target.id, target.pageId);
      return { comments: map[target.pageId] ?? null };
    }
  }
}

/** Replaces (an object) or unsets (null) the target's comments; unsetting what is unset is no change. */
export async function writeComments(
  work: Work,
  tenantId: string,
  target: CommentTarget,
  comments: Note | null,
): Promise<Comments> {
  const tx = work.db;
  const text = comments === null ? null : JSON.stringify(comments);
  switch (target.kind) {
    case 'screen':
      await findScreen(tx, tenantId, target.id);
      await tx.updateTable('screens').set({ comments: text }).where('id', '=', target.id).execute();
      break;
    case 'playlist':
      await findPlaylist(tx, tenantId, target.id);
      await tx.updateTable('playlists').set({ comments: text }).where('id', '=', target.id).execute();
      break;
    case 'page': {
      // The playlist's map of page comments is read, changed and written back whole: one writer
      // per playlist at a time where transactions run side by side, or a note of another page is lost.
      await work.lock(pageCommentsLock(target.id));
      const { map } = await pageComments(tx, tenantId, target.id, target.pageId);
      if (comments === null) delete map[target.pageId];
      else map[target.pageId] = comments;
      const pages = Object.keys(map).length === 0 ? null : JSON.stringify(map);
      await tx.updateTable('playlists').set({ page_comments: pages }).where('id', '=', target.id).execute();
      break;
    }
  }
  return { comments };
}
