// Verifies stored upload bytes against their declaration: size, SHA-256, the real content type by
// sniffing, and what players need to know (pixel size, duration, codecs). Reads go through the
// BlobStore only (ranged where possible), so an S3-compatible store works the same way. Pure
// JavaScript throughout: no ffprobe or other external binaries. Containers are read on a worker
// thread with a deadline (container-analysis.ts): their tables are the uploader's to make up.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromStream } from 'file-type/node';
import sharp, { type Metadata } from 'sharp';
import { kindOf, type MediaContentType } from '../../sdk/contract/media';
import type { BlobStore } from '../blobs/blob-store';
import { problem, type ProblemError } from '../problem';
import { ContainerUnreadable, analyseContainer, type ContainerFacts, type TrackFacts } from './container-analysis';

export interface Declared {
  bytes: number;
  sha256: string;
  contentType: MediaContentType;
}

export interface VerifiedMedia {
  width: number | null;
  height: number | null;
  durationMs: number | null;
  codecs: string | null;
}

/** What byte sniffing may call each declared type (an animated PNG is still a PNG). */
const SNIFFED_AS: Record<MediaContentType, readonly string[]> = {
  'image/png': ['image/png', 'image/apng'],
  'image/jpeg': ['image/jpeg'],
  'image/webp': ['image/webp'],
  'image/gif': ['image/gif'],
  'video/mp4': ['video/mp4'],
  'video/webm': ['video/webm'],
  'audio/mpeg': ['audio/mpeg'],
};

// Images are opened as files (imageFacts): libvips would hold up to 20 of them open in its cache,
// deleted ones (a removed media, a temporary copy) included, with their disk space.
sharp.cache({ files: 0 });

/**
 * Most pixels an image may have: sharp's own decoding limit (16383²), which refused larger images
 * before, as a header it "cannot read". Each is about a gigabyte once a screen decodes it.
 */
export const IMAGE_PIXELS_MAX = 16383 * 16383;

const SHARP_FORMAT: Partial<Record<MediaContentType, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/** Container names mediabunny reports for each declared type. */
const CONTAINER: Partial<Record<MediaContentType, string>> = {
  'video/mp4': 'MP4',
  'video/webm': 'WebM',
  'audio/mpeg': 'MP3',
};

/** RFC 6381 codecs entry grammar (reference contract). */
const CODEC_ENTRY = /^[A-Za-z0-9]{3,9}(\.[A-Za-z0-9]{1,10}){0,5}$/;

function mismatch(field: string, detail: string): ProblemError {
  return problem('invalid_request', `${field}: ${detail}`, { errors: [{ field, code: 'mismatch', detail }] });
}

function unreadable(detail: string): ProblemError {
  return problem('invalid_request', detail, { errors: [{ field: 'content_type', code: 'unreadable', detail }] });
}

export async function verifyStoredMedia(
  blobs: BlobStore,
  key: string,
  declared: Declared,
  signal: AbortSignal,
  /** How long the container may take to read (CONTAINER_ANALYSIS_DEADLINE_MS unless given). */
  analysisDeadlineMs?: number,
): Promise<VerifiedMedia> {
  const stat = await blobs.stat(key);
  if (!stat)
    throw problem('resource_conflict', 'the uploaded bytes are missing from storage; declare and upload again');
  if (stat.bytes !== declared.bytes)
    throw mismatch('bytes', `the stored object has ${stat.bytes} bytes, ${declared.bytes} were declared`);

  const sniffed = await sniff(blobs.read(key));
  if (!sniffed || !SNIFFED_AS[declared.contentType].includes(sniffed)) {
    throw mismatch(
      'content_type',
      `the bytes are ${sniffed ?? 'of no recognized media type'}, ${declared.contentType} was declared`,
    );
  }

  const sha256 = await hash(blobs.read(key), signal);
  if (sha256 !== declared.sha256)
    throw mismatch('sha256', 'the SHA-256 of the stored bytes differs from the declared sha256');

  return kindOf(declared.contentType) === 'image'
    ? imageFacts(blobs, key, declared.contentType)
    : timedFacts(blobs, key, declared, signal, analysisDeadlineMs);
}

async function sniff(stream: Readable): Promise<string | undefined> {
  try {
    return (await fileTypeFromStream(stream))?.mime;
  } finally {
    stream.destroy();
  }
}

async function hash(stream: Readable, signal: AbortSignal): Promise<string> {
  const digest = crypto.createHash('sha256');
  try {
    for await (const chunk of stream) {
      if (signal.aborted) throw signal.reason ?? new Error('aborted');
      digest.update(chunk as Buffer);
    }
  } finally {
    stream.destroy();
  }
  return digest.digest('hex');
}

/**
 * Pixel size from the header only (never a full decode), as displayed: EXIF orientation applied.
 * sharp is given a file: from a stream it would gather the whole image in memory first (two copies
 * of up to 1 GiB) to read a header of a few hundred bytes.
 */
async function imageFacts(blobs: BlobStore, key: string, contentType: MediaContentType): Promise<VerifiedMedia> {
  let meta: Metadata;
  try {
    // No pixel limit here: the header alone is read, and the size is judged below with its reason.
    meta = await withFile(blobs, key, (file) => sharp(file, { failOn: 'none', limitInputPixels: false }).metadata());
  } catch {
    throw unreadable(`the ${contentType} image header cannot be read`);
  }
  if (meta.width !== undefined && meta.height !== undefined && meta.width * meta.height > IMAGE_PIXELS_MAX) {
    const detail = `the image is ${meta.width} × ${meta.height} pixels; at most ${IMAGE_PIXELS_MAX} pixels (16383 × 16383) are accepted`;
    throw problem('invalid_request', detail, { errors: [{ field: 'content_type', code: 'too_large', detail }] });
  }
  if (meta.format !== SHARP_FORMAT[contentType])
    throw mismatch('content_type', `the image decodes as ${meta.format ?? 'nothing'}, ${contentType} was declared`);
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw unreadable('the image has no pixel size');
  return { width, height, durationMs: null, codecs: null };
}

/** Runs `use` on the object as a file: the store's own, or else a temporary copy (a bucket). */
async function withFile<T>(blobs: BlobStore, key: string, use: (file: string) => Promise<T>): Promise<T> {
  const own = blobs.localFile?.(key);
  if (own !== undefined) return use(own);
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'marquee-verify-'));
  try {
    const file = path.join(dir, 'object');
    await pipeline(blobs.read(key), fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    return await use(file);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** Video and audio: container duration, video pixel size and the RFC 6381 codecs of every track. */
async function timedFacts(
  blobs: BlobStore,
  key: string,
  declared: Declared,
  signal: AbortSignal,
  deadlineMs: number | undefined,
): Promise<VerifiedMedia> {
  let facts: ContainerFacts;
  try {
    facts = await analyseContainer(declared.bytes, (start, end) => readRange(blobs, key, start, end), {
      signal,
      deadlineMs,
    });
  } catch (error) {
    if (error instanceof ContainerUnreadable)
      throw unreadable(`${error.message}; ${declared.contentType} was declared`);
    throw error;
  }
  if (!facts.format || facts.format !== CONTAINER[declared.contentType]) {
    throw mismatch(
      'content_type',
      `the container is ${facts.format ?? 'unreadable'}, ${declared.contentType} was declared`,
    );
  }
  const durationMs = Math.round(facts.seconds * 1000);
  if (!(durationMs >= 1)) throw unreadable('the media has no readable duration');

  const codecs: string[] = [];
  let width: number | null = null;
  let height: number | null = null;
  if (kindOf(declared.contentType) === 'video') {
    const video = facts.video;
    if (!video) throw unreadable('the video has no video track');
    width = video.width;
    height = video.height;
    if (!(width !== null && width >= 1 && height !== null && height >= 1))
      throw unreadable('the video track has no pixel size');
    codecs.push(codecOf(video));
  }
  const audio = facts.audio;
  if (audio) codecs.push(codecOf(audio));
  if (kindOf(declared.contentType) === 'audio' && audio?.codec !== 'mp3')
    throw unreadable('the audio is not an MP3 stream');
  return { width, height, durationMs, codecs: codecs.join(',') };
}

/** Players choose decoders by codec, so a track whose codec cannot be named is refused. */
function codecOf(track: TrackFacts): string {
  const codec = track.parameters;
  if (!codec || !CODEC_ENTRY.test(codec)) throw unreadable('a track has a codec that cannot be established');
  return codec;
}

async function readRange(blobs: BlobStore, key: string, start: number, end: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of blobs.read(key, { start, end: end - 1 })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
