// A sentence for a person from whatever a call threw: the problem's detail (its fields' problems
// with each field named in words, not as the path `timezone:` a program reads), else a fallback;
// capitalized when it stands alone, as it comes when it follows other words.
import { OperationFailedError } from '../../../sdk/client/operations';
import { MarqueeNetworkError, MarqueeProblem } from '../../../sdk/client/problem';

export function problemMessage(error: unknown, fallback: string): string {
  return sentenceStart(problemClause(error, fallback));
}

/**
 * The same words as they follow another's ("Failed: the bytes are not a PNG image"): the server's
 * details start in lower case, as the spec's problems do, and so may a fallback given here.
 */
export function problemClause(error: unknown, fallback: string): string {
  // A background operation (media verification) failed: its problem says why.
  if (error instanceof OperationFailedError) return error.problem.detail || fallback;
  if (error instanceof MarqueeProblem && error.errors.length > 0)
    return error.errors.map((e) => fieldSentence(e.field, e.detail ?? e.code ?? 'is not valid')).join('; ');
  if (error instanceof MarqueeProblem) return error.detail || `${fallback} (${error.status} ${error.code})`;
  if (error instanceof MarqueeNetworkError) return `${fallback}: the server did not answer. Check the connection.`;
  // WebAuthn's refusals carry the browser's wording (with a link to the W3C spec); say what they mean.
  if (error instanceof DOMException && error.name === 'NotAllowedError')
    return `${fallback}: no passkey was used (the request was cancelled, timed out, or this device has none for Marquee). Try again, or use your password.`;
  if (error instanceof DOMException && error.name === 'InvalidStateError')
    return `${fallback}: this device has a passkey for this login already.`;
  if (error instanceof Error && error.message) return `${fallback}: ${error.message}`;
  return fallback;
}

/**
 * A sentence shown on its own starts with a capital ("Screen not found", not "screen not found"),
 * unless it starts with a name a program reads (`med_…`, `index.html`, `image/png`), which is kept
 * as written.
 */
function sentenceStart(text: string): string {
  const first = text.charAt(0);
  if (first !== first.toLowerCase() || IDENTIFIER_FIRST.test(text)) return text;
  return `${first.toUpperCase()}${text.slice(1)}`;
}

/** A first word holding an underscore, a digit, a dot, a slash or a colon before its end. */
const IDENTIFIER_FIRST = /^[^\s]*[_\d./:][^\s]/;

/** A field path for a sentence: `entries.0.rule.windows.1.start` → "entry 1, window 2, start". */
export function fieldLabel(path: string): string {
  if (FIELD_LABELS[path]) return FIELD_LABELS[path];
  const parts: string[] = [];
  const segments = path.split('.');
  segments.forEach((segment, i) => {
    if (/^\d+$/.test(segment)) return;
    const next = segments[i + 1];
    const words = segment.replace(/_ms$/, '').replace(/_id$/, '').replace(/_/g, ' ');
    if (next !== undefined && /^\d+$/.test(next)) parts.push(`${singular(words)} ${Number(next) + 1}`);
    else if (segment !== 'rule') parts.push(words);
  });
  return parts.join(', ');
}

/** Top-level fields that live elsewhere on the page, by the name the page gives them. */
const FIELD_LABELS: Record<string, string> = {
  timezone: 'the screen’s time zone (under Settings)',
  playlist_id: 'the assigned playlist',
  sync_group: 'sync group',
  wall_region: 'wall region',
  until: 'ends at',
};

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

/** "Field: detail" for a person: the field named in words, as a sentence starts. */
export function fieldSentence(field: string, detail: string): string {
  const label = fieldLabel(field);
  if (label === '') return detail;
  return `${label.charAt(0).toUpperCase()}${label.slice(1)}: ${detail}`;
}
