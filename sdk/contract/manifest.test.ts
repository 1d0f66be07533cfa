import { describe, expect, it } from 'vitest';
import {
  boundUrlViolation,
  isPlacementOf,
  kindOfPlacement,
  mediaRoute,
  packageRoute,
  parseRuntimeManifest,
  placementOf,
  soundtrackKey,
  type ManifestParseResult,
  type RuntimeManifest,
} from './manifest';

const ORIGIN = 'http://localhost:8080';
const SHA = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const REV = 'man_k3';

function manifest(): any {
  return {
    schemaVersion: 2,
    manifestRevision: REV,
    grantId: 'gr_1',
    contentGeneration: 1,
    screenId: 'scr_a',
    screenLabel: 'Lobby',
    playlistId: 'pl_a',
    playlistRevision: 2,
    generatedAt: '2026-08-14T17:00:00Z',
    timezone: 'Europe/Berlin',
    pages: [
      {
        contractVersion: 'marquee.canvas/v1',
        id: 'welcome',
        canvas: { width: 1920, height: 1080, viewportFit: 'contain', background: '#000000FF' },
        transition: { type: 'crossfade', durationMs: 200 },
        advance: { mode: 'duration', afterMs: 8000 },
        placements: [
          {
            id: 'hero',
            content: {
              type: 'image',
              items: [
                {
                  mediaId: 'med_a',
                  src: `/content/v1/manifests/${REV}/media/med_a`,
                  intrinsicSize: { width: 1920, height: 1080 },
                  sha256: SHA,
                  bytes: 48211,
                  contentType: 'image/webp',
                },
              ],
              oneAtATime: false,
              grantId: 'gr_1',
            },
            rect: { x: 0, y: 0, width: 1920, height: 1080 },
            layer: 0,
            contentFit: 'cover',
          },
          {
            id: 'ticker',
            content: { type: 'iframe', src: 'https://example.com/ticker', title: 'Ticker' },
            rect: { x: 0, y: 960, width: 1920, height: 120 },
            layer: 1,
            contentFit: 'fill',
            enter: { type: 'fade-up' },
          },
        ],
      },
      {
        contractVersion: 'marquee.canvas/v1',
        id: 'evening',
        canvas: {
          width: 1920,
          height: 1080,
          viewportFit: 'contain',
          background: {
            type: 'linear',
            stops: [
              { at: 0, color: '#1B2632FF' },
              { at: 1, color: '#000000FF' },
            ],
          },
        },
        transition: { type: 'swipe-left', durationMs: 600 },
        advance: { mode: 'media_end', maxMs: 30000 },
        visibility: { enabled: true, windows: [{ days: ['fri', 'sat'], start: '18:00', end: '02:00' }] },
        placements: [
          {
            id: 'clips',
            content: {
              type: 'video',
              items: [
                {
                  mediaId: 'med_v',
                  src: `${ORIGIN}/content/v1/manifests/${REV}/media/med_v`,
                  intrinsicSize: { width: 1920, height: 1080 },
                  sha256: SHA,
                  bytes: 9000,
                  contentType: 'video/mp4',
                  codecs: 'avc1.64002a',
                },
              ],
              oneAtATime: true,
              muted: true,
              loop: false,
              grantId: 'gr_1',
            },
            rect: { x: 0, y: 0, width: 1920, height: 1080 },
            layer: 0,
            contentFit: 'contain',
          },
        ],
      },
      {
        contractVersion: 'marquee.canvas/v1',
        id: 'board',
        canvas: { width: 1920, height: 1080, viewportFit: 'fill', background: '#000000FF' },
        transition: { type: 'crossfade', durationMs: 200 },
        advance: { mode: 'application', maxMs: 60000 },
        placements: [
          {
            id: 'board',
            content: {
              type: 'application',
              applicationId: 'app_b',
              releaseId: 'rel_b',
              launchUrl: `/runtime/v1/manifests/${REV}/releases/rel_b/launch`,
              origin: 'http://0123456789abcdef0123456789abcdef01234567.release.localhost:8080',
              protocol: '1',
              grantId: 'gr_1',
              package: {
                version: 'marquee.webapp-package/v1',
                url: `/content/v1/manifests/${REV}/releases/rel_b/package`,
                bytes: 2048,
                sha256: SHA,
                entrypoint: 'index.html',
                contentType: 'application/vnd.marquee.webapp-package+tar+gzip',
              },
            },
            rect: { x: 0, y: 0, width: 1920, height: 1080 },
            layer: 0,
            contentFit: 'fill',
            controller: true,
            capabilityHandle: 'cap_'.padEnd(48, 'x'),
            capabilityExpiresAt: '2026-08-14T17:05:00Z',
          },
        ],
      },
    ],
    soundtrack: {
      grantId: 'gr_1',
      tracks: [
        {
          mediaId: 'med_s1',
          src: `/content/v1/manifests/${REV}/media/med_s1`,
          sha256: SHA,
          bytes: 3_000_000,
          contentType: 'audio/mpeg',
          durationMs: 185_000,
        },
      ],
    },
  };
}

function rejected(result: ManifestParseResult): string[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.issues.map((i) => `${i.path}: ${i.message}`);
}

describe('runtime manifest shape', () => {
  it('accepts a complete manifest with every content type and a soundtrack', () => {
    const result = parseRuntimeManifest(manifest(), ORIGIN);
    expect(result.ok).toBe(true);
    const m = (result as { manifest: RuntimeManifest }).manifest;
    expect(m.pages.map((p) => p.id)).toEqual(['welcome', 'evening', 'board']);
    expect(m.pages[1]!.visibility).toEqual({
      enabled: true,
      windows: [{ days: ['fri', 'sat'], start: '18:00', end: '02:00' }],
    });
  });

  it('accepts an unassigned screen with no pages and no timezone', () => {
    const m = manifest();
    m.pages = [];
    delete m.timezone;
    delete m.playlistId;
    delete m.soundtrack;
    expect(parseRuntimeManifest(m, ORIGIN).ok).toBe(true);
  });

  it('rejects unknown members anywhere (closed objects)', () => {
    const m = manifest();
    m.pages[0].placements[0].content.items[0].extra = 1;
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.0.placements.0.content.items.0');
  });

  it('rejects snake_case members where the manifest is camelCase', () => {
    const m = manifest();
    m.pages[0].transition = { type: 'crossfade', duration_ms: 200 };
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.0.transition');
  });

  it('keeps visibility in its write shape and rejects a camelCased or malformed one', () => {
    const m = manifest();
    m.pages[1].visibility = { enabled: true, windows: [{ days: ['fri'], start: '18:00' }] };
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.1.visibility');
  });

  it('needs a timezone when any page has visibility', () => {
    const m = manifest();
    delete m.timezone;
    expect(rejected(parseRuntimeManifest(m, ORIGIN))).toEqual([
      'pages.1.visibility: a page with visibility needs the manifest timezone',
    ]);
  });

  it('rejects an unknown time zone', () => {
    const m = manifest();
    m.timezone = 'Mars/Olympus_Mons';
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('timezone');
  });

  it('requires the per-page contract version', () => {
    const m = manifest();
    m.pages[0].contractVersion = 'marquee.canvas/v2';
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.0.contractVersion');
  });

  it('requires schemaVersion 2', () => {
    const m = manifest();
    m.schemaVersion = 1;
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('schemaVersion');
  });

  it('requires a capability handle and its expiry on application placements', () => {
    const m = manifest();
    delete m.pages[2].placements[0].capabilityHandle;
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.2.placements.0.capabilityHandle');
    const short = manifest();
    short.pages[2].placements[0].capabilityHandle = 'too-short';
    expect(rejected(parseRuntimeManifest(short, ORIGIN)).join()).toContain('capabilityHandle');
  });

  it('refuses capability members on non-application placements', () => {
    const m = manifest();
    m.pages[0].placements[0].capabilityHandle = 'x'.repeat(40);
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.0.placements.0');
  });

  it('rejects duplicate page ids and duplicate placement ids on a page', () => {
    const pages = manifest();
    pages.pages[1].id = 'welcome';
    expect(rejected(parseRuntimeManifest(pages, ORIGIN))).toContain('pages.1.id: page id "welcome" is not unique');
    const placements = manifest();
    placements.pages[0].placements[1].id = 'hero';
    expect(rejected(parseRuntimeManifest(placements, ORIGIN)).join()).toContain('placement id "hero" is not unique');
  });

  it('ties each advance mode to its member', () => {
    const m = manifest();
    m.pages[0].advance = { mode: 'duration', maxMs: 8000 };
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('pages.0.advance');
  });

  it('rejects a soundtrack track that is not audio/mpeg or has no duration', () => {
    const m = manifest();
    m.soundtrack.tracks[0].contentType = 'audio/ogg';
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('soundtrack.tracks.0.contentType');
    const d = manifest();
    delete d.soundtrack.tracks[0].durationMs;
    expect(rejected(parseRuntimeManifest(d, ORIGIN)).join()).toContain('soundtrack.tracks.0.durationMs');
  });
});

describe('URL binding', () => {
  const route = mediaRoute(REV, 'med_a');

  it('accepts the exact route, root-relative or absolute on the same origin (default port normalized)', () => {
    expect(boundUrlViolation(route, ORIGIN, route)).toBeNull();
    expect(boundUrlViolation(`${ORIGIN}${route}`, ORIGIN, route)).toBeNull();
    expect(boundUrlViolation(`https://play.example.com:443${route}`, 'https://play.example.com', route)).toBeNull();
    expect(boundUrlViolation(`HTTP://LOCALHOST:8080${route}`, ORIGIN, route)).toBeNull();
  });

  it.each([
    ['another host', `http://evil.localhost:8080${route}`],
    ['another port', `http://localhost:8081${route}`],
    ['another scheme', `https://localhost:8080${route}`],
    ['a protocol-relative URL', `//evil.example${route}`],
    ['a query', `${route}?x=1`],
    ['an empty query', `${route}?`],
    ['a fragment', `${route}#x`],
    ['user info', `http://user:pw@localhost:8080${route}`],
    ['a dot segment', `/content/v1/manifests/${REV}/media/other/../med_a`],
    ['percent-encoding', `/content/v1/manifests/${REV}/media/med%5Fa`],
    ['a backslash', `\\content\\v1\\manifests\\${REV}\\media\\med_a`],
    ['a relative path', `content/v1/manifests/${REV}/media/med_a`],
    ['another media id', mediaRoute(REV, 'med_b')],
    ['another manifest revision', mediaRoute('man_old', 'med_a')],
    ['a data URL', 'data:image/png;base64,AAAA'],
    ['leading whitespace', ` ${route}`],
    ['an embedded newline', route.replace('media', 'me\ndia')],
  ])('rejects %s', (_name, raw) => {
    expect(boundUrlViolation(raw, ORIGIN, route)).not.toBeNull();
  });

  it('rejects the whole manifest when one media src is off-origin', () => {
    const m = manifest();
    m.pages[1].placements[0].content.items[0].src = `http://cdn.example.com/content/v1/manifests/${REV}/media/med_v`;
    expect(rejected(parseRuntimeManifest(m, ORIGIN))).toEqual([
      'pages.1.placements.0.content.items.0.src: must resolve to the manifest origin http://localhost:8080',
    ]);
  });

  it('binds the package url to the release id of its content', () => {
    const m = manifest();
    m.pages[2].placements[0].content.package.url = packageRoute(REV, 'rel_other');
    expect(rejected(parseRuntimeManifest(m, ORIGIN))[0]).toContain(
      'pages.2.placements.0.content.package.url: must be exactly the bound route',
    );
  });

  it('binds the launch URL and refuses an application served from the player origin', () => {
    const m = manifest();
    m.pages[2].placements[0].content.launchUrl = 'https://evil.example/launch';
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('content.launchUrl');
    const same = manifest();
    same.pages[2].placements[0].content.origin = ORIGIN;
    expect(rejected(parseRuntimeManifest(same, ORIGIN)).join()).toContain('never be served from the player origin');
  });

  it('binds soundtrack tracks like media', () => {
    const m = manifest();
    m.soundtrack.tracks[0].src = `/content/v1/manifests/${REV}/media/med_other`;
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('soundtrack.tracks.0.src');
  });

  it('binds against the origin the manifest came from, not a fixed one', () => {
    expect(rejected(parseRuntimeManifest(manifest(), 'https://play.example.com')).length).toBeGreaterThan(0);
  });
});

describe('soundtrackKey', () => {
  it('is equal across revisions when the tracks are the same bytes, and differs otherwise', () => {
    const a = manifest().soundtrack;
    const b = {
      ...manifest().soundtrack,
      grantId: 'gr_2',
      tracks: [{ ...a.tracks[0], src: mediaRoute('man_k4', 'med_s1') }],
    };
    expect(soundtrackKey(a)).toBe(soundtrackKey(b));
    expect(soundtrackKey(a)).not.toBe(soundtrackKey({ ...a, tracks: [{ ...a.tracks[0], sha256: 'f'.repeat(64) }] }));
    expect(soundtrackKey(undefined)).toBe('');
  });
});

describe('lockstep in the manifest', () => {
  it('carries the sync group, its epoch and a wall region', () => {
    const m = manifest();
    m.sync = {
      group: 'wall1',
      epoch: '2026-08-14T17:00:05.250Z',
      wallRegion: { x: 1920, y: 0, width: 1920, height: 1080 },
    };
    const parsed = parseRuntimeManifest(m, ORIGIN);
    expect(parsed.ok && parsed.manifest.sync).toEqual(m.sync);
  });

  it('names the field of a bad group or region', () => {
    const m = manifest();
    m.sync = { group: 'wall one', epoch: '2026-08-14T17:00:05Z', wallRegion: { x: -1, y: 0, width: 0, height: 10 } };
    const parsed = parseRuntimeManifest(m, ORIGIN) as Extract<ManifestParseResult, { ok: false }>;
    expect(parsed.ok).toBe(false);
    expect(parsed.issues.map((i) => i.path).sort()).toEqual([
      'sync.group',
      'sync.wallRegion.width',
      'sync.wallRegion.x',
    ]);
  });
});

describe('placements by content type', () => {
  const placements = () => {
    const parsed = parseRuntimeManifest(manifest(), ORIGIN);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    return parsed.manifest.pages.flatMap((page) => page.placements);
  };

  it('narrows a whole placement by its content type, in a switch and in a guard', () => {
    const seen = placements().map((placement) => {
      const p = kindOfPlacement(placement);
      switch (p.kind) {
        case 'image':
          return `image ${p.placement.content.items.length} ${p.placement.contentFit}`;
        case 'video':
          return `video ${p.placement.content.muted}`;
        case 'iframe':
          return `iframe ${p.placement.content.src}`;
        case 'application':
          return `application ${p.placement.capabilityHandle.length}`;
      }
    });
    expect(seen.map((s) => s.split(' ')[0]).sort()).toEqual(['application', 'iframe', 'image', 'video']);
    const apps = placements().filter((p) => isPlacementOf(p, 'application'));
    expect(apps.map((p) => p.capabilityExpiresAt)).toHaveLength(1);
  });

  it('placementOf hands back the placement of the named kind and refuses another', () => {
    const image = placements().find((p) => p.content.type === 'image')!;
    expect(placementOf(image, 'image').content.oneAtATime).toBeDefined();
    expect(() => placementOf(image, 'application')).toThrow('placement shows image, not application');
  });
});

describe('upcoming (the pages from the next boundary)', () => {
  const withUpcoming = () => {
    const m = manifest();
    m.nextBoundaryAt = '2026-08-14T18:00:00Z';
    m.upcoming = { at: '2026-08-14T18:00:00.000Z', playlistId: 'pl_b', playlistRevision: 4, pages: [m.pages[0]] };
    return m;
  };

  it('accepts pages bound to this revision, at the next boundary', () => {
    const result = parseRuntimeManifest(withUpcoming(), ORIGIN);
    expect(result.ok).toBe(true);
    expect((result as { manifest: RuntimeManifest }).manifest.upcoming!.pages[0]!.id).toBe('welcome');
  });

  it('rejects an upcoming at another instant than nextBoundaryAt, or without one', () => {
    const m = withUpcoming();
    m.upcoming.at = '2026-08-14T18:00:01Z';
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain('upcoming.at: must equal nextBoundaryAt');
    const none = withUpcoming();
    delete none.nextBoundaryAt;
    expect(rejected(parseRuntimeManifest(none, ORIGIN)).join()).toContain('upcoming.at');
  });

  it('rejects application placements and media not bound to this revision', () => {
    const m = withUpcoming();
    m.upcoming.pages = [m.pages[2]];
    expect(rejected(parseRuntimeManifest(m, ORIGIN)).join()).toContain(
      'upcoming.pages.0.placements.0: upcoming pages carry no application placements',
    );
    const foreign = withUpcoming();
    foreign.upcoming.pages[0] = structuredClone(foreign.pages[0]);
    foreign.upcoming.pages[0].placements[0].content.items[0].src = '/content/v1/manifests/man_other/media/med_a';
    expect(rejected(parseRuntimeManifest(foreign, ORIGIN)).join()).toContain('upcoming.pages.0.placements.0.content');
  });
});
