import { afterAll, describe, expect, it } from 'vitest';
import { StreamReader } from '../events/stream-reader.testing';
import { imageDoc } from '../playlists/content.fixtures';
import { randomKey } from '../testing/harness';
import { RUNTIME_SESSION_TTL_MS } from '../pairing/pairing-cookies';
import { runtimeCookie } from '../pairing/pairing.auth';
import { resumeProject, suspendProject } from '../operators/operators';
import { PRESENCE_GRACE_MS } from './presence';
import {
  anonymousPlayer,
  createPlaylist,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer();
const { clock } = env;
const open: StreamReader[] = [];
afterAll(() => {
  for (const reader of open) reader.close();
});

async function stream(p: Player, query = '', headers: Record<string, string> = {}): Promise<StreamReader> {
  const reader = await StreamReader.open(env.server, `/runtime/v1/events${query}`, { cookies: p.cookies, headers });
  open.push(reader);
  return reader;
}

function reload(screenId: string) {
  return env.server.request('POST', `/api/v1/screens/${screenId}/reload`, {
    token: env.token,
    idempotencyKey: randomKey(),
  });
}

async function screen(id: string) {
  return (await env.server.request('GET', `/api/v1/screens/${id}`, { token: env.token })).json();
}

describe('the runtime event stream', () => {
  it('starts a new session at the head: the session cursor skips what happened before', async () => {
    const p = await env.player();
    expect(p.session.event_cursor).toMatch(/^[0-9]+\.[A-Za-z0-9_-]{22}$/);
    const reader = await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`);
    expect(reader.status).toBe(200);
    expect(reader.headers['x-accel-buffering']).toBe('no');
    expect(reader.headers['content-type']).toMatch(/^text\/event-stream/);
    expect((await reload(p.screen.id)).status).toBe(202);
    const [frame] = await reader.waitForFrames(1);
    expect(frame!.event).toBe('player.reload');
    expect(frame!.json().details.reason).toBe('project');
    reader.close();
  });

  it('delivers screen.manifest_changed and leaves stream.cursor frames for events players do not see', async () => {
    const p = await env.player();
    const reader = await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`);
    await patchScreen(env.server, env.token, p.screen.id, { tags: ['lobby'] }); // screen.updated: account audience only
    const [gap] = await reader.waitForFrames(1);
    expect(gap!.event).toBe('stream.cursor');
    expect(gap!.data).toBe('');
    const media = await storedMedia(env.server, env.tenantId, Buffer.from('x'));
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, imageDoc(media)),
    });
    await reader.waitUntil(() => reader.events.length >= 1, 'manifest_changed');
    expect(reader.events[0]!.event).toBe('screen.manifest_changed');
    expect(reader.events[0]!.json().details.reason).toBe('playlist_assigned');
    reader.close();
  });

  it('resumes after Last-Event-ID, the query cursor winning, and resyncs a foreign cursor', async () => {
    const p = await env.player();
    await reload(p.screen.id);
    const first = await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`);
    const [reloaded] = await first.waitForFrames(1);
    first.close();
    clock.advance(11 * 60_000);
    await reload(p.screen.id);
    const resumed = await stream(p, '', { 'last-event-id': reloaded!.id! });
    await resumed.waitUntil(() => resumed.events.length >= 1, 'the second reload');
    expect(resumed.events.map((f) => f.event)).toEqual(['player.reload']);
    expect(resumed.events[0]!.id).not.toBe(reloaded!.id);
    resumed.close();

    const other = await env.player();
    const foreign = await stream(p, `?after=${encodeURIComponent(other.session.event_cursor)}`, {
      'last-event-id': reloaded!.id!,
    });
    await foreign.waitForEnd();
    expect(foreign.frames.map((f) => f.event)).toEqual(['stream.resync_required']);
  });

  it('is refused without a runtime cookie, and to a bearer', async () => {
    expect((await env.server.request('GET', '/runtime/v1/events')).status).toBe(401);
    expect((await env.server.request('GET', '/runtime/v1/events', { token: env.token })).status).toBe(401);
  });

  it('closes after the event that ended its session (a rotation), but not for a newer session', async () => {
    const p = await env.player();
    const before = await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`);
    const rotated = await env.server.request('POST', `/api/v1/screens/${p.screen.id}/public-id/rotate`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(rotated.status).toBe(200);
    await before.waitForEnd();
    expect(before.events.map((f) => f.event)).toContain('screen.public_id_rotated');

    const session = await env.server.request('POST', '/runtime/v1/device-sessions', { cookies: p.cookies });
    expect(session.status).toBe(201);
    const after = await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`); // replays the rotation
    await after.waitUntil(
      () => after.events.some((f) => f.event === 'screen.public_id_rotated'),
      'the replayed rotation',
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(after.ended).toBe(false);
    after.close();
  });

  it('ends when its session expires, and delivers nothing after (review 3, finding C)', async () => {
    const p = await env.player();
    const viewer = await anonymousPlayer(env.server, p.screen);
    const reader = await stream(viewer, `?after=${encodeURIComponent(viewer.session.event_cursor)}`);
    clock.advance(RUNTIME_SESSION_TTL_MS + 3600_000);
    expect((await env.server.request('GET', '/runtime/v1/manifest', { cookies: viewer.cookies })).status).toBe(401);
    expect((await reload(p.screen.id)).status).toBe(202);
    await reader.waitForEnd();
    expect(reader.events.map((f) => f.event)).not.toContain('player.reload');
  });

  it('ends at the expiry time without any event to wake it', async () => {
    const p = await env.player();
    const viewer = await anonymousPlayer(env.server, p.screen);
    // The session has 300 ms left when the stream opens; nothing happens on the screen after.
    clock.advance(RUNTIME_SESSION_TTL_MS - 300);
    const reader = await stream(viewer, `?after=${encodeURIComponent(viewer.session.event_cursor)}`);
    expect(reader.status).toBe(200);
    const opened = Date.now();
    await reader.waitForEnd();
    expect(Date.now() - opened).toBeGreaterThanOrEqual(250);
    expect(reader.events).toEqual([]);
  });

  it('ends for every session a delete invalidates, paired and anonymous', async () => {
    const p = await env.player();
    const viewer = await anonymousPlayer(env.server, p.screen);
    const readers = [
      await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`),
      await stream(viewer, `?after=${encodeURIComponent(viewer.session.event_cursor)}`),
    ];
    expect(
      (
        await env.server.request('DELETE', `/api/v1/screens/${p.screen.id}`, {
          token: env.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(204);
    for (const reader of readers) await reader.waitForEnd();
  });
});

describe('a project suspended while a screen opens its stream', () => {
  it('ends the stream before any frame, though the suspension notice came before it listened', async () => {
    const p = await env.player();
    const { server } = env;
    const suspend = (work: Parameters<Parameters<typeof server.services.store.transaction>[0]>[0]) =>
      suspendProject(server.services, work, { id: env.tenantId, reason: null, requestId: 'req_test' }, clock.now());
    // The cookie is checked on arrival; the suspension commits (and publishes to no one) right after.
    const authenticate = runtimeCookie.authenticate;
    runtimeCookie.authenticate = async (ctx) => {
      runtimeCookie.authenticate = authenticate;
      const principal = await authenticate(ctx);
      await server.services.store.transaction(suspend);
      return principal;
    };
    try {
      const reader = await stream(p, `?after=${encodeURIComponent(p.session.event_cursor)}`);
      expect(reader.status).toBe(200);
      await reader.waitForEnd(2000);
      expect(reader.events).toEqual([]);
    } finally {
      runtimeCookie.authenticate = authenticate;
      await server.services.store.transaction((work) =>
        resumeProject(server.services, work, { id: env.tenantId, requestId: 'req_test' }, clock.now()),
      );
    }
  });
});

describe('presence', () => {
  it('marks the screen online while a paired stream is connected, with a grace after it goes', async () => {
    const p = await env.player();
    expect((await screen(p.screen.id)).online).toBe(false);
    expect((await screen(p.screen.id)).last_online_at).toBeUndefined();
    const reader = await stream(p);
    await reader.waitUntil(() => reader.raw.includes('retry:'), 'the preamble');
    await new Promise((r) => setTimeout(r, 20));
    const online = await screen(p.screen.id);
    expect(online.online).toBe(true);
    expect(online.last_online_at).toBe(new Date(clock.now()).toISOString());

    reader.close();
    await new Promise((r) => setTimeout(r, 50));
    clock.advance(PRESENCE_GRACE_MS - 1);
    expect((await screen(p.screen.id)).online).toBe(true);
    clock.advance(1);
    const gone = await screen(p.screen.id);
    expect(gone.online).toBe(false);
    expect(Date.parse(gone.last_online_at)).toBe(clock.now() - PRESENCE_GRACE_MS);
  });

  it('does not count anonymous viewers', async () => {
    const p = await env.player();
    const viewer = await anonymousPlayer(env.server, p.screen);
    const reader = await stream(viewer);
    await reader.waitUntil(() => reader.raw.includes('retry:'), 'the preamble');
    expect((await screen(p.screen.id)).online).toBe(false);
    reader.close();
  });

  it('counts each paired stream: the screen stays online until the last one closes', async () => {
    const p = await env.player();
    const a = await stream(p);
    const b = await stream(p);
    await Promise.all([a, b].map((r) => r.waitUntil(() => r.raw.includes('retry:'), 'the preamble')));
    a.close();
    await new Promise((r) => setTimeout(r, 50));
    clock.advance(PRESENCE_GRACE_MS * 2);
    expect((await screen(p.screen.id)).online).toBe(true);
    b.close();
    await new Promise((r) => setTimeout(r, 50));
    clock.advance(PRESENCE_GRACE_MS);
    expect((await screen(p.screen.id)).online).toBe(false);
  });
});
