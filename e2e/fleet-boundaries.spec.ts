// Takeover ends on a real player in real time: the server's boundary timer ends a takeover at its
// until and the player follows at its next page turn. The server's clock is the real one here (the
// production path unchanged); schedule windows at a civil time in a zone are
// e2e/fleet-daypart.spec.ts, on a server whose clock the test sets. A player whose network is cut
// before a takeover ends switches at the end all the same, from its manifest's upcoming pages
// (docs/decisions.md, "Offline switch at a boundary").
import { expect, test } from './support/fixtures';
import { imagePage } from './support/playlist-documents';
import type { PlayerPage } from './pages/player-page';

test.use({ viewport: { width: 1280, height: 720 } });

/** A switch lands on glass at the next page boundary after the manifest is fetched: pages last 1 s. */
const PAGE_MS = 1000;
/** From the instant to glass: the timer, the stream's manifest_changed, the fetch, one page turn. */
const ON_GLASS_WITHIN_MS = 6000;

/** Waits until `pageId` is live and answers the wall-clock instant it was first seen there. */
async function seenAt(player: PlayerPage, pageId: string, timeout: number): Promise<number> {
  await player.waitForLivePage(pageId, timeout);
  return Date.now();
}

test("a takeover ends on time by itself, by the server's timer", async ({
  player,
  pairedScreen: screen,
  project,
  library,
}) => {
  test.setTimeout(90_000);
  const { media } = library;
  const [lobby, alert] = await Promise.all([
    project.createPlaylist({ name: 'Lobby', pages: [imagePage('welcome', media.welcome, PAGE_MS)] }),
    project.createPlaylist({ name: 'Drill', pages: [imagePage('quiet', media.quiet, PAGE_MS)] }),
  ]);
  await project.patchScreen(screen.id, { playlist_id: lobby.id, timezone: 'UTC' });
  await player.waitForLivePage('welcome', 30_000);

  const until = Date.now() + 6000;
  const res = await project.screenActions(
    { ids: [screen.id] },
    { type: 'takeover', playlist_id: alert.id, until: new Date(until).toISOString(), reason: 'drill' },
  );
  expect(res.results[0]).toMatchObject({ ok: true, result: { effective_playlist: { source: 'takeover' } } });
  const on = await seenAt(player, 'quiet', 10_000);
  expect(on).toBeLessThan(until);
  // It ends by itself: the server's timer at until, then the player at its next page turn.
  const off = await seenAt(player, 'welcome', until - Date.now() + ON_GLASS_WITHIN_MS);
  expect(off).toBeGreaterThanOrEqual(until);
  expect(off - until).toBeLessThan(ON_GLASS_WITHIN_MS);
  const view = await project.request('GET', `/api/v1/screens/${screen.id}/playlist-schedule`);
  expect(view.body.takeover).toBeNull();
  const events = await project.events();
  const ended = events.findLast((e) => e.type === 'screen.playlist_switched' && e.resource?.id === screen.id) as
    | { at: string; details: Record<string, unknown> }
    | undefined;
  expect(ended?.details).toMatchObject({ to_playlist_id: lobby.id, cause: 'boundary' });
  expect(Date.parse(ended!.at) - until).toBeLessThan(1000);
});

test('a player cut off from the network switches at the takeover end from its manifest, then takes the remint', async ({
  player,
  pairedScreen: screen,
  project,
  library,
  context,
}) => {
  test.setTimeout(90_000);
  const { media } = library;
  const [lobby, alert] = await Promise.all([
    project.createPlaylist({ name: 'Lobby', pages: [imagePage('welcome', media.welcome, PAGE_MS)] }),
    project.createPlaylist({ name: 'Drill', pages: [imagePage('quiet', media.quiet, PAGE_MS)] }),
  ]);
  await project.patchScreen(screen.id, { playlist_id: lobby.id, timezone: 'UTC' });
  await player.waitForLivePage('welcome', 30_000);

  const until = Date.now() + 9000;
  const res = await project.screenActions(
    { ids: [screen.id] },
    { type: 'takeover', playlist_id: alert.id, until: new Date(until).toISOString(), reason: 'drill' },
  );
  expect(res.results[0]).toMatchObject({ ok: true });
  await player.waitForLivePage('quiet', 8000);
  // The takeover's manifest names what follows its end, and its media are held for offline play.
  expect(await player.upcomingAt()).toBe(new Date(until).toISOString());
  await expect
    .poll(() => player.holdsForOffline([media.welcome, media.quiet]), { timeout: until - Date.now() - 1500 })
    .toBe(true);
  // On glass once its first page's transition has finished: activated then.
  await expect.poll(() => player.activeRevision(), { timeout: 3000 }).toMatch(/^man_/);
  const takeoverRevision = await player.heldRevision();
  await expect.poll(() => player.activeRevision(), { timeout: 3000 }).toBe(takeoverRevision);

  // Every request of the page fails as on a cut network (media come from the service worker's cache).
  await context.setOffline(true);
  const back = await seenAt(player, 'welcome', until - Date.now() + ON_GLASS_WITHIN_MS);
  expect(back).toBeGreaterThanOrEqual(until);
  expect(back - until).toBeLessThan(ON_GLASS_WITHIN_MS);
  // Nothing reached the server: the player still holds the takeover's revision, and plays its upcoming pages.
  expect(await player.activeRevision()).toBe(takeoverRevision);

  await context.setOffline(false);
  await expect.poll(() => player.activeRevision(), { timeout: 30_000 }).not.toBe(takeoverRevision);
  expect(await player.livePageId()).toBe('welcome');
});
