// What the agent does with an upstream manifest: lists what the mirror must hold for it, and
// renders the manifest its renderer gets on the loopback origin. Only what names another origin
// changes (docs/decisions.md, Kiosk): media and package URLs and launch routes become
// root-relative (the agent answers them), an application's origin becomes the release's local
// origin, and placement capabilities are the agent's own (the upstream ones stay in the agent).
import crypto from 'node:crypto';
import {
  grantedPages,
  type RuntimeApplicationPlacement,
  type RuntimeManifest,
  type RuntimePage,
} from '../../sdk/contract/manifest';
import type { MirrorItem } from './mirror';
import { treeKey } from './release-trees';

export interface ManifestRelease {
  applicationId: string;
  releaseId: string;
  packageSha256: string;
}

function pathOf(url: string): string {
  return new URL(url, 'http://manifest.invalid').pathname;
}

/** Every media item (its upcoming pages' too), soundtrack track and application package of the manifest, once each. */
export function mirrorItemsOf(manifest: RuntimeManifest): MirrorItem[] {
  const items = new Map<string, MirrorItem>();
  for (const page of grantedPages(manifest)) {
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') {
        for (const item of content.items)
          items.set(item.sha256, { sha256: item.sha256, bytes: item.bytes, path: pathOf(item.src), kind: 'media' });
      } else if (content.type === 'application') {
        const pkg = content.package;
        items.set(pkg.sha256, { sha256: pkg.sha256, bytes: pkg.bytes, path: pathOf(pkg.url), kind: 'package' });
      }
    }
  }
  for (const track of manifest.soundtrack?.tracks ?? [])
    items.set(track.sha256, { sha256: track.sha256, bytes: track.bytes, path: pathOf(track.src), kind: 'media' });
  return [...items.values()];
}

export function releasesOf(manifest: RuntimeManifest): ManifestRelease[] {
  const releases = new Map<string, ManifestRelease>();
  for (const page of manifest.pages) {
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'application')
        releases.set(content.releaseId, {
          applicationId: content.applicationId,
          releaseId: content.releaseId,
          packageSha256: content.package.sha256,
        });
    }
  }
  return [...releases.values()];
}

/** The mirror entries these manifests need: never evicted while they are active or next. */
export function neededKeys(manifests: RuntimeManifest[]): Set<string> {
  const keys = new Set<string>();
  for (const manifest of manifests) {
    for (const item of mirrorItemsOf(manifest)) keys.add(item.sha256);
    for (const release of releasesOf(manifest)) keys.add(treeKey(release.releaseId));
  }
  return keys;
}

/** The media of a manifest by id: what `/content/v1/manifests/{rev}/media/{id}` serves. */
export function mediaOf(
  manifest: RuntimeManifest,
  mediaId: string,
): { sha256: string; bytes: number; contentType: string } | undefined {
  for (const page of grantedPages(manifest))
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') {
        const item = content.items.find((i) => i.mediaId === mediaId);
        if (item) return item;
      }
    }
  return manifest.soundtrack?.tracks.find((t) => t.mediaId === mediaId);
}

/** A release's local host label: one origin per release, stable across restarts, not guessable from nothing. */
export function localReleaseLabel(releaseId: string): string {
  return crypto.createHash('sha256').update(`marquee-kiosk/release\u0000${releaseId}`).digest('hex').slice(0, 40);
}

export interface LocalRendering {
  /** The release's local origin, e.g. `http://<label>.release.localhost:<port>`. */
  releaseOrigin(releaseId: string): string;
  /** A local capability for an application placement of the manifest. */
  capability(placement: RuntimeApplicationPlacement, pageId: string): { handle: string; expiresAt: string };
}

/** The manifest as the renderer gets it from the agent's origin. */
export function renderLocalManifest(manifest: RuntimeManifest, local: LocalRendering): RuntimeManifest {
  const localPage = (page: RuntimePage): RuntimePage => ({
    ...page,
    placements: page.placements.map((placement) => {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') {
        return {
          ...placement,
          content: { ...content, items: content.items.map((i) => ({ ...i, src: pathOf(i.src) })) },
        } as typeof placement;
      }
      if (content.type === 'application') {
        const capability = local.capability(placement as RuntimeApplicationPlacement, page.id);
        return {
          ...placement,
          content: {
            ...content,
            launchUrl: pathOf(content.launchUrl),
            origin: local.releaseOrigin(content.releaseId),
            package: { ...content.package, url: pathOf(content.package.url) },
          },
          capabilityHandle: capability.handle,
          capabilityExpiresAt: capability.expiresAt,
        } as typeof placement;
      }
      return placement;
    }),
  });
  return {
    ...manifest,
    pages: manifest.pages.map(localPage),
    ...(manifest.upcoming ? { upcoming: { ...manifest.upcoming, pages: manifest.upcoming.pages.map(localPage) } } : {}),
    ...(manifest.soundtrack
      ? {
          soundtrack: {
            ...manifest.soundtrack,
            tracks: manifest.soundtrack.tracks.map((t) => ({ ...t, src: pathOf(t.src) })),
          },
        }
      : {}),
  };
}
