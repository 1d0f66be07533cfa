// Invitation, dashboard and reset links are `<dashboard>/#invite=…`, `#link=…` (an agent's one-time
// dashboard link, a short-lived member invitation) and `#reset=…`: the access page runs those flows
// (claim, address code, new credential), so the app hands such a link to it unread.

/** The access page address for a link that carries a token, or undefined. */
export function accessPageFor(location: { pathname: string; hash: string }): string | undefined {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.has('invite') || fragment.has('link') || fragment.has('reset')) return `/access${location.hash}`;
  return undefined;
}
