import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../clock';
import { pairPendingScreen } from '../pairing/pairing.fixtures';
import { patchScreen } from '../screens/screen-changes';
import { findScreen } from '../screens/screens';
import { randomKey, TestServer } from '../testing/harness';
import { PlaylistWriteV2 } from '../../sdk/contract/playlist';
import { declare, image, put as putBytes } from '../media/media.fixtures';
import { readyMedia, retagMedia, tombstoneMedia } from '../media/media';
import { mediaUploadRunner } from '../media/media-uploads';
import { planGeneration, publishGeneration } from '../media/media-generation';
import { MediaGenerationRequest } from '../../sdk/contract/media';
import { newId } from '../keys';
import type { Work } from '../store/store';
import { checkScreenTimezones, findPlaylist, insertPlaylist, replacePlaylist, resolveForWrite } from './playlists';
import {
  canvas,
  changeMedia,
  fullRect,
  iframePlacement,
  imageDoc,
  imagePlacement,
  insertMedia,
  insertRelease,
  page,
} from './content.fixtures';

/** Fixed DNS answers: no lookups leave the test. */
const DNS: Record<string, string[]> = {
  'example.com': ['93.184.216.34'],
  'intranet.example.com': ['10.0.0.8'],
  'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
};

let server: TestServer;
let token: string;
let tenant: string;
beforeAll(async () => {
  server = await TestServer.start({
    clock: new TestClock('2026-11-21T12:00:00Z'),
    hostResolver: async (host) => DNS[host] ?? [],
  });
  ({ token, projectId: tenant } = await server.enroll());
});
afterAll(async () => server.stop());

const post = (json: unknown, t = token, version = 'v1') =>
  server.request('POST', `/api/${version}/playlists`, { token: t, json, idempotencyKey: randomKey() });
const put = (id: string, json: unknown, extra: { ifMatch?: number; t?: string; version?: string } = {}) =>
  server.request('PUT', `/api/${extra.version ?? 'v1'}/playlists/${id}`, {
    token: extra.t ?? token,
    json,
    ifMatch: extra.ifMatch,
    idempotencyKey: randomKey(),
  });

/** Sends `request` while a transaction assigning the playlist to the screen is still open. */
async function whileAssigning<T>(screenId: string, playlistId: string, request: () => Promise<T>): Promise<T> {
  const { services } = server;
  let answer: Promise<T> | undefined;
  await services.store.transaction(async (work) => {
    const before = await findScreen(work.db, tenant, screenId);
    await patchScreen({ events: services.events, work, now: server.clock.now(), requestId: 'req_assign' }, before, {
      playlist_id: playlistId,
    });
    answer = request();
    await new Promise((r) => setTimeout(r, 300));
  });
  return answer!;
}

/**
 * Runs `change` in a transaction and, once it has run but not committed, `then` in a second one;
 * the first commits 300 ms later. A change that fails says so at once, instead of the test waiting
 * out its timeout.
 */
async function whileUncommitted<T>(change: (work: Work) => Promise<unknown>, then: (work: Work) => Promise<T>) {
  const { store } = server.services;
  let changed!: () => void;
  const ran = new Promise<void>((resolve) => (changed = resolve));
  const changing = store.transaction(async (work) => {
    await change(work);
    changed();
    await new Promise((r) => setTimeout(r, 300));
  });
  await Promise.race([ran, changing]);
  const second = store.transaction(then);
  await changing;
  return second;
}

function videoPlacement(id: string, selector: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { id, content: { type: 'video', selector, ...extra }, rect: fullRect, layer: 0, content_fit: 'contain' };
}

function appPlacement(id: string, releaseId: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    content: { type: 'application', release_id: releaseId },
    rect: fullRect,
    layer: 0,
    content_fit: 'fill',
    controller: true,
    ...extra,
  };
}

async function playlistEvents(playlistId: string) {
  const rows = await server.services.store.db
    .selectFrom('events')
    .select(['type', 'details'])
    .where('resource_id', '=', playlistId)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({ type: r.type, details: r.details ? JSON.parse(r.details) : null }));
}

describe('the page object', () => {
  it('stores the full document and serves what the server resolved', async () => {
    const hero = await insertMedia(server, tenant, { width: 1280, height: 720 });
    const clipA = await insertMedia(server, tenant, { kind: 'video', tag: 'clips', duration_ms: 12_000 });
    const clipB = await insertMedia(server, tenant, { kind: 'video', tag: 'clips', duration_ms: 20_000 });
    const { applicationId, releaseId } = await insertRelease(server, tenant);
    const song = await insertMedia(server, tenant, { kind: 'audio', duration_ms: 180_000 });
    const doc = {
      name: 'Lobby loop',
      pages: [
        page(
          'welcome',
          [
            { ...imagePlacement('hero', { by: 'id', media_id: hero }, { alt: 'Welcome' }), enter: { type: 'fade-up' } },
            iframePlacement('ticker'),
          ],
          {
            canvas: {
              width: 1920,
              height: 1080,
              viewport_fit: 'cover',
              background: {
                type: 'linear',
                stops: [
                  { at: 0, color: '#1B2632FF' },
                  { at: 0.5, color: '#10151CFF' },
                  { at: 1, color: '#000000FF' },
                ],
              },
            },
          },
        ),
        page('evening', [videoPlacement('clips', { by: 'tag', tag: 'clips', one_at_a_time: true })], {
          transition: { type: 'swipe-left', duration_ms: 600 },
          advance: { mode: 'media_end' },
          visibility: { enabled: true, windows: [{ days: ['fri', 'sat'], start: '18:00', end: '02:00' }] },
        }),
        page('reel', [videoPlacement('reel', { by: 'ids', media_ids: [clipA, clipB] })], {
          advance: { mode: 'media_end', max_ms: 60_000 },
        }),
        page('board', [appPlacement('board', releaseId)], { advance: { mode: 'application', max_ms: 60_000 } }),
      ],
      audio: { tracks: [{ media_id: song }] },
    };
    const res = await post(doc);
    expect(res.status, res.text).toBe(201);
    expect(res.headers.etag).toBe('"1"');
    const body = res.json();
    expect(body.id).toMatch(/^pl_/);
    expect(res.headers.location).toBe(`/api/v1/playlists/${body.id}`);
    expect(body).toMatchObject({
      name: 'Lobby loop',
      revision: 1,
      audio: { tracks: [{ media_id: song, duration_ms: 180_000 }] },
    });
    const [welcome, evening, reel, board] = body.pages;
    expect(welcome.canvas.viewport_fit).toBe('cover');
    expect(welcome.placements[0]).toEqual({
      id: 'hero',
      content: {
        type: 'image',
        selector: { by: 'id', media_id: hero, one_at_a_time: false },
        alt: 'Welcome',
        items: [{ media_id: hero, intrinsic_size: { width: 1280, height: 720 } }],
      },
      rect: fullRect,
      layer: 0,
      content_fit: 'cover',
      controller: false,
      enter: { type: 'fade-up' },
    });
    expect(welcome.placements[1].controller).toBe(false);
    expect(evening.visibility).toEqual({
      enabled: true,
      windows: [{ days: ['fri', 'sat'], start: '18:00', end: '02:00' }],
    });
    expect(evening.placements[0].content).toMatchObject({
      muted: true,
      loop: false,
      items: [{ media_id: clipA }, { media_id: clipB }],
    });
    // media_end deadlines: one at a time → the longest item; a sequence → the sum; plus grace; a larger hint wins.
    expect(evening.advance).toEqual({ mode: 'media_end', max_ms: 22_000 });
    expect(reel.advance).toEqual({ mode: 'media_end', max_ms: 60_000 });
    expect(board.placements[0]).toMatchObject({
      controller: true,
      content: { type: 'application', release_id: releaseId, application_id: applicationId },
    });

    const got = await server.request('GET', `/api/v1/playlists/${body.id}`, { token });
    expect(got.headers.etag).toBe('"1"');
    expect(got.json()).toEqual(body);
    const listed = await server.request('GET', '/api/v1/playlists', { token });
    expect(listed.json().items.map((p: { id: string }) => p.id)).toContain(body.id);
    expect(await playlistEvents(body.id)).toEqual([{ type: 'playlist.created', details: { revision: 1 } }]);
  });

  it('sums a sequence of items for a media_end deadline', async () => {
    const a = await insertMedia(server, tenant, { kind: 'video', duration_ms: 12_000 });
    const b = await insertMedia(server, tenant, { kind: 'video', duration_ms: 20_000 });
    const res = await post({
      name: 'Reel',
      pages: [
        page('reel', [videoPlacement('reel', { by: 'ids', media_ids: [a, b] })], { advance: { mode: 'media_end' } }),
      ],
    });
    expect(res.json().pages[0].advance).toEqual({ mode: 'media_end', max_ms: 34_000 });
  });

  it('accepts the largest playlist: 100 pages of 24 placements', async () => {
    const pages = Array.from({ length: 100 }, (_, i) =>
      page(
        `p${i}`,
        Array.from({ length: 24 }, (_, j) => iframePlacement(`f${j}`)),
      ),
    );
    const res = await post({ name: 'Big', pages });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(res.json().pages).toHaveLength(100);
  });
});

describe('validation: each rule gives invalid_request naming the field', () => {
  const one = (placements: unknown[], extra: Record<string, unknown> = {}) => ({
    name: 'x',
    pages: [page('a', placements, extra)],
  });
  const img = (extra: Record<string, unknown> = {}) =>
    imagePlacement('hero', { by: 'id', media_id: 'med_unknown0' }, extra);
  const iframe = iframePlacement('ticker');
  const cases: [string, unknown, string][] = [
    ['a missing name', { pages: [page('a', [iframe])] }, 'name'],
    ['an empty name', { name: '', pages: [page('a', [iframe])] }, 'name'],
    ['a name over 120 characters', { name: 'n'.repeat(121), pages: [page('a', [iframe])] }, 'name'],
    ['no pages', { name: 'x', pages: [] }, 'pages'],
    ['101 pages', { name: 'x', pages: Array.from({ length: 101 }, (_, i) => page(`p${i}`, [iframe])) }, 'pages'],
    ['no placements', one([]), 'pages.0.placements'],
    ['25 placements', one(Array.from({ length: 25 }, (_, i) => iframePlacement(`f${i}`))), 'pages.0.placements'],
    ['a duplicate page id', { name: 'x', pages: [page('a', [iframe]), page('a', [iframe])] }, 'pages.1.id'],
    ['a duplicate placement id', one([iframe, iframe]), 'pages.0.placements.1.id'],
    ['a malformed page id', { name: 'x', pages: [page('1a', [iframe])] }, 'pages.0.id'],
    [
      'a transition over 60000 ms',
      one([iframe], { transition: { type: 'crossfade', duration_ms: 60_001 } }),
      'pages.0.transition.duration_ms',
    ],
    [
      'a negative transition',
      one([iframe], { transition: { type: 'crossfade', duration_ms: -1 } }),
      'pages.0.transition.duration_ms',
    ],
    [
      'an unknown transition',
      one([iframe], { transition: { type: 'dissolve', duration_ms: 1 } }),
      'pages.0.transition.type',
    ],
    [
      'a lowercase colour',
      one([iframe], { canvas: { ...canvas, background: '#ffffffff' } }),
      'pages.0.canvas.background',
    ],
    [
      'a six-digit colour',
      one([iframe], { canvas: { ...canvas, background: '#FFFFFF' } }),
      'pages.0.canvas.background',
    ],
    [
      'a one-stop gradient',
      one([iframe], { canvas: { ...canvas, background: { type: 'linear', stops: [{ at: 0, color: '#000000FF' }] } } }),
      'pages.0.canvas.background.stops',
    ],
    [
      'a gradient not starting at 0',
      one([iframe], {
        canvas: {
          ...canvas,
          background: {
            type: 'linear',
            stops: [
              { at: 0.1, color: '#000000FF' },
              { at: 1, color: '#000000FF' },
            ],
          },
        },
      }),
      'pages.0.canvas.background.stops.0.at',
    ],
    [
      'stops not strictly increasing',
      one([iframe], {
        canvas: {
          ...canvas,
          background: {
            type: 'linear',
            stops: [
              { at: 0, color: '#000000FF' },
              { at: 0.5, color: '#000000FF' },
              { at: 0.5, color: '#000000FF' },
              { at: 1, color: '#000000FF' },
            ],
          },
        },
      }),
      'pages.0.canvas.background.stops.2.at',
    ],
    [
      'a gradient angle',
      one([iframe], { canvas: { ...canvas, background: { type: 'linear', angle: 90, stops: [] } } }),
      'pages.0.canvas.background.angle',
    ],
    ['a zero canvas width', one([iframe], { canvas: { ...canvas, width: 0 } }), 'pages.0.canvas.width'],
    [
      'an unknown viewport fit',
      one([iframe], { canvas: { ...canvas, viewport_fit: 'stretch' } }),
      'pages.0.canvas.viewport_fit',
    ],
    ['a layer over 1024', one([{ ...iframe, layer: 1025 }]), 'pages.0.placements.0.layer'],
    ['a zero-height rect', one([{ ...iframe, rect: { ...fullRect, height: 0 } }]), 'pages.0.placements.0.rect.height'],
    ['an iframe that does not fill', one([{ ...iframe, content_fit: 'cover' }]), 'pages.0.placements.0.content_fit'],
    ['an unknown enter animation', one([{ ...iframe, enter: { type: 'spin' } }]), 'pages.0.placements.0.enter.type'],
    ['an http iframe', one([iframePlacement('f', 'http://example.com/')]), 'pages.0.placements.0.content.src'],
    ['iframe credentials', one([iframePlacement('f', 'https://a:b@example.com/')]), 'pages.0.placements.0.content.src'],
    ['a localhost iframe', one([iframePlacement('f', 'https://localhost:8080/')]), 'pages.0.placements.0.content.src'],
    [
      'a *.localhost iframe',
      one([iframePlacement('f', 'https://admin.localhost/')]),
      'pages.0.placements.0.content.src',
    ],
    ['a *.local iframe', one([iframePlacement('f', 'https://nas.local/')]), 'pages.0.placements.0.content.src'],
    [
      'a private-address iframe',
      one([iframePlacement('f', 'https://192.168.1.20/')]),
      'pages.0.placements.0.content.src',
    ],
    ['a loopback iframe', one([iframePlacement('f', 'https://127.0.0.1/')]), 'pages.0.placements.0.content.src'],
    ['a link-local iframe', one([iframePlacement('f', 'https://[fe80::1]/')]), 'pages.0.placements.0.content.src'],
    [
      'an iframe host resolving to a private address',
      one([iframePlacement('f', 'https://intranet.example.com/')]),
      'pages.0.placements.0.content.src',
    ],
    [
      'an iframe host resolving partly to loopback',
      one([iframePlacement('f', 'https://rebind.example.com/')]),
      'pages.0.placements.0.content.src',
    ],
    [
      'an iframe title over 200',
      one([{ ...iframe, content: { ...iframe.content, title: 't'.repeat(201) } }]),
      'pages.0.placements.0.content.title',
    ],
    [
      'one_at_a_time on an id selector',
      one([imagePlacement('h', { by: 'id', media_id: 'med_a', one_at_a_time: true })]),
      'pages.0.placements.0.content.selector.one_at_a_time',
    ],
    [
      'duplicate media ids',
      one([imagePlacement('h', { by: 'ids', media_ids: ['med_a', 'med_a'], one_at_a_time: true })]),
      'pages.0.placements.0.content.selector.media_ids',
    ],
    [
      '33 media ids',
      one([
        imagePlacement('h', {
          by: 'ids',
          media_ids: Array.from({ length: 33 }, (_, i) => `med_${i}`),
          one_at_a_time: true,
        }),
      ]),
      'pages.0.placements.0.content.selector.media_ids',
    ],
    [
      'several ids without one_at_a_time',
      one([imagePlacement('h', { by: 'ids', media_ids: ['med_a', 'med_b'] })]),
      'pages.0.placements.0.content.selector.one_at_a_time',
    ],
    [
      'a malformed tag',
      one([imagePlacement('h', { by: 'tag', tag: 'no-dash' })]),
      'pages.0.placements.0.content.selector.tag',
    ],
    ['an unknown selector', one([imagePlacement('h', { by: 'newest' })]), 'pages.0.placements.0.content.selector.by'],
    [
      'a video that is not muted',
      one([videoPlacement('v', { by: 'id', media_id: 'med_a' }, { muted: false })]),
      'pages.0.placements.0.content.muted',
    ],
    ['an alt over 300', one([img({ alt: 'a'.repeat(301) })]), 'pages.0.placements.0.content.alt'],
    [
      'after_ms under 1000',
      one([iframe], { advance: { mode: 'duration', after_ms: 999 } }),
      'pages.0.advance.after_ms',
    ],
    [
      'after_ms over a day',
      one([iframe], { advance: { mode: 'duration', after_ms: 86_400_001 } }),
      'pages.0.advance.after_ms',
    ],
    ['an unknown advance mode', one([iframe], { advance: { mode: 'video_end' } }), 'pages.0.advance.mode'],
    [
      'an application page without a controller',
      one([appPlacement('b', 'rel_x', { controller: false })], { advance: { mode: 'application', max_ms: 60_000 } }),
      'pages.0.advance',
    ],
    ['a controller on a duration page', one([appPlacement('b', 'rel_x')]), 'pages.0.placements.0.controller'],
    [
      'an application that does not fill',
      one([appPlacement('b', 'rel_x', { content_fit: 'contain' })], {
        advance: { mode: 'application', max_ms: 60_000 },
      }),
      'pages.0.placements.0.content_fit',
    ],
    [
      'a media_end page with two media',
      one([img({ dwell_ms: 5000 }), { ...img({ dwell_ms: 5000 }), id: 'two' }], { advance: { mode: 'media_end' } }),
      'pages.0.advance',
    ],
    ['a media_end page without media', one([iframe], { advance: { mode: 'media_end' } }), 'pages.0.advance'],
    [
      'a media_end image without dwell_ms',
      one([img()], { advance: { mode: 'media_end' } }),
      'pages.0.placements.0.content.dwell_ms',
    ],
    ['dwell_ms on a duration page', one([img({ dwell_ms: 5000 })]), 'pages.0.placements.0.content.dwell_ms'],
    [
      'a looping video on a media_end page',
      one([videoPlacement('v', { by: 'id', media_id: 'med_a' }, { loop: true })], { advance: { mode: 'media_end' } }),
      'pages.0.placements.0.content.loop',
    ],
    ['only pages with visibility', one([iframe], { visibility: { enabled: false } }), 'pages'],
    [
      'an enabled rule without bounds',
      { name: 'x', pages: [page('a', [iframe]), page('b', [iframe], { visibility: { enabled: true } })] },
      'pages.1.visibility',
    ],
    [
      'an unreal visibility date',
      {
        name: 'x',
        pages: [page('a', [iframe]), page('b', [iframe], { visibility: { enabled: true, from: '2026-02-30T00:00' } })],
      },
      'pages.1.visibility.from',
    ],
    ['an empty soundtrack', { name: 'x', pages: [page('a', [iframe])], audio: { tracks: [] } }, 'audio.tracks'],
  ];
  it.each(cases)('refuses %s', async (_what, doc, field) => {
    const res = await post(doc);
    expect(res.status, res.text).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid_request');
    expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  const unknown: [string, unknown, string][] = [
    ['server-resolved items', one([img({ items: [] })]), 'pages.0.placements.0.content.items'],
    ['controller on an image', one([{ ...img(), controller: false }]), 'pages.0.placements.0.controller'],
    ['controller on an iframe', one([{ ...iframe, controller: false }]), 'pages.0.placements.0.controller'],
    ['page comments', one([iframe], { comments: {} }), 'pages.0.comments'],
    ['a revision', { name: 'x', pages: [page('a', [iframe])], revision: 2 }, 'revision'],
    ['an id', { id: 'pl_x', name: 'x', pages: [page('a', [iframe])] }, 'id'],
    ['a page type in v1', one([iframe], { type: 'page' }), 'pages.0.type'],
    [
      'a media_id on content',
      one([{ ...img(), content: { type: 'image', media_id: 'med_a', selector: { by: 'all' } } }]),
      'pages.0.placements.0.content.media_id',
    ],
    [
      'max_ms on a duration advance',
      one([iframe], { advance: { mode: 'duration', after_ms: 5000, max_ms: 9000 } }),
      'pages.0.advance.max_ms',
    ],
  ];
  it.each(unknown)('names an unknown member: %s', async (_what, doc, field) => {
    const res = await post(doc);
    expect(res.status).toBe(400);
    expect(res.json().errors).toContainEqual(expect.objectContaining({ field, code: 'unknown_field' }));
  });
});

describe('references must be owned and ready', () => {
  let other: string;
  beforeAll(async () => {
    other = (await server.enroll()).projectId;
  });

  const field = 'pages.0.placements.0.content.selector.media_id';
  it.each([
    ['media of another project', async () => insertMedia(server, other), field, 'not_ready'],
    ['pending media', async () => insertMedia(server, tenant, { state: 'pending' }), field, 'not_ready'],
    ['deleted media', async () => insertMedia(server, tenant, { state: 'deleted' }), field, 'not_ready'],
    ['a video in an image placement', async () => insertMedia(server, tenant, { kind: 'video' }), field, 'wrong_kind'],
    ['unknown media', async () => 'med_nothing', field, 'not_ready'],
  ])('refuses %s', async (_what, make, f, code) => {
    const res = await post(imageDoc(await make()));
    expect(res.status).toBe(400);
    expect(res.json().errors).toContainEqual(expect.objectContaining({ field: f, code }));
  });

  it('refuses a release that is not ready, not owned, or of another application', async () => {
    const pending = await insertRelease(server, tenant, 'pending');
    const theirs = await insertRelease(server, other);
    const mine = await insertRelease(server, tenant);
    const mineToo = await insertRelease(server, tenant);
    const app = (releaseId: string, extra: Record<string, unknown> = {}) => ({
      name: 'x',
      pages: [
        page(
          'a',
          [{ ...appPlacement('b', releaseId), content: { type: 'application', release_id: releaseId, ...extra } }],
          { advance: { mode: 'application', max_ms: 5000 } },
        ),
      ],
    });
    for (const releaseId of [pending.releaseId, theirs.releaseId, 'rel_nothing']) {
      const res = await post(app(releaseId));
      expect(res.status).toBe(400);
      expect(res.json().errors).toContainEqual(
        expect.objectContaining({ field: 'pages.0.placements.0.content.release_id', code: 'not_ready' }),
      );
    }
    const mismatch = await post(app(mine.releaseId, { application_id: mineToo.applicationId }));
    expect(mismatch.json().errors).toContainEqual(
      expect.objectContaining({ field: 'pages.0.placements.0.content.application_id', code: 'mismatch' }),
    );
    expect((await post(app(mine.releaseId, { application_id: mine.applicationId }))).status).toBe(201);
  });

  it('refuses a soundtrack track that is not ready audio/mpeg', async () => {
    const image = await insertMedia(server, tenant);
    const wav = await insertMedia(server, tenant, { kind: 'audio', content_type: 'audio/wav' });
    const doc = {
      ...imageDoc(image),
      audio: { tracks: [{ media_id: image }, { media_id: wav }, { media_id: 'med_nothing' }] },
    };
    const res = await post(doc);
    expect(res.status).toBe(400);
    expect(res.json().errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`)).toEqual([
      'audio.tracks.0.media_id:wrong_kind',
      'audio.tracks.1.media_id:wrong_kind',
      'audio.tracks.2.media_id:not_ready',
    ]);
  });

  it('refuses a tag selector that matches nothing, or more than 32 media', async () => {
    const none = await post({
      name: 'x',
      pages: [page('a', [imagePlacement('h', { by: 'tag', tag: 'nothingHere', one_at_a_time: true })])],
    });
    expect(none.json().errors).toContainEqual(
      expect.objectContaining({ field: 'pages.0.placements.0.content.selector', code: 'no_match' }),
    );
    const crowd = await server.enroll();
    for (let i = 0; i < 33; i++) await insertMedia(server, crowd.projectId, { tag: 'many' });
    const many = await post(
      { name: 'x', pages: [page('a', [imagePlacement('h', { by: 'tag', tag: 'many', one_at_a_time: true })])] },
      crowd.token,
    );
    expect(many.json().errors).toContainEqual(
      expect.objectContaining({ field: 'pages.0.placements.0.content.selector', code: 'too_many' }),
    );
  });

  it('requires one_at_a_time when a dynamic selector resolves to several media on a duration page', async () => {
    await insertMedia(server, tenant, { tag: 'pair' });
    await insertMedia(server, tenant, { tag: 'pair' });
    const res = await post({ name: 'x', pages: [page('a', [imagePlacement('h', { by: 'tag', tag: 'pair' })])] });
    expect(res.json().errors).toContainEqual(
      expect.objectContaining({ field: 'pages.0.placements.0.content.selector.one_at_a_time', code: 'required' }),
    );
  });
});

describe('updates and deletes', () => {
  it('replaces the whole document: revision + 1, omitting audio removes the soundtrack', async () => {
    const image = await insertMedia(server, tenant);
    const song = await insertMedia(server, tenant, { kind: 'audio' });
    const created = (await post({ ...imageDoc(image), audio: { tracks: [{ media_id: song }] } })).json();
    const res = await put(created.id, imageDoc(image, 'Renamed'), { ifMatch: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    expect(res.json()).toMatchObject({ name: 'Renamed', revision: 2 });
    expect(res.json().audio).toBeUndefined();
    const stale = await put(created.id, imageDoc(image), { ifMatch: 1 });
    expect(stale.status).toBe(412);
    expect(stale.json().current_revision).toBe(2);
    expect((await put(created.id, imageDoc(image))).json().revision).toBe(3);
    expect((await playlistEvents(created.id)).map((e) => `${e.type}@${e.details.revision}`)).toEqual([
      'playlist.created@1',
      'playlist.updated@2',
      'playlist.updated@3',
    ]);
  });

  it('changes nothing, and bumps nothing, for a PUT of the document it already has', async () => {
    const image = await insertMedia(server, tenant);
    const created = (await post(imageDoc(image, 'Same'))).json();
    const res = await put(created.id, imageDoc(image, 'Same'), { ifMatch: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    expect(res.json()).toEqual(created);
    expect((await playlistEvents(created.id)).map((e) => e.type)).toEqual(['playlist.created']);
    expect((await put(created.id, imageDoc(image, 'Changed'), { ifMatch: 1 })).json().revision).toBe(2);
  });

  it('follows Model A rules for an account: Idempotency-Key on create, If-Match on update and delete', async () => {
    const account = await server.createAccount();
    const image = await insertMedia(server, account.accountId);
    const noKey = await server.request('POST', '/api/v1/playlists', { token: account.token, json: imageDoc(image) });
    expect(noKey.status).toBe(400);
    const created = await post(imageDoc(image), account.token);
    expect(created.status).toBe(201);
    const noIfMatch = await put(created.json().id, imageDoc(image), { t: account.token });
    expect(noIfMatch.status).toBe(400);
    expect((await put(created.json().id, imageDoc(image), { t: account.token, ifMatch: 1 })).status).toBe(200);
    const del = await server.request('DELETE', `/api/v1/playlists/${created.json().id}`, {
      token: account.token,
      idempotencyKey: randomKey(),
    });
    expect(del.status).toBe(400);
  });

  it("answers not_found for another tenant's playlist", async () => {
    const image = await insertMedia(server, tenant);
    const mine = (await post(imageDoc(image))).json();
    const other = (await server.enroll()).token;
    for (const [method, json] of [['GET'], ['PUT', imageDoc(image)], ['DELETE']] as const) {
      const res = await server.request(method, `/api/v1/playlists/${mine.id}`, { token: other, json });
      expect(res.status, method).toBe(404);
    }
  });

  it('remints the manifest of screens showing a playlist when its served content changes, without touching their revision', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    const assigned = (
      await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { playlist_id: playlist.id } })
    ).json();
    const other = await insertMedia(server, tenant);
    expect((await put(playlist.id, imageDoc(other))).json().revision).toBe(2);
    const after = (await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).json();
    expect(after).toMatchObject({ revision: assigned.revision, manifest_revision: assigned.manifest_revision + 1 });
    const last = await server.services.store.db
      .selectFrom('events')
      .select(['type', 'details', 'runtime'])
      .where('screen_id', '=', screen.id)
      .orderBy('position', 'desc')
      .executeTakeFirstOrThrow();
    expect(last.type).toBe('screen.manifest_changed');
    expect(last.runtime).toBe(1);
    expect(JSON.parse(last.details!)).toMatchObject({
      reason: 'playlist_updated',
      manifest_revision: after.manifest_revision,
    });
  });

  it('does not remint for a write that changes nothing a screen is served (a rename)', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    const assigned = (
      await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { playlist_id: playlist.id } })
    ).json();
    const renamed = await put(playlist.id, imageDoc(image, 'Renamed loop'));
    expect(renamed.json()).toMatchObject({ name: 'Renamed loop', revision: 2 });
    const after = (await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).json();
    expect(after).toMatchObject({ revision: assigned.revision, manifest_revision: assigned.manifest_revision });
    const events = await server.services.store.db
      .selectFrom('events')
      .select('type')
      .where('position', '>', 0)
      .where('resource_id', '=', playlist.id)
      .execute();
    expect(events.map((e) => e.type)).toContain('playlist.updated');
    const changed = await server.services.store.db
      .selectFrom('events')
      .select('type')
      .where('screen_id', '=', screen.id)
      .where('type', '=', 'screen.manifest_changed')
      .execute();
    expect(changed).toHaveLength(1); // the assignment's only
  });

  it('refuses an update that adds visibility while an assigned screen has no timezone', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { playlist_id: playlist.id } });
    const withRule = {
      name: 'x',
      pages: [
        ...imageDoc(image).pages,
        page('late', [iframePlacement('t')], { visibility: { enabled: true, windows: [{ days: ['mon'] }] } }),
      ],
    };
    const refused = await put(playlist.id, withRule);
    expect(refused.status).toBe(400);
    expect(refused.json().errors[0]).toMatchObject({ field: 'pages.1.visibility', code: 'timezone_required' });
    expect(refused.json().detail).toContain(screen.id);
    await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { timezone: 'America/New_York' } });
    expect((await put(playlist.id, withRule)).status).toBe(200);
  });

  it('refuses to delete a playlist a screen refers to, and deletes it once none does', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { playlist_id: playlist.id } });
    const refused = await server.request('DELETE', `/api/v1/playlists/${playlist.id}`, { token });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'resource_conflict',
      references: [{ screen_id: screen.id, role: 'assignment' }],
    });

    // An archived screen still refers to its playlist.
    await server.request('POST', `/api/v1/screens/${screen.id}/archive`, { token });
    expect((await server.request('DELETE', `/api/v1/playlists/${playlist.id}`, { token })).status).toBe(409);

    // A deleted screen refers to nothing.
    await server.request('DELETE', `/api/v1/screens/${screen.id}`, { token });
    const deleted = await server.request('DELETE', `/api/v1/playlists/${playlist.id}`, { token, ifMatch: 1 });
    expect(deleted.status).toBe(204);
    expect((await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token })).status).toBe(404);
    expect((await playlistEvents(playlist.id)).map((e) => e.type)).toEqual(['playlist.created', 'playlist.deleted']);
  });

  it('refuses to delete a playlist that a screen is being assigned at the same moment', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    const answer = await whileAssigning(screen.id, playlist.id, () =>
      server.request('DELETE', `/api/v1/playlists/${playlist.id}`, { token }),
    );
    expect(answer.status).toBe(409);
    expect(answer.json().references).toEqual([{ screen_id: screen.id, role: 'assignment' }]);
    expect((await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token })).status).toBe(200);
  });

  const withVisibility = (image: string) => ({
    name: 'x',
    pages: [
      ...imageDoc(image).pages,
      page('late', [iframePlacement('t')], { visibility: { enabled: true, windows: [{ days: ['mon'] }] } }),
    ],
  });

  it('refuses an update that adds visibility while a screen without a timezone is being assigned the playlist', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    const answer = await whileAssigning(screen.id, playlist.id, () => put(playlist.id, withVisibility(image)));
    expect(answer.status).toBe(400);
    expect(answer.json().errors[0]).toMatchObject({ field: 'pages.1.visibility', code: 'timezone_required' });
  });

  it('refuses to assign a screen without a timezone a playlist that is being given visibility at the same moment', async () => {
    const image = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(image))).json();
    const screen = await pairPendingScreen(server, token);
    const { services } = server;
    const doc = PlaylistWriteV2.parse(withVisibility(image));
    let refused: Promise<{ status: number; json(): any }> | undefined;
    await services.store.transaction(async (work) => {
      const before = await findPlaylist(work.db, tenant, playlist.id);
      const resolution = await resolveForWrite(work, tenant, doc);
      await checkScreenTimezones(work, before, doc);
      await replacePlaylist(services, work, before, { doc, resolution, now: server.clock.now() });
      refused = server.request('PATCH', `/api/v1/screens/${screen.id}`, { token, json: { playlist_id: playlist.id } });
      await new Promise((r) => setTimeout(r, 300));
    });
    const answer = await refused!;
    expect(answer.status).toBe(400);
    expect(answer.json().errors[0]).toMatchObject({ field: 'timezone', code: 'required' });
  });
});

describe('v2 and adslot pages', () => {
  const adslot = (id: string, key: string, extra: Record<string, unknown> = {}) => ({
    type: 'adslot',
    id,
    slot: { key, duration_ms: 15_000, name: 'Lobby break' },
    transition: { type: 'crossfade', duration_ms: 300 },
    fallback: { canvas, advance: { mode: 'duration', after_ms: 15_000 }, placements: [iframePlacement('house')] },
    ...extra,
  });

  it('stores adslot pages through v2 and refuses the document on v1 with version_required', async () => {
    const { token: t, projectId } = await server.enroll();
    const image = await insertMedia(server, projectId);
    const plain = (await post(imageDoc(image), t)).json();
    server.clock.advance(1); // lists are ordered by creation time
    const res = await post(
      { name: 'With ads', pages: [{ ...imageDoc(image).pages[0], type: 'page' }, adslot('ad1', 'break1')] },
      t,
      'v2',
    );
    expect(res.status, res.text).toBe(201);
    const ads = res.json();
    expect(ads.pages[0].type).toBeUndefined();
    expect(ads.pages[1]).toMatchObject({
      type: 'adslot',
      id: 'ad1',
      slot: { key: 'break1', duration_ms: 15_000 },
      fallback: { placements: [{ id: 'house', controller: false }] },
    });

    const v1List = await server.request('GET', '/api/v1/playlists', { token: t });
    expect(v1List.status).toBe(409);
    expect(v1List.json().code).toBe('version_required');
    expect((await server.request('GET', `/api/v1/playlists/${ads.id}`, { token: t })).json().code).toBe(
      'version_required',
    );
    expect((await put(ads.id, imageDoc(image), { t })).json().code).toBe('version_required');
    expect((await server.request('GET', `/api/v1/playlists/${plain.id}`, { token: t })).status).toBe(200);
    const v2List = await server.request('GET', '/api/v2/playlists', { token: t });
    expect(v2List.json().items.map((p: { id: string }) => p.id)).toEqual([plain.id, ads.id]);
    expect((await put(ads.id, imageDoc(image), { t, version: 'v2', ifMatch: 1 })).json().revision).toBe(2);
  });

  it.each([
    [
      '17 adslot pages',
      (base: unknown) => [base, ...Array.from({ length: 17 }, (_, i) => adslot(`ad${i}`, `k${i}`))],
      'pages',
    ],
    [
      'a slot defined on two pages',
      (base: unknown) => [base, adslot('ad1', 'same'), adslot('ad2', 'same')],
      'pages.2.slot.key',
    ],
    [
      'only adslot pages and pages with visibility',
      (base: any) => [{ ...base, visibility: { enabled: false } }, adslot('ad1', 'k')],
      'pages',
    ],
    [
      'a slot longer than five minutes',
      (base: unknown) => [base, adslot('ad1', 'k', { slot: { key: 'k', duration_ms: 300_001 } })],
      'pages.1.slot.duration_ms',
    ],
    [
      'a fallback breaking page rules',
      (base: unknown) => [
        base,
        adslot('ad1', 'k', {
          fallback: { canvas, advance: { mode: 'media_end' }, placements: [iframePlacement('x')] },
        }),
      ],
      'pages.1.fallback.advance',
    ],
  ])('refuses %s', async (_what, pages, field) => {
    const image = await insertMedia(server, tenant);
    const res = await post({ name: 'x', pages: pages(imageDoc(image).pages[0]) }, token, 'v2');
    expect(res.status).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('is a Model P surface', async () => {
    const account = await server.createAccount();
    expect((await server.request('GET', '/api/v2/playlists', { token: account.token })).status).toBe(403);
  });
});

describe('tag rematerialization through mediaChanged', () => {
  it('re-resolves tag selectors when media tags change, keeping the written revision', async () => {
    const { token: t, projectId } = await server.enroll();
    const first = await insertMedia(server, projectId, { tag: 'lobby' });
    const doc = {
      name: 'Tagged',
      pages: [page('a', [imagePlacement('h', { by: 'tag', tag: 'lobby', one_at_a_time: true })])],
    };
    const playlist = (await post(doc, t)).json();
    const screen = await pairPendingScreen(server, t);
    const assigned = (
      await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token: t, json: { playlist_id: playlist.id } })
    ).json();
    const items = async () =>
      (await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t }))
        .json()
        .pages[0].placements[0].content.items.map((i: { media_id: string }) => i.media_id);

    const second = await insertMedia(server, projectId);
    await changeMedia(server, projectId, second, { tag: 'lobby' });
    expect(await items()).toEqual([first, second]);
    const got = await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t });
    expect(got.json().revision).toBe(1);
    const screenAfter = (await server.request('GET', `/api/v1/screens/${screen.id}`, { token: t })).json();
    expect(screenAfter).toMatchObject({
      revision: assigned.revision,
      manifest_revision: assigned.manifest_revision + 1,
    });
    expect((await playlistEvents(playlist.id)).map((e) => e.type)).toEqual([
      'playlist.created',
      'playlist.rematerialized',
    ]);

    // Re-tagging away drops it; a change that does not touch the document re-resolves nothing.
    await changeMedia(server, projectId, second, { tag: 'elsewhere' });
    expect(await items()).toEqual([first]);
    await changeMedia(server, projectId, second, { tag: 'nowhere' });
    expect((await playlistEvents(playlist.id)).map((e) => e.type)).toEqual([
      'playlist.created',
      'playlist.rematerialized',
      'playlist.rematerialized',
    ]);

    // The last match leaving makes the playlist unavailable: no new assignment until media return.
    await changeMedia(server, projectId, first, { tag: null });
    expect(await items()).toEqual([]);
    const another = await pairPendingScreen(server, t);
    const refused = await server.request('PATCH', `/api/v1/screens/${another.id}`, {
      token: t,
      json: { playlist_id: playlist.id },
    });
    expect(refused.status).toBe(400);
    expect(refused.json().errors).toContainEqual(
      expect.objectContaining({ field: 'pages.0.placements.0.content.selector', code: 'no_match' }),
    );
    await changeMedia(server, projectId, first, { tag: 'lobby' });
    expect(
      (await server.request('PATCH', `/api/v1/screens/${another.id}`, { token: t, json: { playlist_id: playlist.id } }))
        .status,
    ).toBe(200);
  });

  it('re-resolves `all` selectors when media become ready, per kind', async () => {
    const { token: t, projectId } = await server.enroll();
    const first = await insertMedia(server, projectId);
    const doc = { name: 'All', pages: [page('a', [imagePlacement('h', { by: 'all', one_at_a_time: true })])] };
    const playlist = (await post(doc, t)).json();
    const video = await insertMedia(server, projectId, { kind: 'video', state: 'pending' });
    await changeMedia(server, projectId, video, { state: 'ready' });
    const image = await insertMedia(server, projectId, { state: 'pending' });
    await changeMedia(server, projectId, image, { state: 'ready' });
    const got = (await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t })).json();
    expect(got.pages[0].placements[0].content.items.map((i: { media_id: string }) => i.media_id)).toEqual([
      first,
      image,
    ]);
  });
});

describe('re-resolution when content changes', () => {
  it("makes a playlist that uses a deleted application's release unavailable: assigning it is refused", async () => {
    const { token: t, projectId } = await server.enroll();
    const { applicationId, releaseId } = await insertRelease(server, projectId);
    const doc = {
      name: 'Board',
      pages: [page('b', [appPlacement('b', releaseId)], { advance: { mode: 'application', max_ms: 5000 } })],
    };
    const playlist = (await post(doc, t)).json();
    const screen = await pairPendingScreen(server, t);
    expect((await server.request('DELETE', `/api/v1/applications/${applicationId}`, { token: t })).status).toBe(204);

    const refused = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token: t,
      json: { playlist_id: playlist.id },
    });
    expect(refused.status).toBe(400);
    expect(refused.json().errors).toContainEqual(
      expect.objectContaining({ field: 'playlist_id', code: 'unavailable' }),
    );
    expect(refused.json().errors).toContainEqual(
      expect.objectContaining({ field: 'pages.0.placements.0.content.release_id', code: 'not_ready' }),
    );
    const events = await playlistEvents(playlist.id);
    expect(events.map((e) => e.type)).toEqual(['playlist.created', 'playlist.rematerialized']);
    expect(events[1]!.details).toMatchObject({ revision: 1, application_id: applicationId, available: false });
    // The written document and its revision stay as written.
    expect((await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t })).json()).toMatchObject({
      revision: 1,
    });
  });

  it('reads the content once for all the playlists a media change re-resolves', async () => {
    const { token: t, projectId } = await server.enroll();
    await insertMedia(server, projectId, { tag: 'lobby' });
    for (let i = 0; i < 4; i++) {
      const selector =
        i % 2 === 0 ? { by: 'all', one_at_a_time: true } : { by: 'tag', tag: 'lobby', one_at_a_time: true };
      expect((await post({ name: `P${i}`, pages: [page('a', [imagePlacement('h', selector)])] }, t)).status).toBe(201);
    }
    const added = await insertMedia(server, projectId, { tag: 'lobby' });
    let mediaReads = 0;
    const counter = {
      transformQuery(args: { node: { kind: string; from?: unknown } }) {
        if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node.from).includes('"name":"media"}'))
          mediaReads++;
        return args.node;
      },
      async transformResult(args: { result: unknown }) {
        return args.result;
      },
    };
    await server.services.store.transaction(async (work) => {
      const db = work.db.withPlugin(counter as never);
      await server.services.references.mediaChanged(
        { db, afterCommit: work.afterCommit, lock: work.lock },
        projectId,
        { mediaId: added, tags: [null, 'lobby'] },
        server.clock.now(),
      );
    });
    expect(mediaReads).toBe(1);
    const items = (await server.request('GET', '/api/v1/playlists', { token: t }))
      .json()
      .items.map((p: any) => p.pages[0].placements[0].content.items.length);
    expect(items).toEqual([2, 2, 2, 2]);
  });
});

describe('content references', () => {
  it('reports media and applications as in use while a playlist that a screen uses references them', async () => {
    const { token: t, projectId } = await server.enroll();
    const image = await insertMedia(server, projectId);
    const song = await insertMedia(server, projectId, { kind: 'audio' });
    const { applicationId, releaseId } = await insertRelease(server, projectId);
    const doc = {
      name: 'Refs',
      pages: [
        imageDoc(image).pages[0],
        page('b', [appPlacement('b', releaseId)], { advance: { mode: 'application', max_ms: 5000 } }),
      ],
      audio: { tracks: [{ media_id: song }] },
    };
    const playlist = (await post(doc, t)).json();
    const { references, store } = server.services;
    const inUse = () =>
      store.transaction(async (work) => [
        await references.mediaInUse(work, projectId, image),
        await references.mediaInUse(work, projectId, song),
        await references.applicationInUse(work, projectId, applicationId),
      ]);
    expect(await inUse()).toEqual([false, false, false]);
    const screen = await pairPendingScreen(server, t);
    await server.request('PATCH', `/api/v1/screens/${screen.id}`, { token: t, json: { playlist_id: playlist.id } });
    expect(await inUse()).toEqual([true, true, true]);
    // Another tenant asking about the same ids learns nothing.
    expect(await store.transaction((work) => references.mediaInUse(work, tenant, image))).toBe(false);
    await server.request('DELETE', `/api/v1/screens/${screen.id}`, { token: t });
    expect(await inUse()).toEqual([false, false, false]);
  });
});

describe('content changed while a playlist write reads it', () => {
  /** Runs `write` in a transaction and sends `request` while that transaction is still open. */
  async function whileOpen(
    write: (work: Work) => Promise<unknown>,
    request: () => Promise<{ status: number; json(): any }>,
  ) {
    let answer: Promise<{ status: number; json(): any }> | undefined;
    await server.services.store.transaction(async (work) => {
      await write(work);
      answer = request();
      await new Promise((r) => setTimeout(r, 300));
    });
    return answer!;
  }

  /** Replaces the playlist with `doc` as its PUT does, in the caller's transaction. */
  async function replaceIn(work: Work, t: string, playlistId: string, doc: unknown) {
    const parsed = PlaylistWriteV2.parse(doc);
    const before = await findPlaylist(work.db, t, playlistId);
    const resolution = await resolveForWrite(work, t, parsed);
    await replacePlaylist(server.services, work, before, { doc: parsed, resolution, now: server.clock.now() });
  }

  async function shownPlaylist(t: string, projectId: string) {
    const playlist = (await post(imageDoc(await insertMedia(server, projectId), 'Shown'), t)).json();
    const screen = await pairPendingScreen(server, t);
    const assigned = await server.request('PATCH', `/api/v1/screens/${screen.id}`, {
      token: t,
      json: { playlist_id: playlist.id },
    });
    expect(assigned.status).toBe(200);
    return playlist;
  }

  it('refuses to delete a media that a shown playlist is being changed to name', async () => {
    const { token: t, projectId } = await server.enroll();
    const playlist = await shownPlaylist(t, projectId);
    const added = await insertMedia(server, projectId);
    const answer = await whileOpen(
      (work) => replaceIn(work, projectId, playlist.id, imageDoc(added, 'Shown')),
      () => server.request('DELETE', `/api/v1/media/${added}`, { token: t }),
    );
    expect(answer.status).toBe(409);
    expect(answer.json().code).toBe('resource_conflict');
    expect((await server.request('GET', `/api/v1/media/${added}`, { token: t })).status).toBe(200);
  });

  /**
   * Writes `doc` as a new playlist, as POST /playlists does, while `change` has run but not
   * committed (the request itself would wait at its meter for the quota row a delete or a
   * publication writes, so it would not overlap the change).
   */
  async function createWhile(projectId: string, change: (work: Work) => Promise<unknown>, doc: unknown) {
    const parsed = PlaylistWriteV2.parse(doc);
    return whileUncommitted(change, async (work) => {
      const resolution = await resolveForWrite(work, projectId, parsed);
      return insertPlaylist(server.services, work, {
        tenantId: projectId,
        doc: parsed,
        resolution,
        now: server.clock.now(),
      });
    });
  }

  const createWhileDeleting = (projectId: string, doomed: string, doc: unknown) =>
    createWhile(
      projectId,
      async (work) =>
        tombstoneMedia(
          server.services,
          work,
          await readyMedia(work.db, projectId, doomed),
          server.clock.now(),
          'req_delete',
        ),
      doc,
    );

  it('refuses a playlist write that names a media deleted at the same moment', async () => {
    const { projectId } = await server.enroll();
    const doomed = await insertMedia(server, projectId);
    await expect(createWhileDeleting(projectId, doomed, imageDoc(doomed))).rejects.toMatchObject({
      code: 'invalid_request',
      options: {
        errors: [
          expect.objectContaining({ field: 'pages.0.placements.0.content.selector.media_id', code: 'not_ready' }),
        ],
      },
    });
  });

  it('leaves a media deleted at the same moment out of a selector a playlist write resolves', async () => {
    const { token: t, projectId } = await server.enroll();
    const kept = await insertMedia(server, projectId);
    const doomed = await insertMedia(server, projectId);
    const doc = { name: 'All', pages: [page('a', [imagePlacement('h', { by: 'all', one_at_a_time: true })])] };
    const playlist = await createWhileDeleting(projectId, doomed, doc);
    const stored = (await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t })).json();
    expect(stored.pages[0].placements[0].content.items.map((i: { media_id: string }) => i.media_id)).toEqual([kept]);
  });

  it('leaves a media tagged away at the same moment out of a tag selector a playlist write resolves', async () => {
    const { token: t, projectId } = await server.enroll();
    const kept = await insertMedia(server, projectId, { tag: 'lobby' });
    const moved = await insertMedia(server, projectId, { tag: 'lobby' });
    const doc = {
      name: 'Lobby',
      pages: [page('a', [imagePlacement('h', { by: 'tag', tag: 'lobby', one_at_a_time: true })])],
    };
    const { services, clock } = server;
    const answer = await whileOpen(
      async (work) =>
        retagMedia(services, work, await readyMedia(work.db, projectId, moved), null, clock.now(), 'req_retag'),
      () => post(doc, t),
    );
    expect(answer.status).toBe(201);
    const stored = (await server.request('GET', `/api/v1/playlists/${answer.json().id}`, { token: t })).json();
    expect(stored.pages[0].placements[0].content.items.map((i: { media_id: string }) => i.media_id)).toEqual([kept]);
  });

  it('takes a media that becomes ready at the same moment into an `all` selector a playlist write resolves', async () => {
    const { token: t, projectId } = await server.enroll();
    const { services } = server;
    const earlier = await insertMedia(server, projectId);
    // Declared and stored but not committed: no worker runs it; this test publishes it itself.
    const bytes = await image('png');
    const declared = await declare(server, t, bytes, 'image/png');
    expect((await putBytes(server, declared.session, bytes)).status).toBe(200);
    const op = await services.store.db
      .selectFrom('operations')
      .selectAll()
      .where('id', '=', declared.session.operation.id)
      .executeTakeFirstOrThrow();
    const publish = await mediaUploadRunner(services).run(op, {
      fence: op.fence,
      signal: new AbortController().signal,
    });
    const doc = { name: 'All', pages: [page('a', [imagePlacement('h', { by: 'all', one_at_a_time: true })])] };
    const playlist = await createWhile(projectId, publish, doc);
    const { media_id: fresh } = (await services.store.db
      .selectFrom('media_uploads')
      .select('media_id')
      .where('operation_id', '=', op.id)
      .executeTakeFirstOrThrow()) as { media_id: string };
    const stored = (await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t })).json();
    const items = stored.pages[0].placements[0].content.items.map((i: { media_id: string }) => i.media_id);
    expect(items.sort()).toEqual([earlier, fresh].sort());
  });

  it('takes a media generated at the same moment into an `all` selector a playlist write resolves', async () => {
    const { token: t, projectId } = await server.enroll();
    const { services, clock } = server;
    const earlier = await insertMedia(server, projectId);
    const request = MediaGenerationRequest.parse({ prompt: 'A lighthouse at dusk', aspect_ratio: '16:9' });
    const generation = planGeneration(projectId, request, 'req_generate');
    const generated = newId('med');
    const stored = { mediaId: generated, key: `media/${generated}`, info: { bytes: 1000, sha256: 'c'.repeat(64) } };
    const doc = { name: 'All', pages: [page('a', [imagePlacement('h', { by: 'all', one_at_a_time: true })])] };
    const playlist = await createWhile(
      projectId,
      (work) => publishGeneration(services, work, generation, stored, clock.now(), clock.now()),
      doc,
    );
    const served = (await server.request('GET', `/api/v1/playlists/${playlist.id}`, { token: t })).json();
    const items = served.pages[0].placements[0].content.items.map((i: { media_id: string }) => i.media_id);
    expect(items.sort()).toEqual([earlier, generated].sort());
  });

  it('refuses to delete an application that a shown playlist is being changed to name', async () => {
    const { token: t, projectId } = await server.enroll();
    const playlist = await shownPlaylist(t, projectId);
    const { applicationId, releaseId } = await insertRelease(server, projectId);
    const doc = {
      name: 'Shown',
      pages: [page('b', [appPlacement('b', releaseId)], { advance: { mode: 'application', max_ms: 5000 } })],
    };
    const answer = await whileOpen(
      (work) => replaceIn(work, projectId, playlist.id, doc),
      () => server.request('DELETE', `/api/v1/applications/${applicationId}`, { token: t }),
    );
    expect(answer.status).toBe(409);
    expect(answer.json().code).toBe('application_in_use');
  });
});

describe('content deleted while a screen is assigned a playlist naming it', () => {
  /**
   * Assigns the playlist to the screen, as PATCH /screens does, while `change` has run but not
   * committed (the request itself would wait at its meter for the quota row a delete writes, so it
   * would not overlap the change).
   */
  const assignWhile = (change: (work: Work) => Promise<unknown>, screenId: string, playlistId: string) =>
    whileUncommitted(change, async (work) => {
      const before = await findScreen(work.db, tenant, screenId);
      const r = { events: server.services.events, work, now: server.clock.now(), requestId: 'req_assign' };
      return patchScreen(r, before, { playlist_id: playlistId });
    });

  const appDoc = (releaseId: string) => ({
    name: 'Board',
    pages: [page('b', [appPlacement('b', releaseId)], { advance: { mode: 'application', max_ms: 5000 } })],
  });

  it('refuses to delete a media while a screen is being assigned a playlist naming it', async () => {
    const media = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(media))).json();
    const screen = await pairPendingScreen(server, token);
    const answer = await whileAssigning(screen.id, playlist.id, () =>
      server.request('DELETE', `/api/v1/media/${media}`, { token }),
    );
    expect(answer.status).toBe(409);
    expect((await server.request('GET', `/api/v1/media/${media}`, { token })).status).toBe(200);
  });

  it('refuses to delete an application while a screen is being assigned a playlist naming it', async () => {
    const { applicationId, releaseId } = await insertRelease(server, tenant);
    const playlist = (await post(appDoc(releaseId))).json();
    const screen = await pairPendingScreen(server, token);
    const answer = await whileAssigning(screen.id, playlist.id, () =>
      server.request('DELETE', `/api/v1/applications/${applicationId}`, { token }),
    );
    expect(answer.status).toBe(409);
    expect(answer.json().code).toBe('application_in_use');
  });

  it('refuses to assign a playlist whose media is being deleted at the same moment', async () => {
    const media = await insertMedia(server, tenant);
    const playlist = (await post(imageDoc(media))).json();
    const screen = await pairPendingScreen(server, token);
    const deleting = (work: Work) =>
      readyMedia(work.db, tenant, media).then((row) =>
        tombstoneMedia(server.services, work, row, server.clock.now(), 'req_delete'),
      );
    await expect(assignWhile(deleting, screen.id, playlist.id)).rejects.toMatchObject({
      code: 'invalid_request',
      options: { errors: [expect.objectContaining({ field: 'playlist_id', code: 'unavailable' }), expect.anything()] },
    });
    expect((await findScreen(server.services.store.db, tenant, screen.id)).playlist_id).toBeNull();
  });
});
