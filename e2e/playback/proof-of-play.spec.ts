// Proof of play end to end: a paired browser player goes offline and is reloaded with its device
// clock reading yesterday (nothing online to correct it), so what it shows offline is stamped a
// day before it can upload: a simulated day offline. Back online it uploads its queue; one
// upload's answer is lost on the way back (the server counted it, the player never heard), so the
// player sends those reports again. GET /api/v1/playback must show every showing exactly once, on
// the day it played.
import type { Page, Route } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { imagePage } from '../support/playlist-documents';

test.use({ viewport: { width: 1280, height: 720 } });

const DAY_MS = 24 * 3600_000;

interface SentReport {
  id: string;
  media_id?: string;
  started_at: string;
}

/** Pages of the manifest the player keeps in IndexedDB to start from offline. */
function storedPages(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open('marquee-player');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('manifests').objectStore('manifests').get('active');
          get.onsuccess = () => {
            resolve(get.result?.manifest.pages.length ?? 0);
            open.result.close();
          };
          get.onerror = () => reject(get.error);
        };
      }),
  );
}

test('a player offline for a simulated day uploads its proof of play exactly once when back', async ({
  page,
  context,
  player,
  project,
  library,
}) => {
  test.setTimeout(240_000);
  const { media } = library;
  // The device clock reads a day early; online, the server's Date headers correct the playback clock.
  await page.clock.install({ time: Date.now() - DAY_MS });

  // Every upload the player sends, and the answer of the first one lost after the server took it.
  const sent: SentReport[] = [];
  const answers: { counted: number; duplicates: number }[] = [];
  let lose = true;
  await context.route('**/runtime/v1/playback', async (route: Route) => {
    const body = route.request().postDataJSON() as { reports: SentReport[] };
    sent.push(...body.reports);
    const response = await route.fetch();
    if (lose && response.ok()) {
      lose = false;
      await route.abort('connectionreset');
      return;
    }
    answers.push(await response.json());
    await route.fulfill({ response });
  });

  await player.open('/');
  const claim = await project.pair(await player.code(), 'Lobby');
  await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
  const screenId = claim.screen.id;
  const playlist = await project.createPlaylist({
    name: 'Proof loop',
    pages: [imagePage('welcome', media.welcome, 1500), imagePage('menu', media.menu, 1500)],
  });
  await project.patchScreen(screenId, { playlist_id: playlist.id });
  await player.waitForLivePage('welcome', 30_000);
  await expect.poll(() => player.holdsForOffline([media.welcome, media.menu]), { timeout: 30_000 }).toBe(true);
  // The loop is on disk as the manifest to start from (written once its first page filled the screen).
  await expect.poll(() => storedPages(page), { timeout: 10_000 }).toBe(2);

  await test.step('offline, reloaded on a clock a day early, it keeps playing and queues what it shows', async () => {
    await context.setOffline(true);
    await page.reload();
    await player.waitForLivePage('welcome', 30_000);
    const seen = await player.recordPages(5, 60_000);
    expect(new Set(seen)).toEqual(new Set(['welcome', 'menu']));
    await player.screenshot('proof-of-play-offline.png');
  });

  await test.step('back online, the queue goes up and every showing counts once on the day it played', async () => {
    await context.setOffline(false);
    const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
    // The offline showings: stamped a day early (those made online are stamped with the server's time).
    const offline = () => {
      const ids = new Map<string, SentReport>();
      for (const r of sent) if (Date.parse(r.started_at) < Date.now() - DAY_MS / 2) ids.set(r.id, r);
      return [...ids.values()];
    };
    const counted = async () => {
      const res = await project.request('GET', `/api/v1/playback?screen_id=${screenId}&day=${yesterday}`);
      expect(res.status).toBe(200);
      return (res.body.items as { play_count: number }[]).reduce((n, r) => n + r.play_count, 0);
    };
    await expect
      .poll(
        async () => {
          const reports = offline().filter((r) => r.started_at.startsWith(yesterday));
          return reports.length >= 5 && (await counted()) === reports.length;
        },
        { timeout: 150_000, intervals: [2000] },
      )
      .toBe(true);
    // The lost answer made the player send those reports again; the server answered that it had them.
    await expect.poll(() => answers.some((a) => a.duplicates > 0), { timeout: 60_000 }).toBe(true);
    const ids = sent.map((r) => r.id);
    expect(ids.length).toBeGreaterThan(new Set(ids).size);
    const total = (await project.request('GET', `/api/v1/playback?screen_id=${screenId}`)).body.items as {
      play_count: number;
    }[];
    const counts = answers.reduce((n, a) => n + a.counted, 0);
    // Everything counted was counted by an answer the player got, or by the one it lost (never twice).
    expect(total.reduce((n, r) => n + r.play_count, 0)).toBeGreaterThanOrEqual(counts);
    expect(total.reduce((n, r) => n + r.play_count, 0)).toBeLessThanOrEqual(new Set(ids).size);

    const rows = (await project.request('GET', `/api/v1/playback?screen_id=${screenId}&day=${yesterday}`)).body
      .items as { media_id: string; filename: string }[];
    expect(new Set(rows.map((r) => r.media_id))).toEqual(new Set([media.welcome, media.menu]));
    expect(rows.map((r) => r.filename).sort()).toEqual(['menu.png', 'welcome.png']);

    const csv = await project.request('GET', `/api/v1/playback?screen_id=${screenId}&day=${yesterday}&format=csv`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(String(csv.body).trim().split('\r\n')).toHaveLength(3);
  });
});
