// Fixture for the player's browser tests: one HTTP server on 127.0.0.1 answering as the player
// origin (a test page loading the engine bundle built from source, and media under the manifest
// media route) and as a release host (an application page speaking the SDK bridge, and the
// server's /.marquee/player-origin answer). Media answers can be delayed or refused per media id,
// and every media request is counted. Further player/release host pairs (`sites`) let a test put
// release hosts on the player's own site or another one; Chromium resolves them to 127.0.0.1.
// A failed test prints what its pages logged (every frame's console, the engine's log) and the
// fixture's last requests, so a failure seen once can be read rather than guessed at.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { beforeEach } from 'vitest';
import { buildBridgeBundles } from '../../../sdk/testing/bridge-fixture';
import { launchChromium, recordConsole, timeOfDay } from '../../../sdk/testing/chromium';
import { pageFixture } from '../playback/manifest.fixtures';
import { PLAYER_ORIGIN_PATH } from '../../../sdk/contract/archive-paths';
import {
  CAPABILITY_HANDLE_MIN_LENGTH,
  launchRoute,
  mediaRoute,
  packageRoute,
  WEBAPP_PACKAGE_CONTENT_TYPE,
  WEBAPP_PACKAGE_VERSION,
  type RuntimeManifest,
  type RuntimePage,
  type RuntimePlacement,
} from '../../../sdk/contract/manifest';
import type { Mounted, Records, Sample } from './engine-entry';

export const RELEASE_LABEL = 'feedfacefeedfacefeedfacefeedfacefeedface';
const SHA = 'a'.repeat(64);
const playerDir = path.resolve(import.meta.dirname, '..');

interface Output {
  output: { type: string; code?: string }[];
}

async function buildEngineBundle(): Promise<string> {
  const result = (await build({
    configFile: false,
    root: playerDir,
    publicDir: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      target: 'es2022',
      lib: { entry: path.join(playerDir, 'testing/engine-entry.ts'), formats: ['es'], fileName: () => 'engine.mjs' },
    },
  })) as Output | Output[];
  const chunk = (Array.isArray(result) ? result[0]! : result).output.find((o) => o.type === 'chunk');
  if (!chunk?.code) throw new Error('the engine bundle produced no chunk');
  return chunk.code;
}

export interface MediaFile {
  body: Buffer;
  type: string;
  /** Answer this status instead (a refusal, a server error). */
  status?: number;
  /** Hold the answer this long. */
  delayMs?: number;
}

/** A player host and the release host whose frames trust it. */
export interface SitePair {
  player: string;
  release: string;
}

/** The default pair, the shape of the server's default configuration. */
/** The test page's globals: the engine-entry bundle (`t`) and the engine it mounted (`m`). */
export type EngineTestWindow = { t: typeof import('./engine-entry'); m: Mounted };

/** How many of the fixture's last requests a failure report shows. */
const REQUESTS_KEPT = 60;

export const LOCAL_SITES: SitePair = { player: 'localhost', release: `${RELEASE_LABEL}.release.localhost` };

export class PlayerFixture {
  readonly media = new Map<string, MediaFile>();
  /** Media requests by media id. */
  readonly mediaRequests = new Map<string, number>();
  private server!: http.Server;
  private browser!: Browser;
  private engine = '';
  private runtimeScript = '';
  private readonly css = fs.readFileSync(path.join(playerDir, 'app/player.css'), 'utf8');
  port = 0;
  private readonly sites: SitePair[];
  /** Console lines of each page opened and not yet closed, by page. */
  private readonly consoles = new Map<Page, string[]>();
  /** The last requests the fixture answered: when, host, path and status. */
  private readonly requests: string[] = [];

  /** `sites`: the pairs to answer as; the first is `origin` and `releaseOrigin`. */
  constructor(sites: SitePair[] = [LOCAL_SITES]) {
    this.sites = sites;
  }

  get origin(): string {
    return this.originOf(this.sites[0]!.player);
  }

  get releaseOrigin(): string {
    return this.originOf(this.sites[0]!.release);
  }

  /** The http origin of a host on this fixture's port. */
  originOf(host: string): string {
    return `http://${host}:${this.port}`;
  }

  async start(): Promise<void> {
    const [engine, bridge] = await Promise.all([buildEngineBundle(), buildBridgeBundles()]);
    this.engine = engine;
    this.runtimeScript = bridge.classic;
    this.server = http.createServer((req, res) => this.route(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    // Chromium resolves *.localhost itself; other test hosts are mapped to the fixture.
    const mapped = [...new Set(this.sites.flatMap((s) => [s.player, s.release]))].filter(
      (h) => h !== 'localhost' && !h.endsWith('.localhost'),
    );
    const resolver =
      mapped.length > 0 ? [`--host-resolver-rules=${mapped.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`] : [];
    this.browser = await launchChromium(resolver);
  }

  async stop(): Promise<void> {
    await this.browser?.close();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  get chromium(): Browser {
    return this.browser;
  }

  /** A fresh page at the test page (on `playerOrigin`, default `origin`), with the bundle loaded as `window.t`. */
  async open(viewport = { width: 960, height: 540 }, playerOrigin = this.origin): Promise<Page> {
    const context = await this.browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('pageerror', (error) => console.error(`[page] ${error.message}`));
    // Every frame's console, the application frames' included: where a frame stopped, it said so.
    this.consoles.set(page, recordConsole(page));
    page.on('close', () => this.consoles.delete(page));
    await page.goto(`${playerOrigin}/engine.html`);
    await page.waitForFunction(() => (window as unknown as { loaded?: boolean }).loaded === true);
    return page;
  }

  /** Opens a test page and starts playing `manifest` on a playback clock that starts at `start`. */
  async play(
    manifest: RuntimeManifest,
    start = Date.parse('2026-03-02T11:00:00Z'),
    launchPath?: string,
  ): Promise<Page> {
    const p = await this.open();
    await p.evaluate(
      ({ m, start, releaseOrigin, launchPath }) => {
        const w = window as unknown as EngineTestWindow;
        w.m = w.t.mountEngine({ start, releaseOrigin, launchPath });
        w.m.engine.setManifest(m);
      },
      { m: manifest, start, releaseOrigin: this.releaseOrigin, launchPath },
    );
    return p;
  }

  /** What was on glass, one sample per animation frame since the engine was mounted. */
  samples(p: Page): Promise<Sample[]> {
    return p.evaluate(() => (window as unknown as EngineTestWindow).m.samples);
  }

  /** What the engine told its host (activations, launches, advances, logs). */
  records(p: Page): Promise<Records> {
    return p.evaluate(() => (window as unknown as EngineTestWindow).m.records);
  }

  /**
   * Registers, for the calling test file, a report printed when a test fails: for each page the
   * test left open, its console and its engine's log, then the fixture's last requests.
   */
  reportFailures(): void {
    beforeEach(({ onTestFailed }) => {
      onTestFailed(async () => {
        for (const [page, lines] of this.consoles) {
          const logs = await page
            .evaluate(() => (window as unknown as Partial<EngineTestWindow>).m?.records.logs ?? [])
            .catch((error: unknown) => [`(the engine's log could not be read: ${String(error)})`]);
          console.error(
            [`--- ${page.url()}: console`, ...lines, '--- engine log', ...logs].map((l) => `  ${l}`).join('\n'),
          );
        }
        console.error(['--- last requests', ...this.requests].map((l) => `  ${l}`).join('\n'));
      });
    });
  }

  /** Saves what is on glass under e2e/artifacts (ignored by git), to look at. */
  async screenshot(page: Page, name: string): Promise<void> {
    const dir = path.resolve(playerDir, '..', '..', 'e2e', 'artifacts');
    fs.mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, name) });
  }

  private send(res: http.ServerResponse, status: number, body: string | Buffer, type: string): void {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const asked = `${timeOfDay()} ${req.method} ${req.headers.host} ${req.url}`;
    res.on('close', () => {
      this.requests.push(`${asked} -> ${res.writableFinished ? res.statusCode : 'closed unfinished'}`);
      if (this.requests.length > REQUESTS_KEPT) this.requests.shift();
    });
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', 'http://fixture.invalid');
    const released = this.sites.find((s) => s.release === host);
    if (this.sites.some((s) => s.player === host)) {
      if (url.pathname === '/engine.html') {
        return this.send(
          res,
          200,
          `<!doctype html><html><head><link rel="stylesheet" href="/player.css"></head><body><div id="root"></div><script type="module">import * as t from '/engine.mjs'; window.t = t; window.loaded = true;</script></body></html>`,
          'text/html; charset=utf-8',
        );
      }
      if (url.pathname === '/engine.mjs') return this.send(res, 200, this.engine, 'text/javascript; charset=utf-8');
      if (url.pathname === '/player.css') return this.send(res, 200, this.css, 'text/css; charset=utf-8');
      if (url.pathname === '/.health') return this.send(res, 200, 'ok', 'text/plain');
      const media = /^\/content\/v1\/manifests\/[^/]+\/media\/([^/]+)$/.exec(url.pathname);
      if (media) return this.serveMedia(req, res, media[1]!);
    } else if (released) {
      // As the server answers it (server/release-host/release-host.routes.ts).
      if (url.pathname === PLAYER_ORIGIN_PATH) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
        });
        return void res.end(JSON.stringify({ player_origin: this.originOf(released.player) }));
      }
      if (url.pathname === '/app.html') {
        const launch = url.searchParams.get('launch') ?? '0';
        return this.send(
          res,
          200,
          `<!doctype html><html><head><script src="/_marquee/runtime.js" data-marquee-sdk="1"></script></head>
          <body style="margin:0;min-height:100vh;background:hsl(${(Number(launch) * 67) % 360} 60% 35%);color:#fff;font:48px sans-serif;display:grid;place-items:center">launch ${launch}
          <script>window.contexts = []; window.viewports = []; marquee.onContext((c) => contexts.push(c.generation)); marquee.onViewportChange((v) => viewports.push(v)); marquee.ready();</script></body></html>`,
          'text/html; charset=utf-8',
        );
      }
      // A release page that never arrives: the frame never loads (the connection closes at stop).
      if (url.pathname === '/never.html') return void res.writeHead(200, { 'content-type': 'text/html' });
      // A release page without the SDK: it loads, and never answers the player's handshake.
      if (url.pathname === '/silent.html')
        return this.send(
          res,
          200,
          '<!doctype html><title>silent</title><p>no bridge here</p>',
          'text/html; charset=utf-8',
        );
      if (url.pathname === '/_marquee/runtime.js')
        return this.send(res, 200, this.runtimeScript, 'text/javascript; charset=utf-8');
    }
    this.send(res, 404, 'not found', 'text/plain');
  }

  private serveMedia(req: http.IncomingMessage, res: http.ServerResponse, mediaId: string): void {
    this.mediaRequests.set(mediaId, (this.mediaRequests.get(mediaId) ?? 0) + 1);
    const file = this.media.get(mediaId);
    const answer = () => {
      if (!file) return this.send(res, 404, 'no such media', 'text/plain');
      if (file.status !== undefined) return this.send(res, file.status, 'refused', 'text/plain');
      // Single byte ranges, as media elements ask for them.
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Math.min(Number(range[2]), file.body.length - 1) : file.body.length - 1;
        res.writeHead(206, {
          'content-type': file.type,
          'content-range': `bytes ${start}-${end}/${file.body.length}`,
          'accept-ranges': 'bytes',
          'content-length': end - start + 1,
        });
        return void res.end(file.body.subarray(start, end + 1));
      }
      res.writeHead(200, { 'content-type': file.type, 'accept-ranges': 'bytes', 'content-length': file.body.length });
      res.end(file.body);
    };
    if (file?.delayMs) setTimeout(answer, file.delayMs);
    else answer();
  }
}

// ---- Manifests for the browser tests (valid by parseRuntimeManifest on the fixture's origin).

const fullRect = { x: 0, y: 0, width: 1920, height: 1080 };

export function images(
  id: string,
  mediaIds: string[],
  options: { oneAtATime?: boolean; dwellMs?: number; revision?: string } = {},
): RuntimePlacement {
  return {
    id,
    content: {
      type: 'image',
      items: mediaIds.map((mediaId) => ({
        mediaId,
        src: mediaRoute(options.revision ?? 'man_test', mediaId),
        intrinsicSize: { width: 320, height: 180 },
        sha256: SHA,
        bytes: 1000,
        contentType: 'image/png',
      })),
      oneAtATime: options.oneAtATime ?? false,
      grantId: 'gr_test',
      ...(options.dwellMs === undefined ? {} : { dwellMs: options.dwellMs }),
    },
    rect: fullRect,
    layer: 0,
    contentFit: 'cover',
  };
}

export function videos(
  id: string,
  mediaIds: string[],
  options: { oneAtATime?: boolean; revision?: string } = {},
): RuntimePlacement {
  return {
    id,
    content: {
      type: 'video',
      items: mediaIds.map((mediaId) => ({
        mediaId,
        src: mediaRoute(options.revision ?? 'man_test', mediaId),
        intrinsicSize: { width: 320, height: 180 },
        sha256: SHA,
        bytes: 1000,
        contentType: 'video/webm',
      })),
      oneAtATime: options.oneAtATime ?? false,
      muted: true,
      loop: false,
      grantId: 'gr_test',
    },
    rect: fullRect,
    layer: 0,
    contentFit: 'contain',
  };
}

/**
 * A full-frame application placement of the test release on `origin` (a fixture's release host, a
 * frame speaking the SDK bridge), named in manifest `revision`.
 */
export function application(
  id: string,
  origin: string,
  options: { revision?: string; grantId?: string; controller?: boolean; capabilityExpiresAt?: string } = {},
): RuntimePlacement {
  const revision = options.revision ?? 'man_test';
  return {
    id,
    content: {
      type: 'application',
      applicationId: 'app_test000000001',
      releaseId: 'rel_test000000001',
      launchUrl: launchRoute(revision, 'rel_test000000001'),
      origin,
      protocol: '1',
      grantId: options.grantId ?? 'gr_first',
      package: {
        version: WEBAPP_PACKAGE_VERSION,
        url: packageRoute(revision, 'rel_test000000001'),
        bytes: 10,
        sha256: 'b'.repeat(64),
        entrypoint: 'index.html',
        contentType: WEBAPP_PACKAGE_CONTENT_TYPE,
      },
    },
    rect: { x: 0, y: 0, width: 1920, height: 1080 },
    layer: 0,
    contentFit: 'fill',
    ...(options.controller === undefined ? {} : { controller: options.controller }),
    capabilityHandle: 'c'.repeat(CAPABILITY_HANDLE_MIN_LENGTH),
    capabilityExpiresAt: options.capabilityExpiresAt ?? '2026-03-02T12:00:00Z',
  };
}

/** A page of `placements` that plays for a second unless `overrides` say otherwise. */
export function page(id: string, placements: RuntimePlacement[], overrides: Partial<RuntimePage> = {}): RuntimePage {
  return pageFixture(id, { advance: { mode: 'duration', afterMs: 1000 }, placements, ...overrides });
}

export function manifest(pages: RuntimePage[], overrides: Partial<RuntimeManifest> = {}): RuntimeManifest {
  return {
    schemaVersion: 2,
    manifestRevision: 'man_test',
    grantId: 'gr_test',
    contentGeneration: 1,
    screenId: 'scr_test',
    screenLabel: 'Test',
    playlistRevision: 1,
    generatedAt: '2026-03-02T11:00:00Z',
    pages,
    ...overrides,
  };
}
