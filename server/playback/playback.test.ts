// Proof of play: POST /runtime/v1/playback counts each report id once into screen-local days;
// GET /api/v1/playback reads the rows as JSON pages or CSV.
import crypto from 'node:crypto';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { PLAYBACK_CSV_COLUMNS, PLAYBACK_REPORT_MAX_AGE_MS } from '../../sdk/contract/playback';
import { canvas, imageDoc, imagePlacement, page } from '../playlists/content.fixtures';
import {
  createPlaylist,
  pairedPlayer,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  validManifest,
  type Player,
} from '../runtime/runtime.fixtures';
import { randomKey, TestServer } from '../testing/harness';
import { csvCell } from './playback-csv';

// Two days after the end of daylight-saving time in New York (2026-11-01, 02:00 EDT → 01:00 EST).
const env = useEnrolledServer({ at: '2026-11-03T12:00:00Z' });
const { clock } = env;

interface Shown {
  p: Player;
  rev: string;
  mediaId: string;
}

async function showing(options: { timezone?: string; filename?: string } = {}): Promise<Shown> {
  const p = await env.player();
  const mediaId = await storedMedia(env.server, env.tenantId, crypto.randomBytes(16));
  if (options.filename)
    await env.server.services.store.db
      .updateTable('media')
      .set({ filename: options.filename })
      .where('id', '=', mediaId)
      .execute();
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, imageDoc(mediaId)),
    ...(options.timezone ? { timezone: options.timezone } : {}),
  });
  const { manifest } = await validManifest(env.server, p);
  return { p, rev: manifest.manifestRevision, mediaId };
}

function showingReport(s: Shown, startedAt: string, extra: Record<string, unknown> = {}) {
  const started = Date.parse(startedAt);
  return {
    id: crypto.randomUUID(),
    manifest_revision: s.rev,
    page_id: 'welcome',
    placement_id: 'hero',
    media_id: s.mediaId,
    started_at: new Date(started).toISOString(),
    ended_at: new Date(started + 8000).toISOString(),
    outcome: 'complete',
    ...extra,
  };
}

function upload(server: TestServer, p: Player, reports: unknown[]) {
  return server.request('POST', '/runtime/v1/playback', { cookies: p.cookies, json: { reports } });
}

async function rows(query: string, token = env.token) {
  const res = await env.server.request('GET', `/api/v1/playback${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json().items as Record<string, unknown>[];
}

/** A v2 playlist of an ordinary page `main` and an adslot page `break` (slot `lobby`), both showing `image`. */
function adsDocument(image: string) {
  return {
    name: 'Ads',
    pages: [
      page('main', [imagePlacement('hero', { by: 'id', media_id: image })]),
      {
        type: 'adslot',
        id: 'break',
        slot: { key: 'lobby', duration_ms: 15_000 },
        transition: { type: 'crossfade', duration_ms: 200 },
        fallback: {
          canvas,
          advance: { mode: 'duration', after_ms: 5000 },
          placements: [imagePlacement('house', { by: 'id', media_id: image })],
        },
      },
    ],
  };
}

describe('POST /runtime/v1/playback', () => {
  it('counts each report id once, and a retried upload only acknowledges', async () => {
    const s = await showing();
    const batch = [showingReport(s, '2026-11-03T09:00:00Z'), showingReport(s, '2026-11-03T09:00:08Z')];
    const first = await upload(env.server, s.p, batch);
    expect(first.status, first.text).toBe(200);
    expect(first.json()).toEqual({ counted: 2, duplicates: 0, refused: [] });
    expect(first.headers['ratelimit-policy']).toBe('"runtime-playback";q=30;w=60');

    const again = await upload(env.server, s.p, [...batch, showingReport(s, '2026-11-03T09:00:16Z')]);
    expect(again.json()).toEqual({ counted: 1, duplicates: 2, refused: [] });
    expect(await rows(`?screen_id=${s.p.screen.id}`)).toEqual([
      {
        screen_id: s.p.screen.id,
        media_id: s.mediaId,
        application_id: null,
        filename: expect.any(String),
        day: '2026-11-03',
        play_count: 3,
        played_seconds: 24,
        complete_count: 3,
        interrupted_count: 0,
        impression_count: 0,
        last_page_id: 'welcome',
        last_manifest_revision: s.rev,
        first_started_at: '2026-11-03T09:00:00.000Z',
        last_started_at: '2026-11-03T09:00:16.000Z',
      },
    ]);
  });

  it('counts a showing on its start day in the screen time zone, across the change from summer time', async () => {
    const s = await showing({ timezone: 'America/New_York' });
    const at = (iso: string) => showingReport(s, iso);
    const res = await upload(env.server, s.p, [
      at('2026-11-01T03:30:00Z'), // 23:30 EDT on Oct 31
      at('2026-11-01T04:30:00Z'), // 00:30 EDT on Nov 1 (midnight is 04:00Z in summer time)
      at('2026-11-02T04:30:00Z'), // 23:30 EST on Nov 1 (midnight is 05:00Z in winter time)
      at('2026-11-02T05:30:00Z'), // 00:30 EST on Nov 2
    ]);
    expect(res.json().counted).toBe(4);
    const days = (await rows(`?screen_id=${s.p.screen.id}`)).map((r) => [r.day, r.play_count]);
    expect(days).toEqual([
      ['2026-11-02', 1],
      ['2026-11-01', 2],
      ['2026-10-31', 1],
    ]);
    expect(await rows(`?screen_id=${s.p.screen.id}&day=2026-11-01`)).toHaveLength(1);
    expect(await rows(`?screen_id=${s.p.screen.id}&from=2026-11-01&to=2026-11-02`)).toHaveLength(2);
  });

  it("counts a late report on the day of the zone its manifest had, after the screen's zone changed", async () => {
    const s = await showing({ timezone: 'America/New_York' });
    // Shown at 23:30 New York time on Nov 2 (04:30 UTC on Nov 3), uploaded after the zone became London's.
    await patchScreen(env.server, env.token, s.p.screen.id, { timezone: 'Europe/London' });
    const late = await upload(env.server, s.p, [showingReport(s, '2026-11-03T04:30:00Z')]);
    expect(late.json()).toEqual({ counted: 1, duplicates: 0, refused: [] });
    const days = (await rows(`?screen_id=${s.p.screen.id}`)).map((r) => r.day);
    expect(days).toEqual(['2026-11-02']);
  });

  it('adds interrupted showings to the count and their time on glass, and orders "last" by start', async () => {
    const s = await showing();
    const late = showingReport(s, '2026-11-03T10:00:00Z', { page_id: 'later' });
    const early = showingReport(s, '2026-11-03T08:00:00Z', {
      ended_at: '2026-11-03T08:00:03.400Z',
      outcome: 'interrupted',
    });
    await upload(env.server, s.p, [late]);
    await upload(env.server, s.p, [early]); // arrives after the later one: "last" stays the later
    const [row] = await rows(`?screen_id=${s.p.screen.id}`);
    expect(row).toMatchObject({
      play_count: 2,
      complete_count: 1,
      interrupted_count: 1,
      played_seconds: 11,
      last_page_id: 'later',
      first_started_at: '2026-11-03T08:00:00.000Z',
      last_started_at: '2026-11-03T10:00:00.000Z',
    });
  });

  it('refuses (and acknowledges) what can never count: other manifests, content not shown, too old, in the future', async () => {
    const s = await showing();
    const other = await showing();
    const stranger = await storedMedia(env.server, env.tenantId, crypto.randomBytes(8));
    const now = clock.now();
    const cases = {
      unknown_manifest_revision: showingReport(s, '2026-11-03T09:00:00Z', { manifest_revision: other.rev }),
      not_in_manifest: showingReport(s, '2026-11-03T09:00:00Z', { media_id: stranger }),
      too_old: showingReport(s, new Date(now - PLAYBACK_REPORT_MAX_AGE_MS - 1000).toISOString()),
      in_future: showingReport(s, new Date(now + 3600_000).toISOString()),
    };
    const res = await upload(env.server, s.p, Object.values(cases));
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toEqual({
      counted: 0,
      duplicates: 0,
      refused: Object.entries(cases).map(([reason, r]) => ({ id: r.id, reason })),
    });
    expect(await rows(`?screen_id=${s.p.screen.id}`)).toEqual([]);
  });

  it('refuses malformed batches with invalid_request naming the field, counting nothing', async () => {
    const s = await showing();
    const good = showingReport(s, '2026-11-03T09:00:00Z');
    const cases: [unknown, string][] = [
      [{ reports: [] }, 'reports'],
      [{ reports: [{ ...good, id: 'short' }] }, 'reports.0.id'],
      [{ reports: [{ ...good, media_id: undefined }] }, 'reports.0.media_id'],
      [{ reports: [{ ...good, application_id: 'app_x1' }] }, 'reports.0.media_id'],
      [{ reports: [{ ...good, ended_at: '2026-11-03T08:00:00Z' }] }, 'reports.0.ended_at'],
      [{ reports: [{ ...good, outcome: 'skipped' }] }, 'reports.0.outcome'],
      [{ reports: [{ ...good, extra: 1 }] }, 'reports.0.extra'],
      [{ reports: [good, good] }, 'reports.1.id'],
    ];
    for (const [body, field] of cases) {
      const res = await env.server.request('POST', '/runtime/v1/playback', { cookies: s.p.cookies, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
      expect(res.json().errors[0].field, JSON.stringify(body)).toBe(field);
    }
    expect(await rows(`?screen_id=${s.p.screen.id}`)).toEqual([]);
  });

  it('takes the paired runtime session only', async () => {
    const s = await showing();
    const bearer = await env.server.request('POST', '/runtime/v1/playback', {
      token: env.token,
      json: { reports: [showingReport(s, '2026-11-03T09:00:00Z')] },
    });
    expect(bearer.status).toBe(401);
    const anonymous = await env.server.request('POST', '/runtime/v1/playback', {
      json: { reports: [showingReport(s, '2026-11-03T09:00:00Z')] },
    });
    expect(anonymous.status).toBe(401);
  });

  it('keeps counting a media after it is deleted, under the filename it had', async () => {
    const s = await showing({ filename: 'spring-sale.mp4' });
    await upload(env.server, s.p, [showingReport(s, '2026-11-03T09:00:00Z')]);
    // The screen moves on, and the media is deleted; a report made offline before that arrives late.
    const next = await storedMedia(env.server, env.tenantId, crypto.randomBytes(8));
    await patchScreen(env.server, env.token, s.p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(next)),
    });
    const { manifest } = await validManifest(env.server, s.p);
    const activated = await env.server.request('POST', '/runtime/v1/reports', {
      cookies: s.p.cookies,
      json: { severity: 'info', code: 'manifest.activated', context: { manifest_revision: manifest.manifestRevision } },
    });
    expect(activated.status).toBe(202);
    const deleted = await env.server.request('DELETE', `/api/v1/media/${s.mediaId}`, { token: env.token });
    expect(deleted.status, deleted.text).toBe(204);

    const late = await upload(env.server, s.p, [showingReport(s, '2026-11-03T09:10:00Z')]);
    expect(late.json().counted).toBe(1);
    const [row] = await rows(`?media_id=${s.mediaId}`);
    expect(row).toMatchObject({ filename: 'spring-sale.mp4', play_count: 2 });
  });

  it('counts showings on an adslot page as impressions of that page', async () => {
    const p = await env.player();
    const image = await storedMedia(env.server, env.tenantId, crypto.randomBytes(8));
    const created = await env.server.request('POST', '/api/v2/playlists', {
      token: env.token,
      json: adsDocument(image),
      idempotencyKey: randomKey(),
    });
    expect(created.status, created.text).toBe(201);
    await patchScreen(env.server, env.token, p.screen.id, { playlist_id: created.json().id });
    const { manifest } = await validManifest(env.server, p);
    expect(manifest.pages[1]).toMatchObject({ id: 'break', slot: { key: 'lobby' } });
    const s = { p, rev: manifest.manifestRevision, mediaId: image };
    // The server judges the page by the manifest, not by what the player claims.
    await upload(env.server, p, [
      showingReport(s, '2026-11-03T09:00:00Z', { page_id: 'main', slot_key: 'lobby' }),
      showingReport(s, '2026-11-03T09:00:08Z', { page_id: 'break', placement_id: 'house' }),
    ]);
    const [row] = await rows(`?screen_id=${p.screen.id}`);
    expect(row).toMatchObject({ play_count: 2, impression_count: 1 });
  });

  it("counts an offline player's showings on the upcoming playlist's adslot page as impressions", async () => {
    const p = await env.player();
    const image = await storedMedia(env.server, env.tenantId, crypto.randomBytes(8));
    const ads = await env.server.request('POST', '/api/v2/playlists', {
      token: env.token,
      json: adsDocument(image),
      idempotencyKey: randomKey(),
    });
    expect(ads.status, ads.text).toBe(201);
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(image)),
      timezone: 'America/New_York',
    });
    // From the next whole minute but one, New York time, the ads play: the manifest minted now carries them as upcoming.
    const opens = DateTime.fromMillis(clock.now(), { zone: 'America/New_York' }).startOf('minute').plus({ minutes: 2 });
    const window = {
      days: ['tue'],
      start: opens.toFormat('HH:mm'),
      end: opens.plus({ minutes: 30 }).toFormat('HH:mm'),
    };
    const put = await env.server.request('PUT', `/api/v1/screens/${p.screen.id}/playlist-schedule`, {
      token: env.token,
      json: { entries: [{ id: 'ads', playlist_id: ads.json().id, rule: { enabled: true, windows: [window] } }] },
    });
    expect(put.status, put.text).toBe(200);
    const { manifest } = await validManifest(env.server, p);
    expect(manifest.upcoming?.pages[1]).toMatchObject({ id: 'break', slot: { key: 'lobby' } });
    const s = { p, rev: manifest.manifestRevision, mediaId: image };
    // Cut off then, the player plays the upcoming pages and names the revision that carried them.
    const at = opens.toMillis();
    const sent = await upload(env.server, p, [
      showingReport(s, new Date(at).toISOString(), { page_id: 'main' }),
      showingReport(s, new Date(at + 8000).toISOString(), {
        page_id: 'break',
        placement_id: 'house',
        slot_key: 'lobby',
      }),
    ]);
    expect(sent.json()).toEqual({ counted: 2, duplicates: 0, refused: [] });
    const [row] = await rows(`?screen_id=${p.screen.id}`);
    expect(row).toMatchObject({ play_count: 2, impression_count: 1 });
  });

  it('never counts an id twice across a restart of the server', async () => {
    const server = await TestServer.start({ clock: env.clock });
    try {
      const { token, projectId } = await server.enroll();
      const p = await pairedPlayer(server, token);
      const mediaId = await storedMedia(server, projectId, crypto.randomBytes(8));
      await patchScreen(server, token, p.screen.id, {
        playlist_id: await createPlaylist(server, token, imageDoc(mediaId)),
      });
      const { manifest } = await validManifest(server, p);
      const report = showingReport({ p, rev: manifest.manifestRevision, mediaId }, '2026-11-03T09:00:00Z');
      expect((await upload(server, p, [report])).json().counted).toBe(1);
      const restarted = await server.restart();
      expect((await upload(restarted, p, [report])).json()).toEqual({ counted: 0, duplicates: 1, refused: [] });
      const res = await restarted.request('GET', '/api/v1/playback', { token });
      expect(res.json().items.map((r: { play_count: number }) => r.play_count)).toEqual([1]);
      await restarted.stop();
    } catch (error) {
      await server.stop().catch(() => undefined);
      throw error;
    }
  });
});

describe('GET /api/v1/playback', () => {
  it("answers not_found for another tenant's screen or media, and invalid_request for bad filters", async () => {
    const s = await showing();
    await upload(env.server, s.p, [showingReport(s, '2026-11-03T09:00:00Z')]);
    const stranger = await env.server.enroll();
    for (const filter of [`screen_id=${s.p.screen.id}`, `media_id=${s.mediaId}`]) {
      const res = await env.server.request('GET', `/api/v1/playback?${filter}`, { token: stranger.token });
      expect(res.status, filter).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const theirs = await env.server.request('GET', '/api/v1/playback', { token: stranger.token });
    expect(theirs.json().items).toEqual([]);
    for (const bad of [
      'day=2026-13-45',
      'day=2026-02-30',
      'day=yesterday',
      'screen_id=med_1',
      'limit=0',
      'day=2026-11-01&from=2026-11-01',
      'cursor=x',
    ]) {
      const res = await env.server.request('GET', `/api/v1/playback?${bad}`, { token: env.token });
      expect(res.status, bad).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });

  it('pages with next_cursor, newest day first', async () => {
    const s = await showing({ timezone: 'Europe/Oslo' });
    await upload(env.server, s.p, [
      showingReport(s, '2026-11-01T09:00:00Z'),
      showingReport(s, '2026-11-02T09:00:00Z'),
      showingReport(s, '2026-11-03T09:00:00Z'),
    ]);
    const first = await env.server.request('GET', `/api/v1/playback?screen_id=${s.p.screen.id}&limit=2`, {
      token: env.token,
    });
    expect(first.json().items.map((r: { day: string }) => r.day)).toEqual(['2026-11-03', '2026-11-02']);
    const cursor = first.json().next_cursor as string;
    const second = await env.server.request(
      'GET',
      `/api/v1/playback?screen_id=${s.p.screen.id}&limit=2&cursor=${cursor}`,
      { token: env.token },
    );
    expect(second.json()).toEqual({ items: [expect.objectContaining({ day: '2026-11-01' })], next_cursor: null });
  });

  it('answers CSV to Accept: text/csv or format=csv, one line per row, formulas defused', async () => {
    const s = await showing({ filename: '=HYPERLINK("x"),1.png' });
    await upload(env.server, s.p, [showingReport(s, '2026-11-03T09:00:00Z')]);
    const byAccept = await env.server.request('GET', `/api/v1/playback?screen_id=${s.p.screen.id}`, {
      token: env.token,
      headers: { accept: 'text/csv' },
    });
    const byFormat = await env.server.request('GET', `/api/v1/playback?screen_id=${s.p.screen.id}&format=csv`, {
      token: env.token,
    });
    for (const res of [byAccept, byFormat]) {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
    expect(byAccept.text).toBe(byFormat.text);
    const lines = byAccept.text.split('\r\n');
    expect(lines).toEqual([
      PLAYBACK_CSV_COLUMNS.join(','),
      [
        '2026-11-03',
        s.p.screen.id,
        s.mediaId,
        '',
        `"'=HYPERLINK(""x""),1.png"`,
        '1',
        '8',
        '1',
        '0',
        '0',
        '2026-11-03T09:00:00.000Z',
        '2026-11-03T09:00:00.000Z',
        'welcome',
        s.rev,
      ].join(','),
      '',
    ]);
  });
});

describe('CSV cells', () => {
  it('quote separators and quotes, and defuse spreadsheet formulas', () => {
    expect(csvCell('plain.png')).toBe('plain.png');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell('+1 offer.png')).toBe("'+1 offer.png");
    expect(csvCell('@sum')).toBe("'@sum");
    expect(csvCell(null)).toBe('');
    expect(csvCell(42)).toBe('42');
  });
});
