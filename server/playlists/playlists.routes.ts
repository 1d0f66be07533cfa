// Playlists on /api/v1 (A or P; no adslot pages, and ad-bearing documents are refused with
// version_required) and /api/v2 (P; adslot pages). Writes validate the document, check iframe
// hosts, resolve references and selectors, and store the result with a revision that moves by one.
import type { z } from 'zod';
import { PlaylistWrite, PlaylistWriteV2, type PlaylistList, type PlaylistV2List } from '../../sdk/contract/playlist';
import { anyBearer, projectBearer, type TenantPrincipal } from '../http/auth';
import { problem } from '../problem';
import { endpoint, mutation, query, reply, type Authenticator, type Mode } from '../http/route';
import { screenReferencesTo } from '../screens/screens';
import { checkIframeHosts } from './iframe-hosts';
import {
  checkScreenTimezones,
  findPlaylist,
  insertPlaylist,
  listPlaylists,
  playlistReferencesLock,
  playlistView,
  playlistViewV1,
  replacePlaylist,
  replacesNothing,
  resolveForWrite,
  tombstonePlaylist,
  type PlaylistDocumentWrite,
} from './playlists';
import type { PlaylistTable } from './playlists.tables';

/** 100 pages of 24 placements with 32-media selectors fit; anything larger is not a playlist. */
export const PLAYLIST_BODY_LIMIT = 2 * 1024 * 1024;

interface Version {
  auth: Authenticator<TenantPrincipal>;
  body: z.ZodType<PlaylistDocumentWrite>;
  /** Idempotency-Key on create, and If-Match / Idempotency-Key on update and delete. */
  createKey: Mode;
  guard: Mode;
  view: (row: PlaylistTable) => unknown;
}

const V1: Version = {
  auth: anyBearer,
  body: PlaylistWrite as z.ZodType<PlaylistDocumentWrite>,
  createKey: 'required-in-A',
  guard: 'required-in-A',
  view: playlistViewV1,
};
const V2: Version = {
  auth: projectBearer,
  body: PlaylistWriteV2,
  createKey: 'optional',
  guard: 'optional',
  view: playlistView,
};

function routes(v: Version) {
  const list = query({ auth: v.auth, area: 'playlists' }, async (ctx) => {
    const rows = await listPlaylists(ctx.services.store.db, ctx.principal.tenantId);
    const body = { items: rows.map(v.view) } as PlaylistList | PlaylistV2List;
    return reply.ok(body);
  });

  const get = query({ auth: v.auth, area: 'playlists' }, async (ctx) => {
    const row = await findPlaylist(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
    return reply.ok(v.view(row), { revision: row.revision });
  });

  const create = endpoint(
    { auth: v.auth, area: 'playlists', body: v.body, bodyLimit: PLAYLIST_BODY_LIMIT, idempotency: v.createKey },
    async (ctx) => {
      await checkIframeHosts(ctx.services, ctx.body);
      return ctx.commitReply(async (work) => {
        const resolution = await resolveForWrite(work, ctx.principal.tenantId, ctx.body);
        const row = await insertPlaylist(ctx.services, work, {
          tenantId: ctx.principal.tenantId,
          doc: ctx.body,
          resolution,
          now: ctx.now,
          requestId: ctx.requestId,
        });
        return reply.created(v.view(row), {
          revision: row.revision,
          headers: { Location: `/api/${v === V1 ? 'v1' : 'v2'}/playlists/${row.id}` },
        });
      });
    },
  );

  const replace = endpoint(
    {
      auth: v.auth,
      area: 'playlists',
      body: v.body,
      bodyLimit: PLAYLIST_BODY_LIMIT,
      ifMatch: v.guard,
      idempotency: v.guard,
    },
    async (ctx) => {
      // Names are resolved only for a playlist the tenant has (not_found costs no DNS).
      await findPlaylist(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
      await checkIframeHosts(ctx.services, ctx.body);
      return ctx.commitReply(async (work) => {
        const before = await findPlaylist(work.db, ctx.principal.tenantId, ctx.params.id!);
        if (v === V1) v.view(before); // refuses an ad-bearing document: a v1 client cannot see what it would replace
        ctx.checkRevision(before.revision);
        const resolution = await resolveForWrite(work, ctx.principal.tenantId, ctx.body);
        await checkScreenTimezones(work, before, ctx.body);
        // The document it already has changes nothing, so it bumps nothing (no hidden revision bumps).
        if (replacesNothing(before, ctx.body, resolution))
          return reply.ok(v.view(before), { revision: before.revision });
        const after = await replacePlaylist(ctx.services, work, before, {
          doc: ctx.body,
          resolution,
          now: ctx.now,
          requestId: ctx.requestId,
        });
        return reply.ok(v.view(after), { revision: after.revision });
      });
    },
  );

  const remove = mutation(
    { auth: v.auth, area: 'playlists', ifMatch: v.guard, idempotency: v.guard },
    async (ctx, work) => {
      const before = await findPlaylist(work.db, ctx.principal.tenantId, ctx.params.id!);
      if (v === V1) v.view(before);
      ctx.checkRevision(before.revision);
      await work.lock(playlistReferencesLock(before.id));
      const references = await screenReferencesTo(work.db, before.tenant_id, before.id);
      if (references.length > 0) {
        const screens = [...new Set(references.map((r) => r.screen_id))];
        throw problem(
          'resource_conflict',
          `playlist ${before.id} is in use by ${screens.length} screen(s) (${screens.join(', ')}); assign them another playlist first`,
          {
            extensions: { references },
          },
        );
      }
      await tombstonePlaylist(ctx.services, work, before, ctx.now, ctx.requestId);
      return reply.noContent();
    },
  );

  return { list, get, create, replace, remove };
}

export const v1 = routes(V1);
export const v2 = routes(V2);
