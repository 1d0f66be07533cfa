// Optional injection of the app bridge into a packed application: the classic script is added as
// the reserved file `_marquee/runtime.js` and every top-level HTML file references it with one
// exact marker element, before the first `</head>` (or at the top, after a doctype).

import { RUNTIME_DIRECTORY } from '../contract/archive-paths';

export { RUNTIME_DIRECTORY };
export const RUNTIME_PATH = `${RUNTIME_DIRECTORY}/runtime.js`;
export const RUNTIME_MARKER = '<script src="./_marquee/runtime.js" data-marquee-sdk="1"></script>';
const MARKER_ATTRIBUTE = /data-marquee-sdk/gi;

export type MarkerState = 'absent' | 'present';

export class RuntimeMarkerError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'RuntimeMarkerError';
  }
}

/**
 * Whether `html` already carries the marker. Any mention of data-marquee-sdk must be exactly one
 * marker element as written above (no async/defer, that src, version 1); anything else is an error.
 */
export function markerState(html: Buffer): MarkerState {
  const text = html.toString('latin1');
  const mentions = text.match(MARKER_ATTRIBUTE)?.length ?? 0;
  if (mentions === 0) return 'absent';
  const exact = text.split(RUNTIME_MARKER).length - 1;
  if (mentions === 1 && exact === 1) return 'present';
  if (mentions > 1)
    throw new RuntimeMarkerError(`data-marquee-sdk appears ${mentions} times; keep exactly one ${RUNTIME_MARKER}`);
  throw new RuntimeMarkerError(`the data-marquee-sdk element must be exactly ${RUNTIME_MARKER}`);
}

/** Whether `html` names the runtime's path at all (a plain script tag without the marker, say). */
export function referencesRuntime(html: Buffer): boolean {
  return html.toString('latin1').includes(RUNTIME_PATH);
}

/**
 * `html` with the marker added (unchanged when already present). Works on bytes as latin1 so any
 * encoding survives untouched; the marker itself is ASCII.
 */
export function injectRuntimeMarker(html: Buffer): Buffer {
  if (markerState(html) === 'present') return html;
  const text = html.toString('latin1');
  const head = text.search(/<\/head\s*>/i);
  let out: string;
  if (head !== -1) {
    out = `${text.slice(0, head)}${RUNTIME_MARKER}\n${text.slice(head)}`;
  } else {
    // Nothing may precede a doctype (quirks mode), so the marker goes right after it.
    const doctype = /^(\uFEFF|\xEF\xBB\xBF)?\s*<!doctype[^>]*>/i.exec(text);
    const at = doctype ? doctype[0].length : 0;
    out = `${text.slice(0, at)}${at > 0 ? '\n' : ''}${RUNTIME_MARKER}\n${text.slice(at)}`;
  }
  return Buffer.from(out, 'latin1');
}
