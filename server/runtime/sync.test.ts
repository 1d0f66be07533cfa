import { describe, expect, it } from 'vitest';
import { NativeDevice } from '../pairing/native.fixtures';
import { patchScreen, useEnrolledServer, type Player } from './runtime.fixtures';
import { ADVANCE_QUIET_MS, RUNTIME_BARRIER_LEAD_MS } from './sync.routes';

const env = useEnrolledServer();

function advance(p: Player, body: unknown) {
  return env.server.request('POST', '/runtime/v1/sync/advance', { cookies: p.cookies, json: body });
}

/** The project's `screen.sync_barrier` events, oldest first. */
async function barriers(): Promise<{ screen_id: string; details: Record<string, unknown> }[]> {
  const res = await env.server.request('GET', '/api/v1/events?limit=200', { token: env.token });
  expect(res.status, res.text).toBe(200);
  return res
    .json()
    .items.filter((e: { type: string }) => e.type === 'screen.sync_barrier')
    .map((e: { resource: { id: string }; details: Record<string, unknown> }) => ({
      screen_id: e.resource.id,
      details: e.details,
    }));
}

describe('POST /runtime/v1/sync/advance and GET /runtime/v1/sync/barrier', () => {
  it('makes the first advance of a turn the group’s barrier, on every member’s stream; the others get the same', async () => {
    const [a, b, other] = [await env.player(), await env.player(), await env.player()];
    await patchScreen(env.server, env.token, a.screen.id, { sync_group: 'wall' });
    await patchScreen(env.server, env.token, b.screen.id, { sync_group: 'wall' });
    await patchScreen(env.server, env.token, other.screen.id, { sync_group: 'lobby' });
    const before = (await barriers()).length;
    const now = env.clock.now();
    const first = await advance(a, { timeline: 'pl_1@3@2026-11-21T12:00:05.000Z', page_index: 2 });
    expect(first.status, first.text).toBe(202);
    const barrier = {
      timeline: 'pl_1@3@2026-11-21T12:00:05.000Z',
      page_index: 2,
      at: new Date(now + RUNTIME_BARRIER_LEAD_MS).toISOString(),
    };
    expect(first.json()).toEqual({ barrier });
    const written = (await barriers()).slice(before);
    expect(written.map((e) => e.screen_id).sort()).toEqual([a.screen.id, b.screen.id].sort());
    for (const e of written) expect(e.details).toEqual({ group: 'wall', ...barrier });
    // The other member's application asks for the same step a moment later: the same barrier.
    env.clock.advance(300);
    const second = await advance(b, { timeline: barrier.timeline, page_index: 2 });
    expect(second.json()).toEqual({ barrier });
    expect((await barriers()).length).toBe(before + 2);
    // Past the barrier's quiet time, the next advance is a new turn.
    env.clock.advance(RUNTIME_BARRIER_LEAD_MS + ADVANCE_QUIET_MS);
    const third = await advance(b, { timeline: barrier.timeline, page_index: 3 });
    expect(third.json().barrier).toMatchObject({ page_index: 3 });
    expect((await barriers()).length).toBe(before + 4);
    // A member that starts now asks for the last one: it joins the timeline that barrier began.
    const last = await env.server.request('GET', '/runtime/v1/sync/barrier', { cookies: a.cookies });
    expect([last.status, last.json()]).toEqual([200, { barrier: third.json().barrier }]);
    const none = await env.server.request('GET', '/runtime/v1/sync/barrier', { cookies: other.cookies });
    expect(none.json()).toEqual({ barrier: null });
  });

  it('refuses a screen in no group, a malformed advance, and an anonymous viewer', async () => {
    const alone = await env.player();
    const refused = await advance(alone, { timeline: 'pl_1@1@x', page_index: 0 });
    expect([refused.status, refused.json().code]).toEqual([409, 'resource_conflict']);
    await patchScreen(env.server, env.token, alone.screen.id, { sync_group: 'solo' });
    const bad = await advance(alone, { timeline: '', page_index: -1 });
    expect([bad.status, bad.json().code]).toEqual([400, 'invalid_request']);
    const none = await env.server.request('POST', '/runtime/v1/sync/advance', {
      json: { timeline: 't', page_index: 0 },
    });
    expect(none.status).toBe(401);
  });
});

describe('GET /runtime/v1/sync/lan-key', () => {
  it('hands kiosks of one group one key, another group another, and browsers none', async () => {
    const devices = [];
    for (const group of ['wall', 'wall', 'lobby']) {
      env.clock.advance(61_000);
      const d = await NativeDevice.create(env.server, { platform: 'linux' });
      const screen = await d.pair(env.token);
      await patchScreen(env.server, env.token, screen.id, { sync_group: group });
      devices.push(d);
    }
    const keys = [];
    for (const d of devices) {
      const res = await d.runtime('GET', '/runtime/v1/sync/lan-key');
      expect(res.status, res.text).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      keys.push(res.json());
    }
    expect(keys[0]).toEqual(keys[1]);
    expect(keys[0].group).toBe('wall');
    expect(keys[0].key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(keys[2].group).toBe('lobby');
    expect(keys[2].key).not.toBe(keys[0].key);
    const browser = await env.player();
    await patchScreen(env.server, env.token, browser.screen.id, { sync_group: 'wall' });
    const refused = await env.server.request('GET', '/runtime/v1/sync/lan-key', { cookies: browser.cookies });
    expect([refused.status, refused.json().code]).toEqual([403, 'forbidden']);
  });
});
