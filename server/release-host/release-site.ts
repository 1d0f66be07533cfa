// Whether release hosts are another site than the player, as Chromium decides it. Chromium gives a
// cross-site frame its own renderer process (site isolation); a same-site one shares the player's
// main thread, so an application that loops forever would freeze the screen and every safeguard
// of the player with it. A site is the registrable domain on the Public Suffix List, private
// section included (`a.github.io` and `b.github.io` are different sites), and an unlisted top
// label counts as a suffix, as Chromium counts it: `x.release.localhost` belongs to the site
// `release.localhost`, which is not `localhost`. A host with no registrable domain (an IP address,
// `localhost` itself) is its own site.
import { getDomain } from 'tldts';

/** The site of a host name: its registrable domain, or the host itself when it has none. */
export function siteOfHost(host: string): string {
  const name = host.toLowerCase().replace(/\.$/, '');
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}

/**
 * True when a release host made from `releaseTemplate` (`{label}` stands for the host label) is
 * the same site as the player at `playOrigin`. Schemes are not compared, which is stricter than
 * Chromium's schemeful sites: a player would not frame releases of another scheme anyway.
 */
export function releasesSameSiteAsPlayer(playOrigin: string, releaseTemplate: string): boolean {
  const sample = new URL(releaseTemplate.replace('{label}', '0'.repeat(40))).hostname;
  return siteOfHost(sample) === siteOfHost(new URL(playOrigin).hostname);
}
