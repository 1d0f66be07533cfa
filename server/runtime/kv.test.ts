import { describe, expect, it } from 'vitest';
import { PLACEMENT_CAPABILITY_HEADER } from '../../sdk/contract/kv';
import type { RuntimeApplicationPlacement } from '../../sdk/contract/manifest';
import { insertRelease } from '../playlists/content.fixtures';
import { randomKey, type RequestOptions } from '../testing/harness';
import { SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';
import {
  PLACEMENT_CAPABILITY_TTL_MS,
  sealPlacementCapability,
  unsealPlacementCapability,
  type PlacementCapability,
} from './placement-capability';
import {
  anonymousPlayer,
  appPage,
  createPlaylist,
  getManifest,
  packagedRelease,
  patchScreen,
  useEnrolledServer,
  validManifest,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer();
const { clock } = env;

const text = (s: string) => ({ value_base64: Buffer.from(s).toString('base64'), content_type: 'text/plain' });

interface Placed {
  p: Player;
  applicationId: string;
  releaseId: string;
  rev: string;
  handle: string;
}

async function handleOf(p: Player): Promise<{ handle: string; rev: string }> {
  const res = await getManifest(env.server, p);
  expect(res.status, res.text).toBe(200);
  const placement = res.json().pages[0].placements[0] as RuntimeApplicationPlacement;
  return { handle: placement.capabilityHandle, rev: res.json().manifestRevision };
}

/** A paired player whose manifest shows one application placement ("board" on page "board"). */
async function placed(): Promise<Placed> {
  const p = await env.player();
  const { applicationId, releaseId } = await packagedRelease(env.server, env.tenantId);
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
  });
  return { p, applicationId, releaseId, ...(await handleOf(p)) };
}

function kv(
  method: string,
  x: { p: Player; applicationId: string; handle?: string },
  key: string | undefined,
  options: RequestOptions = {},
) {
  const base = `/runtime/v1/apps/${x.applicationId}/kv`;
  const headers: Record<string, string> = {
    ...(x.handle !== undefined ? { [PLACEMENT_CAPABILITY_HEADER]: x.handle } : {}),
    ...(options.headers as Record<string, string>),
  };
  const writes = method === 'PUT' || method === 'DELETE';
  return env.server.request(method, key === undefined ? base : `${base}/${encodeURIComponent(key)}`, {
    cookies: x.p.cookies,
    ...(writes ? { idempotencyKey: randomKey() } : {}),
    ...options,
    headers,
  });
}

describe('runtime key/value', () => {
  it('reads and writes the application store the owner sees, with conditional writes', async () => {
    const x = await placed();
    const created = await kv('PUT', x, 'count', { json: text('1') });
    expect(created.status, created.text).toBe(200);
    expect(created.json()).toMatchObject({ application_id: x.applicationId, key: 'count', revision: 1, bytes: 1 });
    expect(created.headers['ratelimit-policy']).toBe('"runtime-kv-write";q=120;w=60');

    const blind = await kv('PUT', x, 'count', { json: text('2') });
    expect(blind.status).toBe(412);
    expect(blind.json()).toMatchObject({ code: 'revision_conflict', current_revision: 1 });
    expect((await kv('PUT', x, 'count', { json: text('2'), ifMatch: 1 })).json().revision).toBe(2);
    expect((await kv('PUT', x, 'count', { json: text('3'), ifMatch: 1 })).status).toBe(412);

    const owner = await env.server.request('GET', `/api/v1/applications/${x.applicationId}/kv/count`, {
      token: env.token,
    });
    expect(owner.json()).toMatchObject({ revision: 2, value_base64: Buffer.from('2').toString('base64') });
    const read = await kv('GET', x, 'count');
    expect(read.status).toBe(200);
    expect(read.headers.etag).toBe('"2"');
    expect((await kv('GET', x, undefined)).json().items.map((i: { key: string }) => i.key)).toEqual(['count']);

    expect((await kv('DELETE', x, 'count')).status).toBe(400); // If-Match required
    expect((await kv('DELETE', x, 'count', { ifMatch: 1 })).status).toBe(412);
    expect((await kv('DELETE', x, 'count', { ifMatch: 2 })).status).toBe(204);
    expect((await kv('GET', x, 'count')).status).toBe(404);

    const events = await env.server.services.store.db
      .selectFrom('events')
      .select(['type', 'screen_id', 'details'])
      .where('type', 'like', 'kv.%')
      .where('screen_id', '=', x.p.screen.id)
      .orderBy('position')
      .execute();
    expect(events.map((e) => [e.type, JSON.parse(e.details!).via])).toEqual([
      ['kv.created', 'runtime'],
      ['kv.updated', 'runtime'],
      ['kv.deleted', 'runtime'],
    ]);
  });

  it('needs Idempotency-Key on writes and replays exact retries', async () => {
    const x = await placed();
    const noKey = await env.server.request('PUT', `/runtime/v1/apps/${x.applicationId}/kv/a`, {
      cookies: x.p.cookies,
      json: text('a'),
      headers: { [PLACEMENT_CAPABILITY_HEADER]: x.handle },
    });
    expect(noKey.status).toBe(400);
    const key = randomKey();
    const first = await kv('PUT', x, 'a', { json: text('a'), idempotencyKey: key });
    const again = await kv('PUT', x, 'a', { json: text('a'), idempotencyKey: key });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual(first.json());
  });

  it('refuses keys a URL would collapse (. and .., plain or percent-encoded) with invalid_request', async () => {
    const x = await placed();
    for (const key of ['.', '..']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await kv(method, x, key, {
          ...(method === 'PUT' ? { json: text('x') } : {}),
          ...(method === 'DELETE' ? { ifMatch: 1 } : {}),
        });
        expect(res.status, `${method} ${key}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ field: 'key' }] });
      }
    }
    const encoded = await env.server.request('GET', `/runtime/v1/apps/${x.applicationId}/kv/%2E%2E`, {
      cookies: x.p.cookies,
      headers: { [PLACEMENT_CAPABILITY_HEADER]: x.handle },
    });
    expect(encoded.status).toBe(400);
  });

  it('gives anonymous viewers reads only', async () => {
    const x = await placed();
    await kv('PUT', x, 'shared', { json: text('hi') });
    const viewer = await anonymousPlayer(env.server, x.p.screen);
    const { handle } = await handleOf(viewer);
    const v = { p: viewer, applicationId: x.applicationId, handle };
    expect(unsealPlacementCapability(env.server.services.keys, handle)!.operations).toBe('read');
    expect((await kv('GET', v, 'shared')).status).toBe(200);
    expect((await kv('PUT', v, 'shared', { json: text('no'), ifMatch: 1 })).status).toBe(403);
    expect((await kv('DELETE', v, 'shared', { ifMatch: 1 })).status).toBe(403);
  });

  it("keeps public-URL viewers' reads off the paired player's budget (review 3, finding B)", async () => {
    const x = await placed();
    await kv('PUT', x, 'shared', { json: text('hi') });
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000);
    const viewer = await anonymousPlayer(env.server, x.p.screen);
    const v = { p: viewer, applicationId: x.applicationId, handle: (await handleOf(viewer)).handle };
    for (let i = 0; i < 600; i++) expect((await kv('GET', v, 'shared')).status).toBe(200);
    const spent = await kv('GET', v, 'shared');
    expect(spent.status).toBe(429);
    expect(spent.headers['ratelimit-policy']).toBe('"runtime-kv-read";q=600;w=60');
    const { handle } = await handleOf(x.p);
    expect((await kv('GET', { ...x, handle }, 'shared')).status).toBe(200);
  });

  it('limits writes to 120 a minute per screen', async () => {
    const x = await placed();
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000);
    const { handle } = await handleOf(x.p);
    const y = { ...x, handle };
    for (let i = 0; i < 120; i++) expect((await kv('PUT', y, `k${i}`, { json: text('v') })).status).toBe(200);
    const limited = await kv('PUT', y, 'one-more', { json: text('v') });
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toBe('"runtime-kv-write";q=120;w=60');
    expect((await kv('GET', y, 'k0')).status).toBe(200); // reads have their own budget
  });
});

describe('placement capabilities', () => {
  it('are required, verified and expire after five minutes', async () => {
    const x = await placed();
    const missing = await kv('GET', { ...x, handle: undefined }, 'k');
    expect(missing.status).toBe(401);
    expect(missing.json().detail).toMatch(/Marquee-Placement-Capability/);
    expect((await kv('GET', { ...x, handle: 'x'.repeat(64) }, 'k')).status).toBe(401);
    const [payload, signature] = x.handle.split('.');
    const flipped = `${payload!.slice(0, -2)}${payload!.slice(-2) === 'AA' ? 'AB' : 'AA'}.${signature}`;
    expect((await kv('GET', { ...x, handle: flipped }, 'k')).status).toBe(401);

    clock.advance(PLACEMENT_CAPABILITY_TTL_MS - 1);
    expect((await kv('GET', x, 'k')).status).toBe(404); // accepted; the key just does not exist
    clock.advance(1);
    const expired = await kv('GET', x, 'k');
    expect(expired.status).toBe(401);
    expect(expired.json().detail).toMatch(/expired/);
    const { handle } = await handleOf(x.p); // refreshed by fetching the manifest
    expect((await kv('GET', { ...x, handle }, 'k')).status).toBe(404);
  });

  it('never work for another session, screen, application, release, placement, revision, generation or operation', async () => {
    const x = await placed();
    const real = unsealPlacementCapability(env.server.services.keys, x.handle)!;
    const forged = (change: Partial<PlacementCapability>) =>
      sealPlacementCapability(env.server.services.keys, { ...real, ...change });
    const y = await placed(); // another screen of the same tenant
    const yCap = unsealPlacementCapability(env.server.services.keys, y.handle)!;
    const other = await insertRelease(env.server, env.tenantId); // a release no manifest shows
    const sameScreenViewer = await anonymousPlayer(env.server, x.p.screen);
    const viewerCap = unsealPlacementCapability(env.server.services.keys, (await handleOf(sameScreenViewer)).handle)!;
    const cases: [string, Partial<PlacementCapability>][] = [
      ['session', { runtimeSessionId: viewerCap.runtimeSessionId }],
      ['screen', { screenId: yCap.screenId }],
      ['tenant', { tenantId: 'prj_someone_else' }],
      ['application', { applicationId: other.applicationId }],
      ['release', { releaseId: other.releaseId }],
      ['placement', { placementId: 'elsewhere' }],
      ['page', { pageId: 'other-page' }],
      ['manifest revision', { manifestRevision: real.manifestRevision + 40 }],
      ['generation', { contentGeneration: real.contentGeneration + 1 }],
    ];
    for (const [field, change] of cases) {
      const res = await kv('GET', { ...x, handle: forged(change) }, 'k');
      expect(res.status, `tampered ${field}: ${res.text}`).toBe(403);
    }
    // A write grant is a bound field too: a paired session holding a read-only capability cannot write.
    const readOnly = await kv('PUT', { ...x, handle: forged({ operations: 'read' }) }, 'k', { json: text('v') });
    expect(readOnly.status).toBe(403);
    expect(readOnly.json().detail).toMatch(/reads only/);
    // Another screen's real capability with this screen's cookie, and this capability on another application's path.
    expect((await kv('GET', { ...x, handle: y.handle }, 'k')).status).toBe(403);
    expect((await kv('GET', { ...x, applicationId: y.applicationId }, 'k')).status).toBe(403);
    // The untampered capability still works.
    expect((await kv('GET', x, 'k')).status).toBe(404);
  });

  it('follow the manifest: a superseded revision works for its grace, then not', async () => {
    const x = await placed();
    await patchScreen(env.server, env.token, x.p.screen.id, { timezone: 'Europe/Madrid' });
    const next = await validManifest(env.server, x.p);
    expect(next.manifest.manifestRevision).not.toBe(x.rev);
    clock.advance(SUPERSEDED_MANIFEST_GRACE_MS - PLACEMENT_CAPABILITY_TTL_MS);
    const old = sealPlacementCapability(env.server.services.keys, {
      ...unsealPlacementCapability(env.server.services.keys, x.handle)!,
      expiresAt: clock.now() + 60_000,
    });
    expect((await kv('GET', { ...x, handle: old }, 'k')).status).toBe(404);
    clock.advance(PLACEMENT_CAPABILITY_TTL_MS);
    const lapsed = sealPlacementCapability(env.server.services.keys, {
      ...unsealPlacementCapability(env.server.services.keys, x.handle)!,
      expiresAt: clock.now() + 60_000,
    });
    expect((await kv('GET', { ...x, handle: lapsed }, 'k')).status).toBe(403);
  });

  it('stop on an archived screen and with a rotated session', async () => {
    const x = await placed();
    await env.server.request('POST', `/api/v1/screens/${x.p.screen.id}/archive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect((await kv('GET', x, 'k')).status).toBe(403);
    const y = await placed();
    await env.server.request('POST', `/api/v1/screens/${y.p.screen.id}/public-id/rotate`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect((await kv('GET', y, 'k')).status).toBe(401); // the session itself ended
    await env.server.request('POST', '/runtime/v1/device-sessions', { cookies: y.p.cookies });
    expect((await kv('GET', y, 'k')).status).toBe(403); // new session, old capability
  });

  it('are issued only on application placements, never anywhere else in the manifest', async () => {
    const x = await placed();
    const res = await getManifest(env.server, x.p);
    const text = res.text;
    expect(text.split('capabilityHandle').length - 1).toBe(1);
  });
});
