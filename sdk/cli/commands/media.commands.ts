// Media: upload a file (optionally transcoded by a local ffmpeg first) with a progress bar until it
// is verified and ready; list, show, tag, delete, export the original bytes; generate an image.
import fs from 'node:fs/promises';
import path from 'node:path';
import { mediaFile } from '../../client/node-files';
import type { MediaGenerationRequest, Media, MediaList } from '../../contract/media';
import { throughLastPage } from '../all-pages';
import { command } from '../command';
import { CliFailure, EXIT, invalidInput } from '../exit-codes';
import { fields, formatBytes, lines, table, type Block, type Value } from '../output';
import { writeVerified } from '../verified-file';
import {
  checkMediaFile,
  MEDIA_SNIFF_BYTES,
  transcode,
  transcodePlan,
  type MediaKindHint,
  type TranscodeMode,
  type Transcoded,
} from '../transcode';

/** How long an upload waits for verification, unless --timeout says otherwise. */
const DEFAULT_WAIT_SECONDS = 120;

function size(media: Media): string | undefined {
  return media.width && media.height ? `${media.width}x${media.height}` : undefined;
}

function duration(media: Media): string | undefined {
  return media.duration_ms === undefined ? undefined : `${(media.duration_ms / 1000).toFixed(1)} s`;
}

export function mediaFields(media: Media): Block {
  return fields(
    ['id', media.id],
    ['filename', media.filename],
    ['source filename', media.source_filename],
    ['kind', media.kind],
    ['content type', media.content_type],
    ['size', `${formatBytes(media.bytes)} (${media.bytes} bytes)`],
    ['dimensions', size(media)],
    ['duration', duration(media)],
    ['codecs', media.codecs],
    ['tag', media.tag],
    ['sha256', media.sha256],
    ['revision', media.revision],
    ['created', media.created_at],
  );
}

function mediaRows(items: Media[]): Value[][] {
  return items.map((m) => [m.id, m.kind, formatBytes(m.bytes), size(m), duration(m), m.tag, m.filename]);
}

/** The SHA-256 an export's strong ETag names (`"<sha256>"`). */
function etagSha256(etag: string | undefined): string | undefined {
  return /^"([a-f0-9]{64})"$/.exec(etag ?? '')?.[1];
}

/** The first `bytes` of a file (all of it when shorter). */
async function fileHead(file: string, bytes: number): Promise<Uint8Array> {
  const handle = await fs.open(file);
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export const mediaCommands = [
  command({
    name: 'media upload',
    summary: 'upload an image or video file and wait until it is verified and ready',
    description:
      'PNG, JPEG, WebP, GIF, MP4, WebM and MP3 go up as they are. Other formats (MOV, MKV, HEIC, TIFF …) are\ntranscoded first by an ffmpeg found on the PATH: video to H.264 MP4, images to WebP (--transcode).',
    arguments: ['<file>'],
    options: [
      { flags: '--tag <tag>', description: 'tag it (playlists can select media by tag)' },
      { flags: '--name <filename>', description: 'the file name to store (default: the file’s own)' },
      {
        flags: '--transcode <when>',
        description: 'auto: only formats the server does not take; always; never',
        choices: ['auto', 'always', 'never'],
        default: 'auto',
      },
      {
        flags: '--kind <kind>',
        description: 'what an unfamiliar file holds, for transcoding',
        choices: ['image', 'video'],
      },
      {
        flags: '--timeout <seconds>',
        description: `wait at most this long (default ${DEFAULT_WAIT_SECONDS})`,
        parse: 'positive-int',
      },
    ],
    async run(ctx) {
      const original = ctx.args[0] as string;
      let head: Uint8Array;
      try {
        if (!(await fs.stat(original)).isFile()) throw new Error('not a file');
        head = await fileHead(original, MEDIA_SNIFF_BYTES);
      } catch {
        throw invalidInput(`${original} is not a readable file`);
      }
      checkMediaFile(original, head);
      const client = await ctx.client();
      const plan = transcodePlan(original, ctx.options.transcode as TranscodeMode, ctx.options.kind as MediaKindHint);
      const progress = ctx.progress(`upload ${path.basename(original)}`);
      let transcoded: Transcoded | undefined;
      try {
        if (plan.transcode) {
          progress.stage(`transcoding the ${plan.kind} with ffmpeg`);
          transcoded = await transcode(original, plan.kind, ctx.signal);
        }
        const source = await mediaFile(transcoded?.file ?? original);
        const timeoutMs = ((ctx.options.timeout as number | undefined) ?? DEFAULT_WAIT_SECONDS) * 1000;
        const uploaded = await client.media.upload(source, {
          filename: (ctx.options.name as string | undefined) ?? source.filename,
          sourceFilename: transcoded ? path.basename(original) : undefined,
          tag: ctx.options.tag as string | undefined,
          // A file goes as a stream whose size the transport does not know: say it.
          onProgress: (p) => progress.update({ ...p, total: p.total ?? source.bytes }),
          signal: ctx.signal,
          wait: { timeoutMs },
        });
        return uploaded.data;
      } finally {
        progress.done();
        await transcoded?.cleanup();
      }
    },
    human: (media) => [mediaFields(media)],
    ids: (media) => [media.id],
  }),
  command({
    name: 'media list',
    summary: 'list ready media, newest first',
    options: [
      { flags: '--tag <tag>', description: 'only media with this tag' },
      { flags: '--kind <kind>', description: 'only this kind', choices: ['image', 'video', 'audio'] },
      { flags: '--limit <n>', description: 'at most this many per page', parse: 'positive-int' },
      { flags: '--cursor <cursor>', description: 'the next_cursor of the previous page' },
      { flags: '--all', description: 'follow next_cursor to the last page' },
    ],
    async run(ctx): Promise<MediaList> {
      const client = await ctx.client();
      const query = {
        tag: ctx.options.tag as string | undefined,
        kind: ctx.options.kind as 'image' | 'video' | 'audio' | undefined,
        limit: ctx.options.limit as number | undefined,
      };
      const page = async (cursor: string | undefined) => (await client.media.list({ ...query, cursor })).data;
      const cursor = ctx.options.cursor as string | undefined;
      return ctx.options.all ? throughLastPage(page, cursor) : page(cursor);
    },
    human: (list) => [
      table(['id', 'kind', 'size', 'pixels', 'length', 'tag', 'filename'], mediaRows(list.items), 'no media'),
      ...(list.next_cursor ? [lines(`more: --cursor ${list.next_cursor}`)] : []),
    ],
    ids: (list) => list.items.map((m) => m.id),
  }),
  command({
    name: 'media show',
    summary: 'show one media',
    arguments: ['<media-id>'],
    async run(ctx) {
      return (await (await ctx.client()).media.get(ctx.args[0] as string)).data;
    },
    human: (media) => [mediaFields(media)],
    ids: (media) => [media.id],
  }),
  command({
    name: 'media tag',
    summary: 'set the tag of a media (playlists that select by tag follow), or clear it with --clear',
    arguments: ['<media-id>', '[tag]'],
    options: [{ flags: '--clear', description: 'remove the tag' }],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const tag = ctx.args[1] as string | undefined;
      if ((tag === undefined) === (ctx.options.clear !== true)) throw invalidInput('name a tag, or pass --clear');
      const client = await ctx.client();
      return (await client.media.update(ctx.args[0] as string, { tag: tag ?? null }, ctx.guarded())).data;
    },
    human: (media) => [mediaFields(media)],
    ids: (media) => [media.id],
  }),
  command({
    name: 'media delete',
    summary: 'delete a media (refused while a playlist on a screen uses it)',
    arguments: ['<media-id>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      await (await ctx.client()).media.delete(id, ctx.guarded());
      return { id, deleted: true };
    },
    human: (r) => [lines(`deleted ${r.id}`)],
    ids: (r) => [r.id],
  }),
  command({
    name: 'media export',
    summary: 'download the original bytes of a media, checked against its SHA-256',
    arguments: ['<media-id>'],
    options: [{ flags: '-o, --output <file>', description: 'where to write it (default: <media-id>.<ext> here)' }],
    async run(ctx) {
      const id = ctx.args[0] as string;
      const client = await ctx.client();
      const content = await client.media.content(id, { signal: ctx.signal });
      if (!content.body) throw new CliFailure(EXIT.unexpected, 'unexpected_response', 'the export had no body');
      const file = (ctx.options.output as string | undefined) ?? content.filename ?? id;
      const written = await writeVerified(content.body, file, etagSha256(content.etag), ctx.signal);
      return { id, file, bytes: written.bytes, sha256: written.sha256, content_type: content.contentType ?? null };
    },
    human: (r) => [fields(['media', r.id], ['file', r.file], ['size', formatBytes(r.bytes)], ['sha256', r.sha256])],
    ids: (r) => [r.file],
  }),
  command({
    name: 'media generate',
    summary: "generate an image from a prompt through the server's image vendor",
    arguments: ['<prompt>'],
    options: [
      // The server checks these against the contract (sdk/contract/media.ts) and names the allowed values.
      { flags: '--aspect-ratio <ratio>', description: '16:9 (default), 9:16, 1:1, 4:3, 3:4, 3:2 or 2:3' },
      { flags: '--quality <quality>', description: 'low, medium (default) or high' },
      { flags: '--tag <tag>', description: 'tag the new media' },
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      const request = {
        prompt: ctx.args[0] as string,
        aspect_ratio: ctx.options.aspectRatio,
        quality: ctx.options.quality,
        tag: ctx.options.tag,
      } as MediaGenerationRequest;
      return (await client.media.generate(request, ctx.call())).data;
    },
    human: (media) => [
      mediaFields(media),
      fields(['cost', `${media.usage.credits} credits (${media.usage.usd} USD, ${media.usage.quality})`]),
    ],
    ids: (media) => [media.id],
  }),
];
