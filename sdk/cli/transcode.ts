// Optional local transcoding before a media upload, through an `ffmpeg` found on the PATH (never
// downloaded). Video becomes H.264 MP4 (yuv420p, faststart, no audio: screens play video muted),
// which every player decodes; a still image becomes WebP. The output goes to a private temporary
// directory that is removed when the upload ends, fails or is interrupted.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { mediaContentTypeOf } from '../client/marquee-client';
import { configProblem, invalidInput } from './exit-codes';

export type TranscodeMode = 'auto' | 'always' | 'never';
export type MediaKindHint = 'image' | 'video';

/** Extensions ffmpeg reads that the server does not accept as they are, by what they hold. */
const VIDEO_EXTENSIONS = new Set([
  'mov',
  'mkv',
  'avi',
  'm4v',
  'wmv',
  'flv',
  'mpg',
  'mpeg',
  'ts',
  'mts',
  '3gp',
  'ogv',
  'mp4',
  'webm',
]);
const IMAGE_EXTENSIONS = new Set(['bmp', 'tif', 'tiff', 'heic', 'heif', 'avif', 'tga', 'jpg', 'jpeg', 'png', 'webp']);
/** Audio the server does not take as it is (it plays MP3); the CLI converts only images and video. */
const AUDIO_EXTENSIONS = new Set(['wav', 'flac', 'm4a', 'aac', 'ogg', 'oga', 'opus', 'wma', 'aif', 'aiff']);
/** What the server plays as it is, for messages. */
const PLAYED_AS_IS = 'PNG, JPEG, WebP, GIF, MP4, WebM or MP3';
/** How much of a file is read to tell text from media (a header, never the whole file). */
export const MEDIA_SNIFF_BYTES = 4096;
/** How much of ffmpeg's stderr a failure repeats. */
const STDERR_TAIL_CHARACTERS = 600;

/** The first executable called `name` on the PATH, or undefined. */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const directory of (env.PATH ?? '').split(path.delimiter)) {
    if (!directory) continue;
    for (const extension of extensions) {
      const candidate = path.join(directory, name + extension);
      try {
        await fs.access(candidate, fs.constants.X_OK);
        if ((await fs.stat(candidate)).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

function extensionOf(file: string): string {
  return path.extname(file).slice(1).toLowerCase();
}

/** Whether a file's first bytes are text: no NUL byte and valid UTF-8 (images, video and audio are binary). */
function isText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    // stream: a character cut at the end of the head is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses a file that is no media at all (a README, a document saved as text, an empty file) before
 * anything is uploaded or transcoded, by its first bytes (`MEDIA_SNIFF_BYTES`), whatever its name.
 */
export function checkMediaFile(file: string, head: Uint8Array): void {
  const name = path.basename(file);
  if (head.length === 0) throw invalidInput(`${name} is empty`);
  if (isText(head))
    throw invalidInput(`${name} is not an image, video or audio file Marquee plays`, {
      hint: `upload a ${PLAYED_AS_IS} file, or another image or video format for ffmpeg to convert`,
    });
}

/** Whether this file should go through ffmpeg, and as what. */
export function transcodePlan(
  file: string,
  mode: TranscodeMode,
  kind: MediaKindHint | undefined,
): { transcode: false } | { transcode: true; kind: MediaKindHint } {
  const accepted = mediaContentTypeOf(file) !== undefined;
  if (mode === 'never' || (mode === 'auto' && accepted)) return { transcode: false };
  const extension = extensionOf(file);
  const guessed = VIDEO_EXTENSIONS.has(extension) ? 'video' : IMAGE_EXTENSIONS.has(extension) ? 'image' : undefined;
  const decided = kind ?? guessed;
  if (!decided && AUDIO_EXTENSIONS.has(extension))
    throw invalidInput(`${path.basename(file)} is audio in a format Marquee does not play: convert it to MP3`);
  if (!decided)
    throw invalidInput(
      `cannot tell whether ${path.basename(file)} is an image or a video: pass --kind image or --kind video`,
      { hint: `Marquee plays ${PLAYED_AS_IS} as it is; ffmpeg converts other images and videos` },
    );
  return { transcode: true, kind: decided };
}

export interface Transcoded {
  file: string;
  /** Removes the temporary directory. */
  cleanup(): Promise<void>;
}

/** Runs ffmpeg on `file`; the process is killed and the output removed when `signal` fires. */
export async function transcode(
  file: string,
  kind: MediaKindHint,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Transcoded> {
  const ffmpeg = await findOnPath('ffmpeg', env);
  if (!ffmpeg)
    throw configProblem('ffmpeg_not_found', `transcoding ${path.basename(file)} needs ffmpeg on the PATH`, {
      hint: 'install ffmpeg (e.g. apt-get install ffmpeg), or upload a PNG, JPEG, WebP, GIF, MP4 or WebM file',
    });
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'marquee-transcode-'));
  const cleanup = () => fs.rm(directory, { recursive: true, force: true });
  const base = path.basename(file, path.extname(file)) || 'media';
  const output = path.join(directory, `${base}.${kind === 'video' ? 'mp4' : 'webp'}`);
  const codec =
    kind === 'video'
      ? [
          '-map',
          '0:v:0',
          '-c:v',
          'libx264',
          '-pix_fmt',
          'yuv420p',
          '-preset',
          'medium',
          '-crf',
          '20',
          '-movflags',
          '+faststart',
          '-an',
        ]
      : ['-frames:v', '1', '-c:v', 'libwebp', '-quality', '90'];
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', file, ...codec, output];
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(ffmpeg, args, { stdio: ['ignore', 'ignore', 'pipe'], signal });
      let stderr = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARACTERS)));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code === 0) resolve();
        else reject(invalidInput(`ffmpeg could not transcode ${path.basename(file)} (exit ${code}): ${stderr.trim()}`));
      });
    });
    await fs.access(output);
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { file: output, cleanup };
}
