// The native session (`Authorization: Marquee-Session …`) on every runtime and content route the
// reference contract lists with nativeSessionAuthorization, and the refusal of a request that
// carries it together with the player's cookies.
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { PLACEMENT_CAPABILITY_HEADER } from '../../sdk/contract/kv';
import type { RuntimeApplicationPlacement, RuntimeImagePlacement } from '../../sdk/contract/manifest';
import { NativeDevice, readStream } from '../pairing/native.fixtures';
import { imagePlacement, page } from '../playlists/content.fixtures';
import { randomKey } from '../testing/harness';
import { appPage, createPlaylist, patchScreen, publishApp, storedMedia, useEnrolledServer } from './runtime.fixtures';

const env = useEnrolledServer();
const { clock } = env;
const BYTES = crypto.randomBytes(2000);

interface Shown {
  d: NativeDevice;
  screenId: string;
  rev: string;
  mediaId: string;
  applicationId: string;
  releaseId: string;
  handle: string;
  launchUrl: string;
}
let shown: Shown;

beforeAll(async () => {
  clock.advance(61_000);
  const d = await NativeDevice.create(env.server, { platform: 'linux' });
  const screen = await d.pair(env.token);
  const mediaId = await storedMedia(env.server, env.tenantId, BYTES);
  const app = await publishApp(env.server, env.token, 'native app');
  const playlistId = await createPlaylist(env.server, env.token, {
    name: 'Native',
    pages: [page('still', [imagePlacement('hero', { by: 'id', media_id: mediaId })]), appPage('board', app.releaseId)],
  });
  await patchScreen(env.server, env.token, screen.id, { playlist_id: playlistId });
  const res = await d.runtime('GET', '/runtime/v1/manifest');
  expect(res.status, res.text).toBe(200);
  const manifest = res.json();
  const placement = manifest.pages[1].placements[0] as RuntimeApplicationPlacement;
  shown = {
    d,
    screenId: screen.id,
    rev: manifest.manifestRevision,
    mediaId,
    applicationId: app.applicationId,
    releaseId: app.releaseId,
    handle: placement.capabilityHandle,
    launchUrl: placement.content.launchUrl,
  };
  expect((manifest.pages[0].placements[0] as RuntimeImagePlacement).content.items[0]!.mediaId).toBe(mediaId);
});

/** Each route the contract lists with nativeSessionAuthorization, as the native player calls it. */
const routes: Array<{
  name: string;
  call: (headers: Record<string, string>) => Promise<{ status: number }>;
  ok: number;
}> = [
  { name: 'GET manifest', ok: 200, call: (h) => shown.d.runtime('GET', '/runtime/v1/manifest', { headers: h }) },
  {
    name: 'GET events',
    ok: 200,
    call: (h) => readStream(env.server, '/runtime/v1/events', { ...shown.d.sessionHeaders(), ...h }, 300),
  },
  {
    name: 'POST reports',
    ok: 202,
    call: (h) =>
      shown.d.runtime('POST', '/runtime/v1/reports', {
        headers: h,
        json: { severity: 'info', code: 'manifest.activated', context: { manifest_revision: shown.rev } },
      }),
  },
  {
    name: 'POST launch',
    ok: 201,
    call: (h) => shown.d.runtime('POST', new URL(shown.launchUrl, env.server.origin).pathname, { headers: h }),
  },
  {
    name: 'GET media',
    ok: 200,
    call: (h) => shown.d.runtime('GET', `/content/v1/manifests/${shown.rev}/media/${shown.mediaId}`, { headers: h }),
  },
  {
    name: 'GET package',
    ok: 200,
    call: (h) =>
      shown.d.runtime('GET', `/content/v1/manifests/${shown.rev}/releases/${shown.releaseId}/package`, { headers: h }),
  },
  {
    name: 'GET runtime KV list',
    ok: 200,
    call: (h) =>
      shown.d.runtime('GET', `/runtime/v1/apps/${shown.applicationId}/kv`, {
        headers: { [PLACEMENT_CAPABILITY_HEADER]: shown.handle, ...h },
      }),
  },
  {
    name: 'PUT runtime KV',
    ok: 200,
    call: (h) =>
      env.server.request('PUT', `/runtime/v1/apps/${shown.applicationId}/kv/visits`, {
        headers: { ...shown.d.sessionHeaders(), [PLACEMENT_CAPABILITY_HEADER]: shown.handle, ...h },
        idempotencyKey: randomKey(),
        json: { value_base64: Buffer.from('1').toString('base64'), content_type: 'text/plain' },
      }),
  },
];

describe('the native session', () => {
  for (const route of routes) {
    it(`authorizes ${route.name}`, async () => {
      const res = await route.call({});
      expect(res.status, JSON.stringify(res)).toBe(route.ok);
    });
  }

  it('delivers the media bytes and the package the manifest names', async () => {
    const media = await shown.d.runtime('GET', `/content/v1/manifests/${shown.rev}/media/${shown.mediaId}`, {
      headers: { range: 'bytes=10-19' },
    });
    expect(media.status).toBe(206);
    expect(media.body.equals(BYTES.subarray(10, 20))).toBe(true);
    // Node's fetch adds Sec-Fetch-Mode to every request: a native client's Fetch Metadata is not judged.
    const fromNode = await shown.d.runtime('GET', `/content/v1/manifests/${shown.rev}/media/${shown.mediaId}`, {
      headers: { 'sec-fetch-mode': 'cors' },
    });
    expect(fromNode.status).toBe(200);
  });

  for (const route of routes) {
    it(`is refused on ${route.name} when the player's cookies come with it`, async () => {
      const res = await route.call({ cookie: '__Host-marquee-runtime=abc; __Host-marquee-device=def' });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    });
  }

  it('is refused when forged, expired or of a deleted session', async () => {
    const forged = await env.server.request('GET', '/runtime/v1/manifest', {
      headers: { authorization: `Marquee-Session mqs_${'A'.repeat(80)}` },
    });
    expect(forged.status).toBe(401);
    const valid = shown.d.sessionCredential!;
    const tampered = `${valid.slice(0, 10)}${valid[10] === 'A' ? 'B' : 'A'}${valid.slice(11)}`;
    const changed = await env.server.request('GET', '/runtime/v1/manifest', {
      headers: { authorization: `Marquee-Session ${tampered}` },
    });
    expect(changed.status).toBe(401);
  });

  it('is not a bearer: the control plane refuses it', async () => {
    const res = await shown.d.runtime('GET', `/api/v1/screens/${shown.screenId}`);
    expect(res.status).toBe(401);
  });

  it('ends after 24 hours: a new one is minted from a new proof (last: moves the clock)', async () => {
    clock.advance(24 * 3600_000 + 1000);
    expect((await shown.d.runtime('GET', '/runtime/v1/manifest')).status).toBe(401);
    await shown.d.mintSession();
    expect((await shown.d.runtime('GET', '/runtime/v1/manifest')).status).toBe(200);
  });
});
