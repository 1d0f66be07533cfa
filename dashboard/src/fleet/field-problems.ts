// Validation problems on the fields they name. The server answers invalid_request with `errors`,
// each naming its field as a dotted path (`entries.0.rule.windows.1.start`, `until`); the app checks
// the same zod schemas before sending and names fields the same way, so a form shows either kind of
// problem under the input whose id is that path.
import type { z } from 'zod';
import { MarqueeProblem } from '../../../sdk/client/problem';
import { problemMessage } from '../state/problem-message';

export interface FieldProblems {
  /** By dotted field path. */
  fields: Record<string, string>;
  /** What no field of the form shows (or null). */
  message: string | null;
}

export const NO_PROBLEMS: FieldProblems = { fields: {}, message: null };

/** A zod failure's issues by field path (the first issue of each field). */
export function issuesByField(error: z.ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.map(String).join('.');
    fields[key] ??= issue.message;
  }
  return fields;
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
    else rest.push(`${e.field}: ${detail}`);
  }
  return { fields, message: rest.length > 0 ? rest.join('; ') : null };
}

/** The DOM id of a field path (ids keep to letters, digits, - and _). */
export function fieldId(prefix: string, path: string): string {
  return `${prefix}-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}
