// The player's own session routes beside the manifest: stage chrome, and unpairing a browser player.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeDevice } from '../pairing/native.fixtures';
import { DEVICE_COOKIE, PAIRING_COOKIE, RUNTIME_COOKIE } from '../pairing/pairing-cookies';
import { TestServer } from '../testing/harness';
import { anonymousPlayer, getManifest, pairedPlayer } from './runtime.fixtures';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await TestServer.start();
  ({ token } = await server.enroll());
});
afterAll(async () => server.stop());

describe('GET /runtime/v1/chrome', () => {
  it('answers version 1 with no banner, never cached, to a runtime session (a native one too)', async () => {
    const player = await pairedPlayer(server, token);
    const res = await server.request('GET', '/runtime/v1/chrome', { cookies: player.cookies });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toEqual({ schema_version: 1, banner: null });
    expect(res.headers['cache-control']).toBe('private, no-store');
    const device = await NativeDevice.create(server);
    await device.pair(token);
    expect((await device.runtime('GET', '/runtime/v1/chrome')).json()).toEqual({ schema_version: 1, banner: null });
    expect((await server.request('GET', '/runtime/v1/chrome')).status).toBe(401);
  });
});

describe('POST /runtime/v1/unpair', () => {
  it('tombstones the paired browser player’s screen and expires its three cookies', async () => {
    const player = await pairedPlayer(server, token);
    const res = await server.request('POST', '/runtime/v1/unpair', { cookies: player.cookies });
    expect(res.status, res.text).toBe(204);
    expect(res.headers['cache-control']).toBe('no-store');
    const cleared = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    for (const name of [RUNTIME_COOKIE, DEVICE_COOKIE, PAIRING_COOKIE]) {
      expect(
        cleared.some((c) => c.startsWith(`${name}=;`) && c.includes('Max-Age=0')),
        name,
      ).toBe(true);
    }
    expect((await server.request('GET', `/api/v1/screens/${player.screen.id}`, { token })).status).toBe(404);
    const deleted = await server.services.store.db
      .selectFrom('events')
      .select(['type', 'message'])
      .where('resource_id', '=', player.screen.id)
      .where('type', '=', 'screen.deleted')
      .execute();
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.message).toContain('unpaired by its player');
    // The session it used is gone with the screen (even were the cookies kept).
    expect((await getManifest(server, player)).status).toBe(401);
    expect((await server.request('POST', '/runtime/v1/unpair', { cookies: player.cookies })).status).toBe(401);
  });

  it('is forbidden to an anonymous session, and refused to a native identity with screen_archive_required', async () => {
    const player = await pairedPlayer(server, token);
    const viewer = await anonymousPlayer(server, player.screen);
    expect((await server.request('POST', '/runtime/v1/unpair', { cookies: viewer.cookies })).status).toBe(403);
    const device = await NativeDevice.create(server);
    const screen = await device.pair(token);
    const refused = await device.runtime('POST', '/runtime/v1/unpair');
    expect(refused.status).toBe(409);
    expect(refused.json().code).toBe('screen_archive_required');
    expect((await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).json().state).toBe('active');
    expect((await getManifest(server, player)).status).toBe(200);
  });
});
