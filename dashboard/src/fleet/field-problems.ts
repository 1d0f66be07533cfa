// Validation problems on the fields they name. The server answers invalid_request with `errors`,
// each naming its field as a dotted path (`entries.0.rule.windows.1.start`, `until`); the app checks
// the same zod schemas before sending and names fields the same way, so a form shows either kind of
// problem under the input whose id is that path. Zod's own messages are for programs ("Too small:
// expected number to be >=1000" on a field a person types in seconds); a form shows them in words and
// in the field's own unit.
import type { z } from 'zod';
import { MarqueeProblem } from '../../../sdk/client/problem';
import { fieldSentence, problemMessage } from '../state/problem-message';

export interface FieldProblems {
  /** By dotted field path. */
  fields: Record<string, string>;
  /** What no field of the form shows (or null). */
  message: string | null;
}

export const NO_PROBLEMS: FieldProblems = { fields: {}, message: null };

/** A zod failure's issues by field path (the first issue of each field), in words. */
export function issuesByField(error: z.ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.map(String).join('.');
    fields[key] ??= issueText(issue);
  }
  return fields;
}

/** Zod's default messages (a schema's own message, such as "must not be blank", is already words). */
const ZOD_DEFAULT_MESSAGE = /^(Invalid|Too (small|big)|Unrecognized|Expected)\b/;

/** What an empty field asks for, by its last path segment. */
const EMPTY_FIELD: Record<string, string> = {
  playlist_id: 'choose a playlist',
  media_id: 'choose a media item',
  media_ids: 'choose at least one media item',
  timezone: 'choose a time zone',
  name: 'enter a name',
  reason: 'enter a reason',
  text: 'enter a message',
  title: 'enter a title',
};

/** One issue in words, in the unit its field is typed in (fields named `…_ms` are typed in seconds). */
export function issueText(issue: z.core.$ZodIssue): string {
  if (!ZOD_DEFAULT_MESSAGE.test(issue.message)) return issue.message;
  const field = String(issue.path.at(-1) ?? '');
  const inSeconds = field.endsWith('_ms');
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'number' || issue.expected === 'int')
        return inSeconds ? 'enter a number of seconds' : 'enter a number';
      return EMPTY_FIELD[field] ?? 'fill this in';
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = Number(small ? issue.minimum : issue.maximum);
      const inclusive = issue.inclusive !== false;
      if (issue.origin === 'string' && small && bound <= 1) return EMPTY_FIELD[field] ?? 'fill this in';
      const words = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
      if (issue.origin === 'number' || issue.origin === 'int')
        return `${words} ${inSeconds ? durationText(bound) : bound}`;
      if (issue.origin === 'string') return `${words} ${bound} character${bound === 1 ? '' : 's'}`;
      if (issue.origin === 'array' || issue.origin === 'set')
        return small && bound === 1 ? (EMPTY_FIELD[field] ?? 'add at least one') : `${words} ${bound}`;
      return `${words} ${bound}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `choose one of ${issue.values.join(', ')}`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'is not in the expected form' : `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${inSeconds ? durationText(Number(issue.divisor)) : issue.divisor}`;
    case 'unrecognized_keys':
      return `has fields it does not take (${issue.keys.join(', ')})`;
    default:
      return 'is not valid';
  }
}

/** Milliseconds as a person reads them: "1 second", "0.5 seconds", "60 seconds", "24 hours". */
export function durationText(ms: number): string {
  const [amount, unit] =
    ms >= 3_600_000 && ms % 3_600_000 === 0
      ? [ms / 3_600_000, 'hour']
      : ms >= 600_000 && ms % 60_000 === 0
        ? [ms / 60_000, 'minute']
        : [ms / 1000, 'second'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

/**
 * A call's failure as field problems: errors whose field the form shows (`known`) go on the field;
 * the rest, and any other failure, become the message.
 */
export function problemsOf(error: unknown, known: (field: string) => boolean, fallback: string): FieldProblems {
  if (!(error instanceof MarqueeProblem) || error.errors.length === 0)
    return { fields: {}, message: problemMessage(error, fallback) };
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  for (const e of error.errors) {
    const detail = e.detail ?? e.code ?? 'is not valid';
    if (known(e.field)) fields[e.field] ??= detail;
    else rest.push(fieldSentence(e.field, detail));
  }
  return { fields, message: rest.length > 0 ? rest.join('; ') : null };
}

/** The DOM id of a field path (ids keep to letters, digits, - and _). */
export function fieldId(prefix: string, path: string): string {
  return `${prefix}-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}
