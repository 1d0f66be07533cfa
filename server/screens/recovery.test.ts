import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HostFacts } from '../../sdk/contract/native';
import { NativeDevice } from '../pairing/native.fixtures';
import { NATIVE_CODE_TTL_MS, RECOVERY_GRACE_MS } from '../pairing/native-pairing';
import { retireKeys } from '../pairing/native.module';
import { claimCode } from '../pairing/pairing.fixtures';
import { createPlaylist, patchScreen, useEnrolledServer } from '../runtime/runtime.fixtures';
import { imageDoc, insertMedia } from '../playlists/content.fixtures';
import { randomKey } from '../testing/harness';
import { RECOVERY_OFFERS_PER_HOUR, RECOVERY_QUIET_MS } from './recovery';

const env = useEnrolledServer();
const { clock } = env;

const hostWith = (ids: { duid?: string; serial?: string }): HostFacts => ({
  platform: 'linux-arm64',
  model: 'Raspberry Pi 4 Model B',
  firmware: 'Debian 12',
  manufacturer: 'Raspberry Pi Ltd',
  ...ids,
});

async function device(host?: HostFacts): Promise<NativeDevice> {
  clock.advance(61_000); // pairing budgets are per minute
  return NativeDevice.create(env.server, host);
}

/** A screen bound to a device with this duid, whose key has been quiet long enough for an offer. */
async function lostScreen(duid = crypto.randomUUID()): Promise<{ old: NativeDevice; screen: any; duid: string }> {
  const old = await device(hostWith({ duid }));
  const screen = await old.pair(env.token);
  clock.advance(RECOVERY_QUIET_MS + 1000);
  return { old, screen, duid };
}

async function screenOf(id: string) {
  const res = await env.server.request('GET', `/api/v1/screens/${id}`, { token: env.token });
  expect(res.status, res.text).toBe(200);
  return res;
}

function confirm(id: string, ifMatch?: number) {
  return env.server.request('POST', `/api/v1/screens/${id}/recovery/confirm`, {
    token: env.token,
    idempotencyKey: randomKey(),
    ifMatch,
  });
}

async function eventsOfType(type: string): Promise<any[]> {
  const res = await env.server.request('GET', '/api/v1/events?limit=200', { token: env.token });
  const items: any[] = [];
  let body = res.json();
  items.push(...body.items);
  while (body.items.length === 200) {
    body = (
      await env.server.request('GET', `/api/v1/events?limit=200&after=${encodeURIComponent(body.next_cursor)}`, {
        token: env.token,
      })
    ).json();
    items.push(...body.items);
  }
  return items.filter((e) => e.type === type);
}

describe('recovery offers', () => {
  it('are recorded when a new key presents the duid of exactly one quiet screen', async () => {
    const { screen, duid } = await lostScreen();
    const offered = (await eventsOfType('screen.recovery_offered')).length;
    const replacement = await device(hostWith({ duid }));
    await replacement.start();
    const view = (await screenOf(screen.id)).json();
    expect(view.recovery_pending).toMatchObject({
      host: {
        platform: 'linux-arm64',
        model: 'Raspberry Pi 4 Model B',
        firmware: 'Debian 12',
        manufacturer: 'Raspberry Pi Ltd',
      },
    });
    expect(Date.parse(view.recovery_pending.expires_at)).toBe(clock.now() + NATIVE_CODE_TTL_MS);
    expect(view.revision).toBe(screen.revision); // an offer is the device's doing, not an owner's change
    const events = await eventsOfType('screen.recovery_offered');
    expect(events.length).toBe(offered + 1);
    expect(events.at(-1)).toMatchObject({
      resource: { type: 'screen', id: screen.id },
      details: { platform: 'linux-arm64', model: 'Raspberry Pi 4 Model B', manufacturer: 'Raspberry Pi Ltd' },
    });
    // Identifiers are never shown, logged or echoed.
    expect(JSON.stringify(events.at(-1))).not.toContain(duid);
    expect(JSON.stringify(view)).not.toContain(duid);
    expect(env.server.logText()).not.toContain(duid);
  });

  it('match on the serial as well', async () => {
    const serial = `SN-${crypto.randomUUID()}`;
    const old = await device(hostWith({ serial }));
    const screen = await old.pair(env.token);
    clock.advance(RECOVERY_QUIET_MS + 1000);
    await (await device(hostWith({ serial }))).start();
    expect((await screenOf(screen.id)).json().recovery_pending).toBeDefined();
  });

  it('are not made while the bound key showed life in the last ten minutes', async () => {
    const duid = crypto.randomUUID();
    const old = await device(hostWith({ duid }));
    const screen = await old.pair(env.token);
    clock.advance(RECOVERY_QUIET_MS - 120_000);
    await old.mintSession(); // a proof: the key is alive
    clock.advance(RECOVERY_QUIET_MS - 180_000); // (device() adds a minute)
    await (await device(hostWith({ duid }))).start();
    expect((await screenOf(screen.id)).json().recovery_pending).toBeUndefined();
    // A request with a session of the bound key counts as life too.
    clock.advance(RECOVERY_QUIET_MS - 120_000);
    expect((await old.runtime('GET', '/runtime/v1/manifest')).status).toBe(200);
    clock.advance(120_000);
    await (await device(hostWith({ duid }))).start();
    expect((await screenOf(screen.id)).json().recovery_pending).toBeUndefined();
    clock.advance(RECOVERY_QUIET_MS);
    await (await device(hostWith({ duid }))).start();
    expect((await screenOf(screen.id)).json().recovery_pending).toBeDefined();
  });

  it('are at most three per screen per rolling hour', async () => {
    const { screen, duid } = await lostScreen();
    const offersOf = async () =>
      (await eventsOfType('screen.recovery_offered')).filter((e) => e.resource.id === screen.id).length;
    for (let i = 0; i < RECOVERY_OFFERS_PER_HOUR + 1; i++) await (await device(hostWith({ duid }))).start();
    expect(await offersOf()).toBe(RECOVERY_OFFERS_PER_HOUR);
    clock.advance(3600_000 - (RECOVERY_OFFERS_PER_HOUR + 1) * 61_000 + 62_000); // the first offer leaves the hour
    await (await device(hostWith({ duid }))).start();
    expect(await offersOf()).toBe(RECOVERY_OFFERS_PER_HOUR + 1);
  });

  it('are at most three per screen per rolling hour when the devices start at the same moment', async () => {
    const { screen, duid } = await lostScreen();
    const devices = [];
    for (let i = 0; i < RECOVERY_OFFERS_PER_HOUR + 3; i++) devices.push(await device(hostWith({ duid })));
    await Promise.all(devices.map((d) => d.start()));
    const offers = (await eventsOfType('screen.recovery_offered')).filter((e) => e.resource.id === screen.id);
    expect(offers).toHaveLength(RECOVERY_OFFERS_PER_HOUR);
  });

  it('are not made when the identifier matches more than one screen', async () => {
    const duid = crypto.randomUUID();
    const a = await (await device(hostWith({ duid }))).pair(env.token);
    const b = await (await device(hostWith({ duid }))).pair(env.token);
    clock.advance(RECOVERY_QUIET_MS + 1000);
    await (await device(hostWith({ duid }))).start();
    expect((await screenOf(a.id)).json().recovery_pending).toBeUndefined();
    expect((await screenOf(b.id)).json().recovery_pending).toBeUndefined();
  });

  it('are not made for a device that sends no identifier', async () => {
    const { screen } = await lostScreen();
    await (await device(hostWith({}))).start();
    expect((await screenOf(screen.id)).json().recovery_pending).toBeUndefined();
  });
});

describe('recovery confirm', () => {
  it('moves the screen to the offering device, which proves its key; the old key retires after the grace', async () => {
    const { old, screen, duid } = await lostScreen();
    const mediaId = await insertMedia(env.server, env.tenantId);
    const playlistId = await createPlaylist(env.server, env.token, imageDoc(mediaId));
    await patchScreen(env.server, env.token, screen.id, {
      playlist_id: playlistId,
      timezone: 'Europe/Berlin',
      name: 'Lobby',
    });
    const before = (await screenOf(screen.id)).json();

    const replacement = await device(hostWith({ duid }));
    await replacement.start();
    const confirmed = await confirm(screen.id, before.revision);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.headers.etag).toBe(`"${before.revision + 1}"`);
    expect(confirmed.json()).toMatchObject({ id: screen.id, revision: before.revision + 1, state: 'active' });
    expect(confirmed.json().recovery_pending).toBeUndefined();
    expect((await eventsOfType('screen.recovered')).at(-1)).toMatchObject({ resource: { id: screen.id } });

    const completion = await replacement.complete();
    expect(completion.screen).toMatchObject({
      id: screen.id,
      public_id: before.public_id,
      label: 'Lobby',
      playlist_id: playlistId,
      timezone: 'Europe/Berlin',
    });
    await replacement.mintSession();
    expect((await replacement.runtime('GET', '/runtime/v1/manifest')).json().screenId).toBe(screen.id);

    // The old key keeps working for the grace, then is refused.
    expect((await old.runtime('GET', '/runtime/v1/manifest')).status).toBe(200);
    clock.advance(RECOVERY_GRACE_MS - 1000);
    expect((await old.runtime('GET', '/runtime/v1/manifest')).status).toBe(200);
    clock.advance(2000);
    expect((await old.runtime('GET', '/runtime/v1/manifest')).status).toBe(401);
    const challenge = await env.server.request('POST', '/runtime/v1/native/identity/challenges', {
      json: { kid: old.kid },
    });
    expect(challenge.status).toBe(404);
    expect((await replacement.runtime('GET', '/runtime/v1/manifest')).status).toBe(200);
    // Housekeeping then drops the retired key with its device credential; the new key stays.
    await retireKeys(env.server.services, clock.now());
    const db = env.server.services.store.db;
    const keys = await db
      .selectFrom('native_identities')
      .select(['kid', 'state'])
      .where('screen_id', '=', screen.id)
      .execute();
    expect(keys).toEqual([{ kid: replacement.kid, state: 'active' }]);
    const devices = await db.selectFrom('screen_devices').select('status').where('screen_id', '=', screen.id).execute();
    expect(devices.map((d) => d.status).sort()).toEqual(['active', 'revoked']);
  });

  it('gives recovery_not_offered when nothing is pending', async () => {
    const { screen } = await lostScreen();
    const res = await confirm(screen.id);
    expect([res.status, res.json().code]).toEqual([409, 'recovery_not_offered']);
  });

  it('gives recovery_expired once the offering pairing session lapsed', async () => {
    const { screen, duid } = await lostScreen();
    await (await device(hostWith({ duid }))).start();
    clock.advance(NATIVE_CODE_TTL_MS + 1000);
    const res = await confirm(screen.id);
    expect([res.status, res.json().code]).toEqual([410, 'recovery_expired']);
    expect(res.text).not.toContain(duid);
  });

  it('gives recovery_ambiguous when the identifier became attached to another screen meanwhile', async () => {
    const { screen, duid } = await lostScreen();
    const serial = `SN-${crypto.randomUUID()}`;
    await (await device(hostWith({ duid, serial }))).start();
    // Another device with the offering device's serial is bound elsewhere (by its code).
    await (await device(hostWith({ serial }))).pair(env.token);
    const res = await confirm(screen.id);
    expect([res.status, res.json().code]).toEqual([409, 'recovery_ambiguous']);
    expect(res.text).not.toContain(duid);
  });

  it('gives recovery_not_offered when the offering device was paired by its code instead', async () => {
    const { screen, duid } = await lostScreen();
    const replacement = await device(hostWith({ duid }));
    const { code } = await replacement.start();
    expect((await claimCode(env.server, env.token, code)).status).toBe(201);
    const res = await confirm(screen.id);
    expect([res.status, res.json().code]).toEqual([409, 'recovery_not_offered']);
  });

  it("checks If-Match and answers not_found for another project's screen", async () => {
    const { screen, duid } = await lostScreen();
    await (await device(hostWith({ duid }))).start();
    const stale = await confirm(screen.id, 1);
    expect([stale.status, stale.json().code]).toEqual([412, 'revision_conflict']);
    const other = await env.server.enroll();
    const foreign = await env.server.request('POST', `/api/v1/screens/${screen.id}/recovery/confirm`, {
      token: other.token,
      idempotencyKey: randomKey(),
    });
    expect(foreign.status).toBe(404);
  });
});
