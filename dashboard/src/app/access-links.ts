// Invitation and reset links are `<dashboard>/#invite=…` and `#reset=…`: the access page runs those
// flows (claim, address code, new credential), so the app hands such a link to it unread.

/** The access page address for a link that carries a token, or undefined. */
export function accessPageFor(location: { pathname: string; hash: string }): string | undefined {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.has('invite') || fragment.has('reset')) return `/access${location.hash}`;
  return undefined;
}
