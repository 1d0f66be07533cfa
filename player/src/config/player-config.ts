// Where the player's runtime client talks to: its own origin by default, both for a browser player
// served by the runtime plane and for the kiosk, whose agent serves the same build on loopback and
// answers the runtime routes itself (docs/decisions.md, Kiosk). A global set before the bundle
// loads, or a meta tag, can name another origin; the server answers no CORS, so that works only
// behind one proxy for both.

import { PAIRING_HINT_META } from '../../../sdk/contract/screens';

export interface PlayerConfig {
  /** Origin of the runtime plane: pairing, sessions, manifest, events, reports, launch, KV. */
  runtimeOrigin: string;
  /** Origin media URLs of the manifest resolve against (the manifest's own origin). */
  contentOrigin: string;
  /** Optional URL the pairing QR code opens, with `{code}` for the code (a dashboard's pairing page). */
  pairingHintUrl?: string;
}

/** `window.marqueePlayerConfig = { runtimeOrigin: 'https://play.example.com' }` before the bundle. */
export const CONFIG_GLOBAL = 'marqueePlayerConfig';
/** `<meta name="marquee:runtime-origin" content="https://play.example.com">` in the shell. */
export const RUNTIME_ORIGIN_META = 'marquee:runtime-origin';

export interface ConfigSources {
  /** The page's own origin, the default. */
  pageOrigin: string;
  /** The global's value, if any. */
  global?: unknown;
  /** The meta tag's content, if any. */
  meta?: string | null;
  /** The pairing hint meta tag's content, if any. */
  hintMeta?: string | null;
}

function originOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** The global beats the meta tag, which beats the page origin; a malformed value is ignored. */
export function resolvePlayerConfig(sources: ConfigSources): PlayerConfig {
  const fromGlobal =
    typeof sources.global === 'object' && sources.global !== null
      ? originOf((sources.global as { runtimeOrigin?: unknown }).runtimeOrigin)
      : undefined;
  const runtimeOrigin = fromGlobal ?? originOf(sources.meta) ?? new URL(sources.pageOrigin).origin;
  const hint =
    typeof sources.global === 'object' && sources.global !== null
      ? (sources.global as { pairingHintUrl?: unknown }).pairingHintUrl
      : undefined;
  const pairingHintUrl = hintUrl(hint) ?? hintUrl(sources.hintMeta);
  return { runtimeOrigin, contentOrigin: runtimeOrigin, ...(pairingHintUrl ? { pairingHintUrl } : {}) };
}

/** A pairing hint is an http(s) URL with `{code}` in it; anything else is ignored. */
function hintUrl(value: unknown): string | undefined {
  return typeof value === 'string' && /^https?:\/\//.test(value) && value.includes('{code}') ? value : undefined;
}

export function readPlayerConfig(win: Window = window): PlayerConfig {
  return resolvePlayerConfig({
    pageOrigin: win.location.origin,
    global: (win as unknown as Record<string, unknown>)[CONFIG_GLOBAL],
    meta: win.document.querySelector(`meta[name="${RUNTIME_ORIGIN_META}"]`)?.getAttribute('content'),
    hintMeta: win.document.querySelector(`meta[name="${PAIRING_HINT_META}"]`)?.getAttribute('content'),
  });
}
