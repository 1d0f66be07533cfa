// Realm separation (spec Authentication rule 1): a credential of one realm never authorizes another.
import { beforeAll, describe, expect, it } from 'vitest';
import { PLACEMENT_CAPABILITY_HEADER } from '../../sdk/contract/kv';
import { placementOf } from '../../sdk/contract/manifest';
import { DEVICE_COOKIE, RUNTIME_COOKIE } from '../pairing/pairing-cookies';
import { imagePlacement, page } from '../playlists/content.fixtures';
import { RELEASE_GRANT_COOKIE } from '../release-host/release-grant-cookie';
import { CookieJar, randomKey } from '../testing/harness';
import {
  appPage,
  createPlaylist,
  pairedPlayer,
  patchScreen,
  publishApp,
  storedMedia,
  useEnrolledServer,
  validManifest,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer();
let accountToken: string;

interface World {
  p: Player;
  applicationId: string;
  releaseHost: string;
  releaseCookie: string;
  handle: string;
  mediaUrl: string;
  packageUrl: string;
  launchUrl: string;
}
let world: World;

beforeAll(async () => {
  accountToken = (await env.server.createAccount()).token;
  const p = await pairedPlayer(env.server, env.token);
  const app = await publishApp(env.server, env.token, 'realms');
  const media = await storedMedia(env.server, env.tenantId, Buffer.from('realm media'));
  const doc = {
    name: 'Realms',
    pages: [appPage('board', app.releaseId), page('pic', [imagePlacement('pic', { by: 'id', media_id: media })])],
  };
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, doc),
  });
  const { manifest } = await validManifest(env.server, p);
  const board = placementOf(manifest.pages[0]!.placements[0]!, 'application');
  const pic = placementOf(manifest.pages[1]!.placements[0]!, 'image');
  const launch = await env.server.request('POST', board.content.launchUrl, { cookies: p.cookies });
  expect(launch.status).toBe(201);
  const url = new URL(launch.json().launch_url);
  const frame = new CookieJar();
  const consumed = await env.server.request('GET', url.pathname + url.search, {
    host: url.host,
    cookies: frame,
    headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'cross-site' },
  });
  expect(consumed.status).toBe(302);
  world = {
    p,
    applicationId: app.applicationId,
    releaseHost: url.host,
    releaseCookie: frame.get(url.host, RELEASE_GRANT_COOKIE)!,
    handle: board.capabilityHandle,
    mediaUrl: pic.content.items[0]!.src,
    packageUrl: board.content.package.url,
    launchUrl: board.content.launchUrl,
  };
});

function runtimeRoutes(): [string, string, unknown?][] {
  return [
    ['GET', '/runtime/v1/manifest'],
    ['GET', '/runtime/v1/events'],
    ['POST', '/runtime/v1/reports', { severity: 'info', code: 'x', context: {} }],
    ['POST', world.launchUrl],
    ['GET', world.mediaUrl],
    ['GET', world.packageUrl],
    ['GET', `/runtime/v1/apps/${world.applicationId}/kv`],
    ['PUT', `/runtime/v1/apps/${world.applicationId}/kv/k`, { value_base64: 'YQ==', content_type: 'text/plain' }],
  ];
}

/** A jar on the play host holding only the named cookies of the player. */
function only(...names: string[]): CookieJar {
  const jar = new CookieJar();
  for (const name of names) jar.set(env.server.host, name, world.p.cookies.get(env.server.host, name)!);
  return jar;
}

describe('realm separation', () => {
  it('a runtime or device cookie never authorizes the control plane', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/screens'],
      ['GET', '/api/v1/project'],
      ['GET', '/api/v1/account'],
      ['GET', `/api/v1/applications/${world.applicationId}/kv`],
      ['PUT', `/api/v1/applications/${world.applicationId}/kv/k`],
      ['GET', '/api/v1/events'],
    ] as const) {
      const res = await env.server.request(method, path, {
        cookies: world.p.cookies,
        headers: { [PLACEMENT_CAPABILITY_HEADER]: world.handle },
        idempotencyKey: randomKey(),
      });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('a runtime, device or bearer credential never authorizes a release host', async () => {
    const jar = new CookieJar();
    jar.set(world.releaseHost, RUNTIME_COOKIE, world.p.cookies.get(env.server.host, RUNTIME_COOKIE)!);
    jar.set(world.releaseHost, DEVICE_COOKIE, world.p.cookies.get(env.server.host, DEVICE_COOKIE)!);
    expect((await env.server.request('GET', '/', { host: world.releaseHost, cookies: jar })).status).toBe(403);
    expect((await env.server.request('GET', '/', { host: world.releaseHost, token: env.token })).status).toBe(403);
    const granted = new CookieJar();
    granted.set(world.releaseHost, RELEASE_GRANT_COOKIE, world.releaseCookie);
    expect((await env.server.request('GET', '/', { host: world.releaseHost, cookies: granted })).status).toBe(200);
  });

  it('a release grant never authorizes the runtime plane', async () => {
    const jar = new CookieJar();
    jar.set(env.server.host, RELEASE_GRANT_COOKIE, world.releaseCookie);
    for (const [method, path, json] of runtimeRoutes()) {
      const res = await env.server.request(method, path, {
        cookies: jar,
        json,
        headers: { [PLACEMENT_CAPABILITY_HEADER]: world.handle },
        idempotencyKey: randomKey(),
      });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('an account or project bearer never authorizes a runtime route, alone or beside the cookie', async () => {
    for (const token of [accountToken, env.token]) {
      for (const [method, path, json] of runtimeRoutes()) {
        const alone = await env.server.request(method, path, {
          token,
          json,
          headers: { [PLACEMENT_CAPABILITY_HEADER]: world.handle },
          idempotencyKey: randomKey(),
        });
        expect(alone.status, `${method} ${path} with a bearer`).toBe(401);
        const beside = await env.server.request(method, path, {
          token,
          cookies: world.p.cookies,
          json,
          headers: { [PLACEMENT_CAPABILITY_HEADER]: world.handle },
          idempotencyKey: randomKey(),
        });
        expect(beside.status, `${method} ${path} with a bearer and the cookie`).toBe(401);
      }
    }
  });

  it("an uploaded application's frame cannot ride the player's runtime cookie (same-site or foreign Origin)", async () => {
    const frameOrigin = `http://${world.releaseHost}`;
    for (const [method, path, json] of runtimeRoutes()) {
      const sameSite = await env.server.request(method, path, {
        cookies: world.p.cookies,
        json,
        headers: { 'sec-fetch-site': 'same-site', [PLACEMENT_CAPABILITY_HEADER]: world.handle },
        idempotencyKey: randomKey(),
      });
      expect(sameSite.status, `${method} ${path} same-site`).toBe(403);
      const foreign = await env.server.request(method, path, {
        cookies: world.p.cookies,
        json,
        headers: { origin: frameOrigin, [PLACEMENT_CAPABILITY_HEADER]: world.handle },
        idempotencyKey: randomKey(),
      });
      expect(foreign.status, `${method} ${path} from ${frameOrigin}`).toBe(403);
    }
    const own = await env.server.request('GET', '/runtime/v1/manifest', {
      cookies: world.p.cookies,
      headers: { 'sec-fetch-site': 'same-origin', origin: env.server.origin },
    });
    expect(own.status).toBe(200);
  });

  it('a placement capability alone authorizes nothing', async () => {
    const res = await env.server.request('GET', `/runtime/v1/apps/${world.applicationId}/kv`, {
      headers: { [PLACEMENT_CAPABILITY_HEADER]: world.handle },
    });
    expect(res.status).toBe(401);
  });

  it('the device cookie alone opens only the package (and device sessions), not the runtime routes', async () => {
    const device = only(DEVICE_COOKIE);
    expect((await env.server.request('GET', world.packageUrl, { cookies: device })).status).toBe(200);
    for (const [method, path, json] of runtimeRoutes().filter(([, path]) => path !== world.packageUrl)) {
      const res = await env.server.request(method, path, {
        cookies: device,
        json,
        headers: { [PLACEMENT_CAPABILITY_HEADER]: world.handle },
        idempotencyKey: randomKey(),
      });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect((await env.server.request('GET', '/runtime/v1/manifest', { cookies: only(RUNTIME_COOKIE) })).status).toBe(
      200,
    );
  });
});
