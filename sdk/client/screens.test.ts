// The client's screen routes (pair, provision, assign, lifecycle, reload) against a real Marquee
// server; the player's side of pairing is driven over HTTP as the web player would.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, startPairing } from '../../server/pairing/pairing.fixtures';
import { TestServer } from '../../server/testing/harness';
import { testClient } from '../testing/client-fixture';
import type { MarqueeProblem, MarqueeClient } from './marquee-client';

let server: TestServer;
let baseUrl: string;
let png: Buffer;

beforeAll(async () => {
  server = await TestServer.start();
  baseUrl = `http://127.0.0.1:${server.port}`;
  png = await sharp({ create: { width: 64, height: 36, channels: 3, background: '#604020' } })
    .png()
    .toBuffer();
});
afterAll(async () => server?.stop());

async function playlist(c: MarqueeClient, name = 'Lobby loop') {
  const { data: media } = await c.media.upload(png, { filename: 'slide.png' });
  const { data } = await c.playlists.create({
    name,
    pages: [
      {
        id: 'slide',
        canvas: { width: 1920, height: 1080, background: '#000000FF' },
        transition: { type: 'crossfade', duration_ms: 0 },
        advance: { mode: 'duration', after_ms: 5000 },
        placements: [
          {
            id: 'image',
            content: { type: 'image', selector: { by: 'id', media_id: media.id } },
            rect: { x: 0, y: 0, width: 1920, height: 1080 },
            layer: 0,
            content_fit: 'contain',
          },
        ],
      },
    ],
  });
  return data;
}

/** The player's half: hear the claim, complete pairing. */
async function completePairing(cookies: Awaited<ReturnType<typeof startPairing>>['cookies']) {
  const events = await openStream(server, '/runtime/v1/pairing-events', cookies).done;
  const done = await server.request('POST', '/runtime/v1/pairing-sessions/complete', {
    cookies,
    json: { completion_nonce: events.frames[0]!.data.completion_nonce },
  });
  expect(done.status, done.text).toBe(200);
}

describe('pairing and assigning (Model P)', () => {
  it('pairs the code a player shows, assigns a playlist with the revision from pairing, and the player becomes active', async () => {
    const c = testClient(baseUrl, { token: (await server.enroll()).token });
    const loop = await playlist(c);
    const { code, cookies } = await startPairing(server);

    const claim = await c.screens.pair({ code, label: 'Lobby' });
    expect(claim.status).toBe(201);
    expect(claim.data.screen).toMatchObject({ state: 'pairing_pending', label: 'Lobby' });
    expect(claim.data.public_url).toMatch(/\/s\//);
    expect(claim.revision).toBe(claim.data.screen.revision);

    const assigned = await c.screens.assign(claim.data.screen.id, loop.id, { ifMatch: claim.data.screen });
    expect(assigned.data).toMatchObject({ playlist_id: loop.id, revision: claim.data.screen.revision + 1 });
    expect(assigned.revision).toBe(assigned.data.revision);

    await completePairing(cookies);
    const screen = await c.screens.get(claim.data.screen.id);
    expect(screen.data).toMatchObject({ state: 'active', playlist_id: loop.id });
    expect((await c.screens.list()).data.items.map((s) => s.id)).toEqual([screen.data.id]);
  });

  it('patches, reloads, rotates, archives, unarchives and deletes', async () => {
    const c = testClient(baseUrl, { token: (await server.enroll()).token });
    const { code, cookies } = await startPairing(server);
    const { data: claim } = await c.screens.pair({ code });
    await completePairing(cookies);
    const id = claim.screen.id;

    const patched = await c.screens.update(id, { name: 'Foyer', timezone: 'Europe/Berlin', tags: ['foyer'] });
    expect(patched.data).toMatchObject({ name: 'Foyer', timezone: 'Europe/Berlin', tags: ['foyer'] });
    expect((await c.screens.list({ tag: 'foyer' })).data.items.map((s) => s.id)).toEqual([id]);

    const reload = await c.screens.reload(id);
    expect(reload.status).toBe(202);
    expect(reload.data.reload_id).toMatch(/^rld_/);
    expect(reload.revision).toBe(patched.revision); // a reload does not change the screen

    const rotated = await c.screens.rotatePublicId(id, { ifMatch: patched });
    expect(rotated.data.public_id).not.toBe(patched.data.public_id);
    expect(rotated.data.content_access_generation).toBe(patched.data.content_access_generation + 1);

    const archived = await c.screens.archive(id, { ifMatch: rotated });
    expect([archived.data.state, archived.revision]).toEqual(['archived', rotated.revision! + 1]);
    expect((await c.screens.list()).data.items).toEqual([]);
    expect((await c.screens.list({ state: 'archived' })).data.items.map((s) => s.id)).toEqual([id]);
    const again = (await c.screens.archive(id).catch((e: unknown) => e)) as MarqueeProblem;
    expect([again.code, again.status]).toEqual(['resource_conflict', 409]);
    expect((await c.screens.unarchive(id)).data.state).toBe('active');

    const stale = (await c.screens.delete(id, { ifMatch: patched }).catch((e: unknown) => e)) as MarqueeProblem;
    expect(stale.code).toBe('revision_conflict');
    expect((await c.screens.delete(id)).status).toBe(204);
    expect(((await c.screens.get(id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe('not_found');
  });

  it('provisions a screen without a code; a pairing_pending screen cannot be reloaded', async () => {
    const c = testClient(baseUrl, { token: (await server.enroll()).token });
    const provisioned = await c.screens.provision({ label: 'Window' });
    expect(provisioned.data.screen).toMatchObject({ state: 'pairing_pending', label: 'Window' });
    expect(provisioned.data.provisioning_url).toContain('#provision=');
    const error = (await c.screens.reload(provisioned.data.screen.id).catch((e: unknown) => e)) as MarqueeProblem;
    expect([error.code, error.status]).toEqual(['resource_conflict', 409]);
  });

  it('refuses a malformed code with the field named, and another project sees not_found', async () => {
    const c = testClient(baseUrl, { token: (await server.enroll()).token });
    const bad = (await c.screens.pair({ code: 'ABC' }).catch((e: unknown) => e)) as MarqueeProblem;
    expect([bad.code, bad.errors[0]?.field]).toEqual(['invalid_request', 'code']);

    const { data } = await c.screens.provision();
    const other = testClient(baseUrl, { token: (await server.enroll()).token });
    expect(((await other.screens.get(data.screen.id).catch((e: unknown) => e)) as MarqueeProblem).code).toBe(
      'not_found',
    );
    expect(((await other.screens.assign(data.screen.id, null).catch((e: unknown) => e)) as MarqueeProblem).code).toBe(
      'not_found',
    );
  });
});

describe('accounts (Model A)', () => {
  it('needs If-Match on updates; revokes the device credential', async () => {
    const c = testClient(baseUrl, { token: (await server.createAccount()).token });
    const { code, cookies } = await startPairing(server);
    const { data: claim } = await c.screens.pair({ code });
    await completePairing(cookies);
    const unguarded = (await c.screens
      .update(claim.screen.id, { name: 'Hall' })
      .catch((e: unknown) => e)) as MarqueeProblem;
    expect(unguarded.errors[0]).toMatchObject({ field: 'If-Match', code: 'required' });
    const current = await c.screens.get(claim.screen.id);
    const renamed = await c.screens.update(claim.screen.id, { name: 'Hall' }, { ifMatch: current });
    const revoked = await c.screens.revokeCredential(claim.screen.id, { ifMatch: renamed });
    expect(revoked.data.content_access_generation).toBe(renamed.data.content_access_generation + 1);
    expect(revoked.credits).toBeUndefined();
  });
});
