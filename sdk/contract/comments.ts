// Comments: an agent's opaque JSON notes on a screen, a playlist or one playlist page. Marquee never
// reads them; they are not authorization, not part of a revision and never on a manifest.
import { z } from 'zod';

/** Compact UTF-8 JSON of one comments object (the hosted peer's limit). */
export const COMMENTS_MAX_BYTES = 1024;

/** Bytes of the compact UTF-8 JSON form, the measure of the limit. */
export function commentsBytes(comments: unknown): number {
  return new TextEncoder().encode(JSON.stringify(comments)).length;
}

/** PUT body: `comments` must be a JSON object (not an array, string, number, boolean or null). */
export const CommentsWrite = z.strictObject({
  comments: z
    .record(z.string(), z.unknown())
    .refine(
      (value) => commentsBytes(value) <= COMMENTS_MAX_BYTES,
      `must be at most ${COMMENTS_MAX_BYTES} bytes as compact UTF-8 JSON`,
    ),
});
export type CommentsWrite = z.infer<typeof CommentsWrite>;

/** GET and PUT answer: the object, or null where the target exists and has none. */
export interface Comments {
  comments: Record<string, unknown> | null;
}

/** What a comment route addresses: `screen/{id}`, `playlist/{id}` or `playlist/{id}/page/{page_id}`. */
export type CommentTarget =
  | { kind: 'screen'; id: string }
  | { kind: 'playlist'; id: string }
  | { kind: 'page'; id: string; pageId: string };
