// One rule for text that came from outside and is shown again (a problem's detail, a log line, the
// CLI's output): characters that can drive a terminal or reorder what a reader sees appear as
// `\uXXXX` escapes, and a long echo is cut with an ellipsis. Text stored as data is never changed;
// this is only about what is echoed back.

/**
 * C0 controls, DEL, C1 controls (NEL, CSI, … start escape sequences on 8-bit terminals) and the
 * bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder displayed text.
 */
const UNSAFE_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE = new RegExp(UNSAFE_CHARACTER.source, 'g');
/** The unsafe characters JSON.stringify leaves raw (it already escapes every C0 control). */
const UNSAFE_AFTER_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** How much of one untrusted value a problem detail repeats (a name, a key, a header value). */
export const ECHO_MAX_CHARACTERS = 120;

function escapeOne(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** True when the text holds a character `escapeUnsafe` would escape. */
export function hasUnsafeCharacters(text: string): boolean {
  return UNSAFE_CHARACTER.test(text);
}

/** The text with every unsafe character written as a `\uXXXX` escape; safe text is returned as is. */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/**
 * An untrusted value fit to repeat: unsafe characters escaped, then cut to at most `max` characters
 * (counting the escapes) with a trailing ellipsis; never cuts inside an escape or a surrogate pair.
 */
export function echo(text: string, max = ECHO_MAX_CHARACTERS): string {
  let shown = '';
  for (const character of text) {
    const piece = UNSAFE_CHARACTER.test(character) ? escapeOne(character) : character;
    if (shown.length + piece.length > max) return `${shown}…`;
    shown += piece;
  }
  return shown;
}

/**
 * JSON text (a log line) with the unsafe characters JSON.stringify leaves raw written as JSON
 * `\uXXXX` escapes: the same document when parsed, and no raw control byte for a terminal.
 */
export function escapeUnsafeInJson(json: string): string {
  return json.replace(UNSAFE_AFTER_JSON, escapeOne);
}
