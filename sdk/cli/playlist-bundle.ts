// A playlist with its media as a folder, to move between projects or servers or keep in git:
//   playlist.json   the playlist as a write document (what `playlist create` takes)
//   media.json      {format, source, media: [{media_id, file, content_type, bytes, sha256, tag?, filename}]}
//   media/<file>    the original bytes of every media the playlist showed when exported
// Import uploads each file (or reuses a ready media with the same SHA-256 and type, so a rerun
// after an interruption continues where it stopped), rewrites the media ids, then creates the playlist.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { MarqueeClient } from '../client/marquee-client';
import { mediaFile } from '../client/node-files';
import type { Media, MediaContentType } from '../contract/media';
import type { Playlist } from '../contract/playlist';
import type { PlaylistDocument } from '../client/marquee-client';
import { writeDocumentOf as writeDocument } from '../contract/playlist-documents';
import { z } from 'zod';
import { CliFailure, EXIT, invalidInput } from './exit-codes';
import { writeVerified } from './verified-file';
import type { Progress } from './progress';

export const BUNDLE_FORMAT = 'marquee.playlist-bundle/1';
export const PLAYLIST_FILE = 'playlist.json';
export const MEDIA_FILE = 'media.json';
export const MEDIA_DIRECTORY = 'media';

const BundleMedia = z.object({
  media_id: z.string(),
  file: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a bare file name'),
  content_type: z.string(),
  bytes: z.number().int().positive(),
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  tag: z.string().optional(),
  filename: z.string(),
});
const BundleManifest = z.object({
  format: z.literal(BUNDLE_FORMAT),
  source: z.object({ api_url: z.string(), playlist_id: z.string(), revision: z.number() }).optional(),
  media: z.array(BundleMedia),
});
export type BundleMedia = z.infer<typeof BundleMedia>;
export type BundleManifest = z.infer<typeof BundleManifest>;

/** The media a playlist shows: what its selectors resolved to, and its soundtrack. */
export function mediaIdsOf(playlist: Playlist): string[] {
  const ids = new Set<string>();
  for (const page of playlist.pages)
    for (const placement of page.placements)
      if (placement.content.type === 'image' || placement.content.type === 'video')
        for (const item of placement.content.items) ids.add(item.media_id);
  for (const track of playlist.audio?.tracks ?? []) ids.add(track.media_id);
  return [...ids];
}

/**
 * The write document of a playlist as read: response-only members (ids, revisions, resolved items,
 * a media_end page's computed deadline, track lengths) are left out, as the server would refuse them.
 */
export function writeDocumentOf(playlist: Playlist): PlaylistDocument {
  return writeDocument(playlist);
}

/** The same document with media ids replaced (selectors by id and ids, soundtrack tracks). */
export function withMediaIds(document: PlaylistDocument, map: Map<string, string>): PlaylistDocument {
  const swap = (id: string) => map.get(id) ?? id;
  const copy = structuredClone(document);
  for (const page of copy.pages)
    for (const placement of page.placements) {
      const { content } = placement;
      if (content.type !== 'image' && content.type !== 'video') continue;
      const selector = content.selector;
      if (selector.by === 'id') selector.media_id = swap(selector.media_id);
      if (selector.by === 'ids') selector.media_ids = selector.media_ids.map(swap);
    }
  for (const track of copy.audio?.tracks ?? []) track.media_id = swap(track.media_id);
  return copy;
}

async function emptyOrAbsent(directory: string): Promise<void> {
  try {
    const entries = await fs.readdir(directory);
    if (entries.length > 0) throw invalidInput(`${directory} exists and is not empty; name a new folder`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Writes the bundle into a temporary sibling folder and renames it into place when complete. */
export async function exportBundle(
  client: MarqueeClient,
  apiUrl: string,
  playlistId: string,
  directory: string,
  signal: AbortSignal,
  progress: Progress,
): Promise<{ directory: string; playlist: PlaylistDocument; manifest: BundleManifest }> {
  await emptyOrAbsent(directory);
  const { data: playlist } = await client.playlists.get(playlistId);
  const document = writeDocumentOf(playlist);
  const staging = `${directory.replace(/[\\/]+$/, '')}.${crypto.randomBytes(4).toString('hex')}.partial`;
  await fs.mkdir(path.join(staging, MEDIA_DIRECTORY), { recursive: true });
  try {
    const media: BundleMedia[] = [];
    for (const id of mediaIdsOf(playlist)) {
      const { data: info } = await client.media.get(id);
      const content = await client.media.content(id, { signal });
      if (!content.body)
        throw new CliFailure(EXIT.unexpected, 'unexpected_response', `the export of ${id} had no body`);
      const file = content.filename && /^[A-Za-z0-9_.-]+$/.test(content.filename) ? content.filename : id;
      progress.stage(`exporting ${id}`);
      const written = await writeVerified(content.body, path.join(staging, MEDIA_DIRECTORY, file), info.sha256, signal);
      media.push({
        media_id: id,
        file,
        content_type: info.content_type,
        bytes: written.bytes,
        sha256: written.sha256,
        ...(info.tag !== undefined ? { tag: info.tag } : {}),
        filename: info.filename,
      });
    }
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      source: { api_url: apiUrl, playlist_id: playlist.id, revision: playlist.revision },
      media,
    };
    await fs.writeFile(path.join(staging, PLAYLIST_FILE), `${JSON.stringify(document, null, 2)}\n`);
    await fs.writeFile(path.join(staging, MEDIA_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await fs.rm(directory, { recursive: true, force: true }); // an empty folder the user made
    await fs.rename(staging, directory);
    return { directory, playlist: document, manifest };
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  }
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw invalidInput(`cannot read ${file}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidInput(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

export async function readBundle(directory: string): Promise<{ document: PlaylistDocument; manifest: BundleManifest }> {
  const document = (await readJson(path.join(directory, PLAYLIST_FILE))) as PlaylistDocument;
  const parsed = BundleManifest.safeParse(await readJson(path.join(directory, MEDIA_FILE)));
  if (!parsed.success)
    throw invalidInput(`${path.join(directory, MEDIA_FILE)} is not a ${BUNDLE_FORMAT} manifest`, {
      errors: parsed.error.issues.map((i) => ({ field: i.path.join('.'), code: i.code, detail: i.message })),
    });
  return { document, manifest: parsed.data };
}

/** Every ready media of the project by `<sha256>/<content type>`, to reuse instead of uploading twice. */
async function existingMedia(client: MarqueeClient): Promise<Map<string, Media>> {
  const found = new Map<string, Media>();
  let cursor: string | undefined;
  do {
    const page = (await client.media.list({ limit: 100, cursor })).data;
    for (const media of page.items) found.set(`${media.sha256}/${media.content_type}`, media);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return found;
}

export interface ImportedMedia {
  from: string;
  to: string;
  uploaded: boolean;
}

/** Uploads the bundle's media (or reuses them) and answers the document with the new ids. */
export async function importBundleMedia(
  client: MarqueeClient,
  directory: string,
  manifest: BundleManifest,
  document: PlaylistDocument,
  signal: AbortSignal,
  progressFor: (label: string) => Progress,
): Promise<{ document: PlaylistDocument; media: ImportedMedia[] }> {
  const existing = await existingMedia(client);
  const map = new Map<string, string>();
  const media: ImportedMedia[] = [];
  for (const entry of manifest.media) {
    const reused = existing.get(`${entry.sha256}/${entry.content_type}`);
    if (reused) {
      map.set(entry.media_id, reused.id);
      media.push({ from: entry.media_id, to: reused.id, uploaded: false });
      continue;
    }
    const source = await mediaFile(path.join(directory, MEDIA_DIRECTORY, entry.file));
    if (source.sha256 !== entry.sha256 || source.bytes !== entry.bytes)
      throw invalidInput(`${entry.file} does not match ${MEDIA_FILE} (size or SHA-256 differs)`);
    const progress = progressFor(`upload ${entry.file}`);
    try {
      const uploaded = await client.media.upload(source, {
        filename: entry.filename,
        contentType: entry.content_type as MediaContentType,
        sha256: entry.sha256,
        tag: entry.tag,
        signal,
        onProgress: (p) => progress.update({ ...p, total: p.total ?? source.bytes }),
      });
      map.set(entry.media_id, uploaded.data.id);
      media.push({ from: entry.media_id, to: uploaded.data.id, uploaded: true });
    } finally {
      progress.done();
    }
  }
  return { document: withMediaIds(document, map), media };
}
