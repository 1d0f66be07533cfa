// Test helpers: ready media and releases inserted directly (their features build them for real),
// and small playlist documents to write.
import crypto from 'node:crypto';
import { releaseHostLabel } from '../release-host/host-label';
import { newId } from '../keys';
import type { MediaChange } from '../references';
import type { TestServer } from '../testing/harness';

export interface MediaOptions {
  kind?: 'image' | 'video' | 'audio';
  tag?: string | null;
  state?: 'pending' | 'ready' | 'failed' | 'deleted';
  width?: number | null;
  height?: number | null;
  duration_ms?: number | null;
  content_type?: string;
  codecs?: string | null;
  /** Real bytes, written to the blob store (size and sha256 follow); default a 1000-byte stand-in with no blob. */
  bytes?: Buffer;
}

const CONTENT_TYPES = { image: 'image/webp', video: 'video/mp4', audio: 'audio/mpeg' } as const;

let sequence = 0;

export async function insertMedia(server: TestServer, tenantId: string, options: MediaOptions = {}): Promise<string> {
  const kind = options.kind ?? 'image';
  const id = newId('med');
  const now = server.clock.now() + sequence++; // distinct creation times keep `tag`/`all` order stable
  const blobKey = options.bytes ? `media/${id}` : `blobs/${id}`;
  if (options.bytes) await server.services.blobs.write(blobKey, options.bytes);
  await server.services.store.db
    .insertInto('media')
    .values({
      id,
      tenant_id: tenantId,
      state: options.state ?? 'ready',
      kind,
      filename: `${id}.bin`,
      source_filename: null,
      content_type: options.content_type ?? CONTENT_TYPES[kind],
      bytes: options.bytes?.length ?? 1000,
      sha256: options.bytes ? crypto.createHash('sha256').update(options.bytes).digest('hex') : 'a'.repeat(64),
      tag: options.tag ?? null,
      width: kind === 'audio' ? null : options.width === undefined ? 1920 : options.width,
      height: kind === 'audio' ? null : options.height === undefined ? 1080 : options.height,
      duration_ms: options.duration_ms === undefined ? (kind === 'image' ? null : 30_000) : options.duration_ms,
      codecs: options.codecs ?? null,
      revision: 1,
      operation_id: newId('op'),
      blob_key: blobKey,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  return id;
}

export async function insertRelease(
  server: TestServer,
  tenantId: string,
  state: 'ready' | 'pending' = 'ready',
): Promise<{ applicationId: string; releaseId: string }> {
  const now = server.clock.now();
  const applicationId = newId('app');
  const releaseId = newId('rel');
  const { db } = server.services.store;
  await db
    .insertInto('applications')
    .values({
      id: applicationId,
      tenant_id: tenantId,
      name: 'Board',
      revision: 1,
      state: 'active',
      latest_ready_release_id: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  await db
    .insertInto('releases')
    .values({
      id: releaseId,
      tenant_id: tenantId,
      application_id: applicationId,
      state,
      host_label: releaseHostLabel(releaseId),
      accepted_revision: 1,
      operation_id: newId('op'),
      sdk_version: '1',
      archive_sha256: 'b'.repeat(64),
      expanded_bytes: 100,
      file_count: 1,
      entry: 'index.html',
      created_at: now,
      published_at: state === 'ready' ? now : null,
      deleted_at: null,
    })
    .execute();
  return { applicationId, releaseId };
}

/** Changes a media row as the media feature would, telling content references in the same transaction. */
export async function changeMedia(
  server: TestServer,
  tenantId: string,
  mediaId: string,
  set: { tag?: string | null; state?: 'ready' | 'deleted' },
): Promise<void> {
  const { store, references, clock } = server.services;
  await store.transaction(async (work) => {
    const before = await work.db
      .selectFrom('media')
      .select(['tag'])
      .where('id', '=', mediaId)
      .executeTakeFirstOrThrow();
    await work.db
      .updateTable('media')
      .set({ ...set, ...(set.state === 'deleted' ? { deleted_at: clock.now() } : {}) })
      .where('id', '=', mediaId)
      .execute();
    const change: MediaChange = { mediaId, tags: [before.tag, set.tag === undefined ? before.tag : set.tag] };
    await references.mediaChanged(work, tenantId, change, clock.now());
  });
}

export const canvas = { width: 1920, height: 1080, background: '#000000FF' };
export const fullRect = { x: 0, y: 0, width: 1920, height: 1080 };

export function imagePlacement(id: string, selector: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { id, content: { type: 'image', selector, ...extra }, rect: fullRect, layer: 0, content_fit: 'cover' };
}

export function iframePlacement(id: string, src = 'https://example.com/ticker') {
  return { id, content: { type: 'iframe', src, title: 'Ticker' }, rect: fullRect, layer: 1, content_fit: 'fill' };
}

export function page(id: string, placements: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id,
    canvas,
    transition: { type: 'crossfade', duration_ms: 200 },
    advance: { mode: 'duration', after_ms: 8000 },
    placements,
    ...extra,
  };
}

export function imageDoc(mediaId: string, name = 'Lobby loop') {
  return { name, pages: [page('welcome', [imagePlacement('hero', { by: 'id', media_id: mediaId })])] };
}
