// A dayparted lunch menu in Europe/Berlin, on a real player, on a server whose clock the test sets
// (server/testing/clocked-main.ts): the clock is put seconds before 11:30 Berlin time, the player
// switches to the lunch playlist at 11:30 by the server's boundary timer, and back at the window's
// end. The zone's civil time is the schedule's; the player never reads its own zone. The same flow in
// real time, at whatever whole minute comes next, is e2e/fleet-boundaries.spec.ts.
import { DateTime } from 'luxon';
import { PlayerPage } from './pages/player-page';
import { ControlApi } from './support/control-api';
import { expect, test } from './support/fixtures';
import { MarqueeServer } from './support/marquee-server';
import { titledPng } from './support/media-fixtures';
import { imagePage } from './support/playlist-documents';
import { serverPort } from './support/ports';

test.use({ viewport: { width: 1280, height: 720 } });

const ZONE = 'Europe/Berlin';
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
/** From the boundary to glass: the timer, the stream's manifest_changed, the fetch, one 1 s page turn. */
const ON_GLASS_WITHIN_MS = 6000;
/** How far before a boundary the clock is put: time enough to see the old playlist still on glass. */
const LEAD_MS = 6000;

/** Today in Berlin at this civil time. */
const berlin = (hour: number, minute: number, second = 0) =>
  DateTime.now().setZone(ZONE).set({ hour, minute, second, millisecond: 0 });

test('a lunch entry switches a Berlin screen at 11:30 and back at its end (server clock set by the test)', async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  const port = serverPort(testInfo.parallelIndex) + 7;
  const clockPort = port + 1;
  const server = new MarqueeServer(
    port,
    { MARQUEE_TEST_CLOCK_AT: berlin(11, 25).toISO()!, MARQUEE_TEST_CLOCK_PORT: String(clockPort) },
    'server/testing/clocked-main.ts',
  );
  /** Puts the server's clock at `at`; answers how far it runs ahead of this machine's clock. */
  const setClock = async (at: DateTime): Promise<number> => {
    const res = await fetch(`http://127.0.0.1:${clockPort}/clock`, {
      method: 'PUT',
      body: JSON.stringify({ at: at.toISO() }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { offset_ms: number }).offset_ms;
  };
  await server.start();
  try {
    const api = new ControlApi(server.origin);
    await api.enroll();
    const [welcome, menu] = await Promise.all([
      titledPng(1920, 1080, '#1b4d7a', 'Welcome', 'to the lobby'),
      titledPng(1920, 1080, '#7a3b1b', 'Lunch', 'soup of the day'),
    ]);
    const [lobby, lunch] = await Promise.all([
      api
        .uploadMedia(welcome, 'image/png', 'welcome.png')
        .then((id) => api.createPlaylist({ name: 'Lobby', pages: [imagePage('welcome', id, 1000)] })),
      api
        .uploadMedia(menu, 'image/png', 'menu.png')
        .then((id) => api.createPlaylist({ name: 'Lunch', pages: [imagePage('menu', id, 1000)] })),
    ]);

    const player = new PlayerPage(page);
    await player.open(`${server.origin}/`);
    const claim = await api.pair(await player.code(), 'Canteen');
    const screenId = claim.screen.id;
    await api.patchScreen(screenId, { playlist_id: lobby.id, timezone: ZONE });
    await player.waitForLivePage('welcome', 30_000);

    const opens = berlin(11, 30);
    const closes = berlin(11, 31);
    await test.step('the schedule names 11:30 Berlin as the next boundary', async () => {
      const res = await api.request('PUT', `/api/v1/screens/${screenId}/playlist-schedule`, {
        json: {
          entries: [
            {
              id: 'lunch',
              playlist_id: lunch.id,
              rule: { enabled: true, windows: [{ days: EVERY_DAY, start: '11:30', end: '11:31' }] },
            },
          ],
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        effective_playlist: { playlist_id: lobby.id, source: 'assignment' },
        next_boundary_at: new Date(opens.toMillis()).toISOString(),
      });
    });

    /** Moves the clock to LEAD_MS before `boundary`, then sees `pageId` on glass at it, not before. */
    const switchesAt = async (boundary: DateTime, before: string, pageId: string, cause: { to: string }) => {
      const offset = await setClock(boundary.minus({ milliseconds: LEAD_MS }));
      const onThisMachine = boundary.toMillis() - offset;
      expect(await player.livePageId()).toBe(before);
      await player.waitForLivePage(pageId, LEAD_MS + ON_GLASS_WITHIN_MS);
      const seen = Date.now();
      expect(seen).toBeGreaterThanOrEqual(onThisMachine);
      expect(seen - onThisMachine).toBeLessThan(ON_GLASS_WITHIN_MS);
      // The server switched by its boundary timer at the instant, by its own clock.
      const events = await api.events();
      const switched = events.findLast((e) => e.type === 'screen.playlist_switched' && e.resource?.id === screenId) as
        | { at: string; details: Record<string, unknown> }
        | undefined;
      expect(switched?.details).toMatchObject({ to_playlist_id: cause.to, cause: 'boundary' });
      const at = Date.parse(switched!.at);
      expect(at).toBeGreaterThanOrEqual(boundary.toMillis());
      expect(at - boundary.toMillis()).toBeLessThan(1000);
    };

    await test.step('11:30 Berlin: the lunch playlist, not before', () =>
      switchesAt(opens, 'welcome', 'menu', { to: lunch.id }));
    const view = await api.request('GET', `/api/v1/screens/${screenId}/playlist-schedule`);
    expect(view.body).toMatchObject({
      effective_playlist: { playlist_id: lunch.id, source: 'schedule' },
      next_boundary_at: new Date(closes.toMillis()).toISOString(),
    });
    await test.step('11:31 Berlin: back to the assignment', () =>
      switchesAt(closes, 'menu', 'welcome', { to: lobby.id }));
  } finally {
    await server.stop();
  }
});
