// Comments: an agent's opaque JSON notes on a screen, a playlist or one playlist page.
import type { Comments, CommentTarget } from '../contract/comments';
import type { CallOptions, ClientTransport } from './transport';

function pathOf(target: CommentTarget): string {
  const id = encodeURIComponent(target.id);
  if (target.kind === 'screen') return `/api/v1/comment/screen/${id}`;
  if (target.kind === 'playlist') return `/api/v1/comment/playlist/${id}`;
  return `/api/v1/comment/playlist/${id}/page/${encodeURIComponent(target.pageId)}`;
}

export function commentRoutes(t: ClientTransport) {
  return {
    get: (target: CommentTarget) => t.request<Comments>({ method: 'GET', path: pathOf(target) }),
    /** Replaces the target's comments with this object (at most 1024 bytes as compact JSON). */
    set: (target: CommentTarget, comments: Record<string, unknown>, options: CallOptions = {}) =>
      t.request<Comments>({ method: 'PUT', path: pathOf(target), json: { comments }, idempotent: true, ...options }),
    /** Unsets them; unsetting what is unset is no error. */
    remove: (target: CommentTarget, options: CallOptions = {}) =>
      t.request<void>({ method: 'DELETE', path: pathOf(target), idempotent: true, ...options }),
  };
}
