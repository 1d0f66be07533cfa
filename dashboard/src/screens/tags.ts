// Tags as a person types them ("lobby, floor2 lobby") and as the API takes them (unique, valid).
import { TAG_PATTERN, TAGS_PER_SCREEN } from '../../../sdk/contract/limits';

export interface ParsedTags {
  tags: string[];
  /** Why the text is not a valid tag set, or null. */
  problem: string | null;
}

export function parseTags(text: string): ParsedTags {
  const tags = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
  const bad = tags.find((t) => !TAG_PATTERN.test(t));
  if (bad) return { tags, problem: `“${bad}” is not a tag: use 1 to 32 letters or digits.` };
  if (tags.length > TAGS_PER_SCREEN) return { tags, problem: `A screen has at most ${TAGS_PER_SCREEN} tags.` };
  return { tags, problem: null };
}
