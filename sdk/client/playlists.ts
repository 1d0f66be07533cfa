// Playlists: /api/v1 (both generations) and /api/v2 (project bearers; adslot pages).
import type { z } from 'zod';
import type {
  Playlist,
  PlaylistList,
  PlaylistV2,
  PlaylistV2List,
  PlaylistWrite,
  PlaylistWriteV2,
} from '../contract/playlist';
import type { CallOptions, ClientTransport, GuardedCallOptions } from './transport';

/** A playlist document as written (defaults such as `viewport_fit` may be left out). */
export type PlaylistDocument = z.input<typeof PlaylistWrite>;
/** A v2 document: pages may also be adslot pages. */
export type PlaylistDocumentV2 = z.input<typeof PlaylistWriteV2>;

function versionRoutes<Doc, One, List>(t: ClientTransport, base: string) {
  const path = (id: string) => `${base}/${encodeURIComponent(id)}`;
  return {
    list: () => t.request<List>({ method: 'GET', path: base }),
    get: (id: string) => t.request<One>({ method: 'GET', path: path(id) }),
    create: (document: Doc, options: CallOptions = {}) =>
      t.request<One>({ method: 'POST', path: base, json: document, idempotent: true, ...options }),
    /** Replaces the whole document (omitting `audio` removes the soundtrack); revision + 1. */
    replace: (id: string, document: Doc, options: GuardedCallOptions = {}) =>
      t.request<One>({ method: 'PUT', path: path(id), json: document, idempotent: true, ...options }),
    /** 409 resource_conflict while a screen refers to it. */
    delete: (id: string, options: GuardedCallOptions = {}) =>
      t.request<void>({ method: 'DELETE', path: path(id), idempotent: true, ...options }),
  };
}

export function playlistRoutes(t: ClientTransport) {
  return {
    ...versionRoutes<PlaylistDocument, Playlist, PlaylistList>(t, '/api/v1/playlists'),
    /** The v2 routes: the same calls, with adslot pages allowed. */
    v2: versionRoutes<PlaylistDocumentV2, PlaylistV2, PlaylistV2List>(t, '/api/v2/playlists'),
  };
}
