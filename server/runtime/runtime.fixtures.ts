// Test helpers for the runtime plane: paired and anonymous players with their cookie jars, media
// with real bytes in the blob store, playlists assigned to screens, and manifests as players get them.
import crypto from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  MANIFEST_FEATURE_UPCOMING,
  MANIFEST_FEATURES_HEADER,
  parseRuntimeManifest,
  type RuntimeManifest,
} from '../../sdk/contract/manifest';
import { archiveOf, sampleApp, uploadHeadersOf } from '../applications/archive-fixtures';
import { TestClock } from '../clock';
import { pairActiveScreen } from '../pairing/pairing.fixtures';
import { recordReleasePackage, writeReleasePackage } from '../applications/release-package';
import { canvas, fullRect, insertMedia, insertRelease } from '../playlists/content.fixtures';
import {
  CookieJar,
  randomKey,
  TestServer,
  type RequestOptions,
  type TestResponse,
  type TestServerOptions,
} from '../testing/harness';

/** One server and one tenant for a test file, started before its tests and stopped after them. */
export interface EnrolledServer {
  readonly clock: TestClock;
  readonly server: TestServer;
  /** The tenant's bearer: a project's (enrolled) or an account's. */
  readonly token: string;
  readonly tenantId: string;
  /** A new paired player, a minute later than the last (pairing budgets are per minute). */
  player(): Promise<Player>;
}

export interface EnrolledServerOptions {
  /** The test clock's start (default 2026-11-21T12:00:00Z). */
  at?: string;
  /** Model P project (default) or Model A account. */
  tenant?: 'project' | 'account';
  /** Runs after the services exist and before the server listens. */
  beforeListen?: TestServerOptions['beforeListen'];
  /** Configuration beyond the harness defaults (trusted proxies, to test per-IP budgets). */
  config?: TestServerOptions['config'];
}

/**
 * Registers the file's beforeAll/afterAll: a server on a test clock with one enrolled tenant. The
 * clock is there at once; the server, token and tenant once the file's tests run.
 */
export function useEnrolledServer(options: EnrolledServerOptions = {}): EnrolledServer {
  const clock = new TestClock(options.at ?? '2026-11-21T12:00:00Z');
  let started: { server: TestServer; token: string; tenantId: string } | undefined;
  const get = () => {
    if (!started) throw new Error('the enrolled server starts in beforeAll; use it inside tests and hooks');
    return started;
  };
  beforeAll(async () => {
    const server = await TestServer.start({ clock, beforeListen: options.beforeListen, config: options.config });
    const tenant =
      options.tenant === 'account'
        ? await server.createAccount().then((a) => ({ token: a.token, tenantId: a.accountId }))
        : await server.enroll().then((p) => ({ token: p.token, tenantId: p.projectId }));
    started = { server, ...tenant };
  });
  afterAll(async () => started?.server.stop());
  return {
    clock,
    get server() {
      return get().server;
    },
    get token() {
      return get().token;
    },
    get tenantId() {
      return get().tenantId;
    },
    player() {
      clock.advance(61_000);
      return pairedPlayer(get().server, get().token);
    },
  };
}

export interface Player {
  screen: { id: string; public_id: string; [key: string]: unknown };
  cookies: CookieJar;
  session: { paired: boolean; capabilities: string[]; event_cursor: string; public_url: string };
}

/** Pairs a new active screen and opens a paired runtime session, as the web player does. */
export async function pairedPlayer(server: TestServer, token: string): Promise<Player> {
  const { screen, cookies } = await pairActiveScreen(server, token);
  const res = await server.request('POST', '/runtime/v1/device-sessions', { cookies });
  expect(res.status, res.text).toBe(201);
  return { screen, cookies, session: res.json() };
}

/** Opens an anonymous (public-id) runtime session in a fresh jar. */
export async function anonymousPlayer(server: TestServer, screen: Player['screen']): Promise<Player> {
  const cookies = new CookieJar();
  const res = await server.request('POST', '/runtime/v1/sessions', { cookies, json: { public_id: screen.public_id } });
  expect(res.status, res.text).toBe(201);
  return { screen, cookies, session: res.json() };
}

export function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

export interface StoredMediaOptions {
  kind?: 'image' | 'video' | 'audio';
  contentType?: string;
  tag?: string | null;
  width?: number;
  height?: number;
  durationMs?: number | null;
  codecs?: string | null;
}

/** A ready media whose bytes are really in the blob store (verification is the media feature's test). */
export function storedMedia(
  server: TestServer,
  tenantId: string,
  bytes: Buffer,
  options: StoredMediaOptions = {},
): Promise<string> {
  const { contentType, durationMs, ...rest } = options;
  return insertMedia(server, tenantId, { ...rest, bytes, content_type: contentType, duration_ms: durationMs });
}

export function applicationPlacement(id: string, releaseId: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    content: { type: 'application', release_id: releaseId },
    rect: fullRect,
    layer: 0,
    content_fit: 'fill',
    ...extra,
  };
}

export function videoPlacement(id: string, mediaId: string) {
  return {
    id,
    content: { type: 'video', selector: { by: 'id', media_id: mediaId } },
    rect: fullRect,
    layer: 0,
    content_fit: 'contain',
  };
}

export function appPage(id: string, releaseId: string) {
  return {
    id,
    canvas,
    transition: { type: 'crossfade', duration_ms: 200 },
    advance: { mode: 'application', max_ms: 60_000 },
    placements: [applicationPlacement('board', releaseId, { controller: true })],
  };
}

/** Creates a playlist and returns its id. */
export async function createPlaylist(server: TestServer, token: string, doc: unknown): Promise<string> {
  const res = await server.request('POST', '/api/v1/playlists', { token, json: doc, idempotencyKey: randomKey() });
  expect(res.status, res.text).toBe(201);
  return res.json().id;
}

export async function patchScreen(
  server: TestServer,
  token: string,
  screenId: string,
  patch: Record<string, unknown>,
): Promise<TestResponse> {
  const res = await server.request('PATCH', `/api/v1/screens/${screenId}`, {
    token,
    json: patch,
    idempotencyKey: randomKey(),
  });
  expect(res.status, res.text).toBe(200);
  return res;
}

/** GET /runtime/v1/manifest with the player's cookies. */
export function getManifest(server: TestServer, player: Player, options: RequestOptions = {}): Promise<TestResponse> {
  return server.request('GET', '/runtime/v1/manifest', {
    cookies: player.cookies,
    ...options,
    // As this build's player asks (it plays `upcoming`).
    headers: { [MANIFEST_FEATURES_HEADER]: MANIFEST_FEATURE_UPCOMING, ...options.headers },
  });
}

/** The manifest as the player validates it; fails the test when the player would reject it. */
export async function validManifest(
  server: TestServer,
  player: Player,
): Promise<{ manifest: RuntimeManifest; etag: string }> {
  const res = await getManifest(server, player);
  expect(res.status, res.text).toBe(200);
  const parsed = parseRuntimeManifest(res.json(), server.origin);
  if (!parsed.ok) throw new Error(`the player would reject this manifest: ${JSON.stringify(parsed.issues)}`);
  return { manifest: parsed.manifest, etag: res.headers.etag as string };
}

export async function report(server: TestServer, player: Player, body: unknown): Promise<TestResponse> {
  return server.request('POST', '/runtime/v1/reports', { cookies: player.cookies, json: body });
}

export async function activate(server: TestServer, player: Player, manifestRevision: string): Promise<void> {
  const res = await report(server, player, {
    severity: 'info',
    code: 'manifest.activated',
    context: { manifest_revision: manifestRevision },
  });
  expect(res.status, res.text).toBe(202);
}

/** A ready release inserted directly, with its package stored as publication would (no files: an empty tar). */
export async function packagedRelease(
  server: TestServer,
  tenantId: string,
): Promise<{ applicationId: string; releaseId: string }> {
  const ids = await insertRelease(server, tenantId);
  const blob = await writeReleasePackage(server.services, ids.releaseId);
  await recordReleasePackage(
    server.services.store.db,
    { id: ids.releaseId, tenant_id: tenantId },
    blob,
    server.clock.now(),
  );
  return ids;
}

/** Uploads and publishes a small real application (files and package in the blob store); returns its ids. */
export async function publishApp(
  server: TestServer,
  token: string,
  marker = 'hello',
): Promise<{ applicationId: string; releaseId: string; hostLabel: string }> {
  const fixture = archiveOf(sampleApp(marker));
  server.clock.advance(61_000); // uploads are budgeted per minute
  const res = await server.request('POST', '/api/v1/applications', {
    token,
    idempotencyKey: randomKey(),
    body: fixture.body,
    headers: uploadHeadersOf(fixture.declaration),
  });
  expect(res.status, res.text).toBe(202);
  await server.services.operations.idle();
  await server.services.packageBuilds.idle(); // queued when the release was published
  const release = await server.services.store.db
    .selectFrom('releases')
    .selectAll()
    .where('id', '=', res.json().release_id)
    .executeTakeFirstOrThrow();
  expect(release.state).toBe('ready');
  return { applicationId: release.application_id, releaseId: release.id, hostLabel: release.host_label };
}
