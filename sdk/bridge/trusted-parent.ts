// Which parent origin an application frame trusts, derived from the frame's own address with no
// configuration: Marquee serves a release at `<40 hex>.release.<domain>[:port]` and the player at
// `<domain>[:port]` with the same scheme, so a page on a release host trusts exactly that player.
// Anything else (opened directly, previewed, or embedded elsewhere) trusts nobody and stays inert.

const RELEASE_HOST = /^[0-9a-f]{40}\.release\.(.+)$/;
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** The player origin trusted by a page at `href`, or null when the page is not on a release host. */
export function trustedParentOrigin(href: string): string | null {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const match = RELEASE_HOST.exec(url.hostname);
  if (!match || !HOST_NAME.test(match[1]!)) return null;
  return `${url.protocol}//${match[1]}${url.port ? `:${url.port}` : ''}`;
}
