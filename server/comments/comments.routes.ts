// GET/PUT/DELETE /api/v1/comment/{screen/{id} | playlist/{id} | playlist/{id}/page/{page_id}}:
// either bearer (the screens and playlists they annotate take both), in the area of the target.
import { CommentsWrite, type CommentTarget } from '../../sdk/contract/comments';
import { PAGE_ID_PATTERN } from '../../sdk/contract/playlist';
import { anyBearer } from '../http/auth';
import { mutation, query, reply, type AnyContext, type CapabilityArea } from '../http/route';
import { problem } from '../problem';
import { readComments, writeComments } from './comments';

function target(kind: 'screen' | 'playlist' | 'page', ctx: AnyContext): CommentTarget {
  const id = ctx.params.id!;
  if (kind !== 'page') return { kind, id };
  const pageId = ctx.params.page_id!;
  if (!PAGE_ID_PATTERN.test(pageId))
    throw problem('invalid_request', 'page_id: must start with a letter and use letters, digits, _ or - (at most 64)', {
      errors: [{ field: 'page_id', code: 'invalid_string', detail: 'not a page id' }],
    });
  return { kind, id, pageId };
}

function commentRoutes(kind: 'screen' | 'playlist' | 'page') {
  const area: CapabilityArea = kind === 'screen' ? 'screens' : 'playlists';
  return {
    get: query({ auth: anyBearer, area }, async (ctx) =>
      reply.ok(await readComments(ctx.services.store.db, ctx.principal.tenantId, target(kind, ctx))),
    ),
    put: mutation({ auth: anyBearer, area, body: CommentsWrite, idempotency: 'optional' }, async (ctx, work) =>
      reply.ok(await writeComments(work, ctx.principal.tenantId, target(kind, ctx), ctx.body.comments)),
    ),
    remove: mutation({ auth: anyBearer, area, idempotency: 'optional' }, async (ctx, work) => {
      await writeComments(work, ctx.principal.tenantId, target(kind, ctx), null);
      return reply.noContent();
    }),
  };
}

export const screen = commentRoutes('screen');
export const playlist = commentRoutes('playlist');
export const page = commentRoutes('page');
