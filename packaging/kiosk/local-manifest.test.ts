// The agent mirrors what an offline switch needs: the upcoming pages' media are mirrored, served
// and rewritten onto the loopback origin like the rest.
import { describe, expect, it } from 'vitest';
import { mediaRoute } from '../../sdk/contract/manifest';
import { imagePlacement, manifestFixture, pageFixture, REVISION } from '../../player/src/playback/manifest.fixtures';
import { mediaOf, mirrorItemsOf, renderLocalManifest } from './local-manifest';

const AT = '2026-03-02T12:00:00.000Z';

function withUpcoming() {
  const upcomingPage = pageFixture('lunch', { placements: [imagePlacement('hero', ['med_lunch'])] });
  const item = (upcomingPage.placements[0]!.content as { items: { sha256: string }[] }).items[0]!;
  item.sha256 = 'b'.repeat(64);
  return manifestFixture({
    nextBoundaryAt: AT,
    upcoming: { at: AT, playlistId: 'pl_next', playlistRevision: 2, pages: [upcomingPage] },
  });
}

describe('upcoming media in the kiosk mirror', () => {
  it('mirrors and serves the upcoming pages media under the current revision', () => {
    const manifest = withUpcoming();
    expect(mirrorItemsOf(manifest).map((i) => i.path)).toContain(mediaRoute(REVISION, 'med_lunch'));
    expect(mediaOf(manifest, 'med_lunch')?.sha256).toBe('b'.repeat(64));
  });

  it('renders the upcoming pages with root-relative media for the renderer', () => {
    const upstream = withUpcoming();
    const absolute = structuredClone(upstream);
    const hero = absolute.upcoming!.pages[0]!.placements[0]!.content as { items: { src: string }[] };
    hero.items[0]!.src = `https://play.example${hero.items[0]!.src}`;
    const local = renderLocalManifest(absolute, {
      releaseOrigin: () => 'http://x.release.localhost:1',
      capability: () => ({ handle: 'h'.repeat(40), expiresAt: AT }),
    });
    const items = (local.upcoming!.pages[0]!.placements[0]!.content as { items: { src: string }[] }).items;
    expect(items[0]!.src).toBe(mediaRoute(REVISION, 'med_lunch'));
  });
});
