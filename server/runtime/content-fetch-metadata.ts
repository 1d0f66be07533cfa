// Fetch Metadata on protected content: a browser must describe the trusted player's own use of the
// bytes (same-origin image, video or audio elements, or the player's and its service worker's
// fetches that cache them). Requests without any Fetch Metadata come from native clients and are
// allowed; metadata that describes anything else is refused.
import type { FetchMetadata } from '../release-host/fetch-metadata';

/** Destinations of the player's own use: media elements, and `empty` for fetch()/service-worker caching. */
const CONTENT_DESTS = new Set(['image', 'video', 'audio', 'track', 'empty']);
/** Non-navigation request modes. */
const CONTENT_MODES = new Set(['no-cors', 'cors', 'same-origin']);

/** Why the metadata contradicts player use of protected content, or undefined when it fits. */
export function contentFetchConflict(meta: FetchMetadata): string | undefined {
  if (meta.site === undefined && meta.mode === undefined && meta.dest === undefined) return undefined;
  if (meta.site !== 'same-origin')
    return 'protected content is loaded only by the player on its own origin (Sec-Fetch-Site must be same-origin)';
  if (meta.mode !== undefined && !CONTENT_MODES.has(meta.mode)) return 'protected content is never navigated to';
  if (meta.dest !== undefined && !CONTENT_DESTS.has(meta.dest))
    return `protected content is not loaded as ${meta.dest}`;
  return undefined;
}
