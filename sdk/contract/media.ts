// Media: the upload declaration and commit, tag patch, generation request, and the shapes the
// server answers with (Media, MediaList, MediaUploadSession, MediaGeneration).
import { z } from 'zod';
import { CONTROL_CHARACTER, MEDIA_FILENAME_MAX, MEDIA_MAX_BYTES, TAG_PATTERN } from './limits';
import type { Operation } from './operations';

/** spec Resources / Media: the seven content types an upload may declare. */
export const MEDIA_CONTENT_TYPES = [
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/gif',
  'video/mp4',
  'video/webm',
  'audio/mpeg',
] as const;
export type MediaContentType = (typeof MEDIA_CONTENT_TYPES)[number];

export type MediaKind = 'image' | 'video' | 'audio';

/**
 * Images are bounded further than the 1 GiB transport ceiling (reference contract:
 * media_image_bytes): a player decodes a whole image into memory, so a larger one is refused
 * with invalid_request before any byte is sent.
 */
export const MEDIA_IMAGE_MAX_BYTES = 20_971_520;

export function kindOf(contentType: MediaContentType): MediaKind {
  return contentType.startsWith('image/') ? 'image' : contentType.startsWith('video/') ? 'video' : 'audio';
}

/** The extension of the verified content type: export attachment names and derived filenames. */
export const CANONICAL_EXTENSION: Record<MediaContentType, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/webp': '.webp',
  'image/gif': '.gif',
  'video/mp4': '.mp4',
  'video/webm': '.webm',
  'audio/mpeg': '.mp3',
};

/** 1 to 255 characters (Unicode scalar values), no control characters. */
const FileName = z
  .string()
  .refine(
    (s) => [...s].length >= 1 && [...s].length <= MEDIA_FILENAME_MAX,
    `must be 1 to ${MEDIA_FILENAME_MAX} characters`,
  )
  .refine((s) => !CONTROL_CHARACTER.test(s) && !/[\u2028\u2029]/u.test(s), 'must not contain control characters');

/** A bare file name: no directory part. */
const BareFileName = FileName.refine(
  (s) => !/[/\\]/.test(s) && s !== '.' && s !== '..',
  'must be a bare file name without a directory',
);

export const MediaTag = z.string().regex(TAG_PATTERN, 'must be 1 to 32 letters or digits');
export const ContentType = z.enum(MEDIA_CONTENT_TYPES);
export const MediaBytes = z.number().int().min(1).max(MEDIA_MAX_BYTES);
export const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, 'must be 64 lowercase hexadecimal digits');

function imageBound(value: { content_type: MediaContentType; bytes: number }, ctx: z.RefinementCtx): void {
  if (kindOf(value.content_type) === 'image' && value.bytes > MEDIA_IMAGE_MAX_BYTES) {
    ctx.addIssue({
      code: 'custom',
      path: ['bytes'],
      message: `an image may have at most ${MEDIA_IMAGE_MAX_BYTES} bytes`,
    });
  }
}

/** source_filename and tag are Model P fields; the server refuses them from an account bearer. */
export const MediaUploadDeclaration = z
  .strictObject({
    filename: FileName,
    source_filename: BareFileName.optional(),
    content_type: ContentType,
    bytes: MediaBytes,
    sha256: Sha256,
    tag: MediaTag.optional(),
  })
  .superRefine(imageBound);
export type MediaUploadDeclaration = z.infer<typeof MediaUploadDeclaration>;

/** Must equal the declaration exactly. */
export const MediaCommit = z.strictObject({ content_type: ContentType, bytes: MediaBytes, sha256: Sha256 });
export type MediaCommit = z.infer<typeof MediaCommit>;

export const MediaTagPatch = z.strictObject({ tag: MediaTag.nullable() });
export type MediaTagPatch = z.infer<typeof MediaTagPatch>;

export const MEDIA_LIST_MAX_LIMIT = 100;
export const MEDIA_LIST_DEFAULT_LIMIT = 50;

export const MediaListQuery = z.strictObject({
  tag: MediaTag.optional(),
  kind: z.enum(['image', 'video', 'audio']).optional(),
  cursor: z.string().min(1).max(512).optional(),
  limit: z.coerce.number().int().min(1).max(MEDIA_LIST_MAX_LIMIT).optional(),
});
export type MediaListQuery = z.infer<typeof MediaListQuery>;

/** spec: generated media are stored at the exact aspect size with a 1080 px short edge. */
export const GENERATED_SIZES = {
  '16:9': { width: 1920, height: 1080 },
  '9:16': { width: 1080, height: 1920 },
  '1:1': { width: 1080, height: 1080 },
  '4:3': { width: 1440, height: 1080 },
  '3:4': { width: 1080, height: 1440 },
  '3:2': { width: 1620, height: 1080 },
  '2:3': { width: 1080, height: 1620 },
} as const;
export type AspectRatio = keyof typeof GENERATED_SIZES;
export const ASPECT_RATIOS = Object.keys(GENERATED_SIZES) as AspectRatio[];

export const GENERATION_QUALITIES = ['low', 'medium', 'high'] as const;
export type GenerationQuality = (typeof GENERATION_QUALITIES)[number];

export const GENERATION_PROMPT_MAX = 4000; // spec Limits: prompt 1 to 4000 characters
/** Reference images sent to the vendor with the prompt; OpenAI-compatible edits take a handful. */
export const GENERATION_REFERENCES_MAX = 4;
/**
 * Largest reference image sent to the vendor: OpenAI-compatible edits take images under 50 MB,
 * and each reference is read whole into the server's memory to be sent.
 */
export const GENERATION_REFERENCE_MAX_BYTES = 50 * 1024 * 1024;

export const MediaGenerationRequest = z.strictObject({
  prompt: z
    .string()
    .refine(
      (s) => [...s].length >= 1 && [...s].length <= GENERATION_PROMPT_MAX,
      `must be 1 to ${GENERATION_PROMPT_MAX} characters`,
    ),
  aspect_ratio: z.enum(ASPECT_RATIOS as [AspectRatio, ...AspectRatio[]]).default('16:9'),
  quality: z.enum(GENERATION_QUALITIES).default('medium'),
  tag: MediaTag.optional(),
  /** Ready image media of the same project that the vendor should take as visual references. */
  references: z
    .array(z.string().regex(/^med_[A-Za-z0-9_-]{1,64}$/, 'must be a media id'))
    .max(GENERATION_REFERENCES_MAX)
    .refine((ids) => new Set(ids).size === ids.length, 'references must be unique')
    .optional(),
});
export type MediaGenerationRequest = z.input<typeof MediaGenerationRequest>;

export interface Media {
  id: string;
  filename: string;
  /** Model P: the original file name as declared, verbatim. */
  source_filename?: string;
  kind: MediaKind;
  content_type: MediaContentType;
  operation_id: string;
  sha256: string;
  bytes: number;
  /** Verified pixel size (images and video). */
  width?: number;
  height?: number;
  /** Verified container duration (video and audio). */
  duration_ms?: number;
  /** RFC 6381 codec list derived from the bytes (video and audio). */
  codecs?: string;
  /** Absent when untagged. */
  tag?: string;
  revision: number;
  state: 'ready';
  created_at: string;
  updated_at: string;
}

export interface MediaList {
  items: Media[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

/** Send `method` to `upload_url` with every header verbatim, exactly once. URL and headers are credentials. */
export interface MediaUploadSession {
  id: string;
  operation: Operation;
  upload_url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expires_at: string;
}

export interface MediaGenerationUsage {
  quality: GenerationQuality;
  /** Whole credits charged. */
  credits: number;
  /** Vendor cost in US dollars, as a canonical decimal string. */
  usd: string;
}

export type MediaGeneration = Media & { usage: MediaGenerationUsage };
