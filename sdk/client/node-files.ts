// Node-only helpers of the typed client: a media file by path (hashed and sent as a stream, never
// held whole in memory) and an application directory packed and published in one call. Browsers
// load `marquee-client` alone, which never imports this file.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { packApplication, type PackedApplication, type PackOptions } from '../pack/pack';
import type { PublishedApplication, PublishOptions } from './applications';
import type { MarqueeClient } from './marquee-client';
import type { MediaUploadOptions, StreamedMedia, UploadedMedia } from './media';

/** A file as a media source: its size, its SHA-256 (read once to compute it) and a stream opener. */
export async function mediaFile(filePath: string): Promise<StreamedMedia> {
  const info = await stat(filePath);
  if (!info.isFile()) throw new TypeError(`${filePath} is not a regular file`);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
  return {
    stream: () => Readable.toWeb(createReadStream(filePath)) as unknown as ReadableStream<Uint8Array>,
    bytes: info.size,
    sha256: hash.digest('hex'),
    filename: path.basename(filePath),
  };
}

/** Uploads a media file by path and answers the ready Media (the name and type come from the path). */
export async function uploadMediaFile(
  client: MarqueeClient,
  filePath: string,
  options: MediaUploadOptions = {},
): Promise<UploadedMedia> {
  return client.media.upload(await mediaFile(filePath), options);
}

/** Packs a built static directory (sdk/pack) and publishes it as a new application or release. */
export async function publishApplicationDirectory(
  client: MarqueeClient,
  directory: string,
  options: PublishOptions & { pack?: PackOptions } = {},
): Promise<PublishedApplication & { packed: PackedApplication }> {
  const { pack, ...publish } = options;
  const packed = await packApplication(directory, pack);
  return { ...(await client.applications.publish(packed, publish)), packed };
}
