// Screenshots (reference contract): request, the runtime upload, status, download, latest-wins,
// time-outs with a reason, what the stream delivers, and who may do what.
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_MAX_BYTES, SCREENSHOT_TTL_MS } from '../../sdk/contract/screen-health';
import { StreamReader } from '../events/stream-reader.testing';
import { pairPendingScreen } from '../pairing/pairing.fixtures';
import { anonymousPlayer, sha256, useEnrolledServer, type Player } from '../runtime/runtime.fixtures';
import { randomKey } from '../testing/harness';
import { dropDeletedScreenshots, expireScreenshots } from './screenshots';

const env = useEnrolledServer();
const open: StreamReader[] = [];
afterAll(() => {
  for (const reader of open) reader.close();
});

const still = (background = '#ff0000', width = 64, height = 36) =>
  sharp({ create: { width, height, channels: 3, background } })
    .webp()
    .toBuffer();

function request(screenId: string, options: { key?: string; token?: string } = {}) {
  return env.server.request('POST', `/api/v1/screens/${screenId}/screenshot`, {
    token: options.token ?? env.token,
    ...(options.key ? { idempotencyKey: options.key } : {}),
  });
}

async function requested(screenId: string): Promise<{ capture_id: string; expires_at: string }> {
  const res = await request(screenId);
  expect(res.status, res.text).toBe(202);
  return res.json();
}

function upload(p: Player, captureId: string | undefined, body: Buffer, headers: Record<string, string> = {}) {
  return env.server.request('PUT', '/runtime/v1/screenshot', {
    cookies: p.cookies,
    body,
    headers: {
      'content-type': 'image/webp',
      ...(captureId ? { 'marquee-capture-id': captureId } : {}),
      ...headers,
    },
  });
}

const status = async (screenId: string) =>
  (await env.server.request('GET', `/api/v1/screens/${screenId}/screenshot/status`, { token: env.token })).json();

const download = (screenId: string, captureId?: string) =>
  env.server.request('GET', `/api/v1/screens/${screenId}/screenshot${captureId ? `?capture_id=${captureId}` : ''}`, {
    token: env.token,
    headers: { accept: 'image/webp' },
  });

async function events(screenId: string, type: string) {
  const rows = await env.server.services.store.db
    .selectFrom('events')
    .select(['details', 'runtime'])
    .where('screen_id', '=', screenId)
    .where('type', '=', type)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({ runtime: r.runtime, details: JSON.parse(r.details!) }));
}

describe('a screenshot request', () => {
  it('answers 202 with a shot_ capture id expiring in 30 s, and is a runtime event with the capture budget', async () => {
    const p = await env.player();
    const res = await request(p.screen.id);
    expect(res.status, res.text).toBe(202);
    expect(res.headers['cache-control']).toBe('no-store');
    const accepted = res.json();
    expect(accepted.capture_id).toMatch(/^shot_[A-Za-z0-9_-]{16,64}$/);
    expect(accepted.expires_at).toBe(new Date(env.clock.now() + SCREENSHOT_TTL_MS).toISOString());
    expect(await events(p.screen.id, 'screen.screenshot_requested')).toEqual([
      {
        runtime: 1,
        details: {
          ...accepted,
          max_width_divisor: 2,
          max_height_divisor: 2,
          format: 'image/webp',
          quality: 80,
          max_bytes: SCREENSHOT_MAX_BYTES,
        },
      },
    ]);
    expect(await status(p.screen.id)).toEqual({ state: 'pending', ...accepted });
  });

  it('replays an exact retry with the same Idempotency-Key: one capture id, one event', async () => {
    const p = await env.player();
    const key = randomKey();
    const first = await request(p.screen.id, { key });
    const again = await request(p.screen.id, { key });
    expect(again.json()).toEqual(first.json());
    expect(await events(p.screen.id, 'screen.screenshot_requested')).toHaveLength(1);
  });

  it('is refused for a screen with no player yet, and answers not_found for another project’s screen', async () => {
    const pending = await pairPendingScreen(env.server, env.token);
    expect((await request(pending.id)).json().code).toBe('resource_conflict');
    const other = await env.server.enroll();
    const p = await env.player();
    const res = await request(p.screen.id, { token: other.token });
    expect([res.status, res.json().code]).toEqual([404, 'not_found']);
  });

  it('reaches the player on its runtime stream, but never after it expired', async () => {
    const p = await env.player();
    const live = await requested(p.screen.id);
    const late = await requested(p.screen.id);
    env.clock.advance(SCREENSHOT_TTL_MS);
    const fresh = await requested(p.screen.id);
    const reader = await StreamReader.open(
      env.server,
      `/runtime/v1/events?after=${encodeURIComponent(p.session.event_cursor)}`,
      { cookies: p.cookies },
    );
    open.push(reader);
    await reader.waitUntil(() => reader.events.length > 0, 'the fresh request');
    // The two expired requests are skipped; the fresh one arrives.
    expect(reader.events.map((f) => [f.event, f.json().details.capture_id])).toEqual([
      ['screen.screenshot_requested', fresh.capture_id],
    ]);
    expect([live.capture_id, late.capture_id]).not.toContain(fresh.capture_id);
    reader.close();
  });
});

describe('the runtime upload', () => {
  it('makes the image ready: status names its size, bytes and sha256, and the download matches them', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    const res = await upload(p, capture_id, await still('#00ff00', 96, 54));
    expect(res.status, res.text).toBe(204);
    const s = await status(p.screen.id);
    expect(s).toMatchObject({ state: 'ready', capture_id, width: 96, height: 54, method: 'composed' });
    expect(s.captured_at).toBe(new Date(env.clock.now()).toISOString());
    const image = await download(p.screen.id, capture_id);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/webp');
    expect(image.headers['cache-control']).toBe('private, no-store');
    expect(image.body.length).toBe(s.bytes);
    expect(sha256(image.body)).toBe(s.sha256);
    const { data } = await sharp(image.body).raw().toBuffer({ resolveWithObject: true });
    expect([data[0]! < 10, data[1]! > 245, data[2]! < 10]).toEqual([true, true, true]); // green, re-encoded
    const [ready] = await events(p.screen.id, 'screen.screenshot_ready');
    expect(ready!.details).toEqual({
      capture_id,
      bytes: s.bytes,
      width: 96,
      height: 54,
      sha256: s.sha256,
      method: 'composed',
    });
  });

  it('records the method a capture names (a kiosk’s real pixels)', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    expect((await upload(p, capture_id, await still(), { 'marquee-capture-method': 'kiosk' })).status).toBe(204);
    expect((await status(p.screen.id)).method).toBe('kiosk');
    expect((await upload(p, capture_id, await still(), { 'marquee-capture-method': 'x' })).status).toBe(400);
  });

  it('refuses a missing, stale, replaced, already used or expired capture id with resource_conflict', async () => {
    const p = await env.player();
    const first = await requested(p.screen.id);
    const second = await requested(p.screen.id);
    const image = await still();
    const code = async (id: string | undefined) => (await upload(p, id, image)).json().code;
    expect(await code(undefined)).toBe('resource_conflict');
    expect(await code('shot_AAAAAAAAAAAAAAAAAAAAAA')).toBe('resource_conflict');
    expect(await code(first.capture_id)).toBe('resource_conflict'); // replaced by the second
    expect((await upload(p, second.capture_id, image)).status).toBe(204);
    expect(await code(second.capture_id)).toBe('resource_conflict'); // used
    const third = await requested(p.screen.id);
    env.clock.advance(SCREENSHOT_TTL_MS);
    expect(await code(third.capture_id)).toBe('resource_conflict'); // expired
  });

  it('takes one of several uploads of the same capture arriving together', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    const images = await Promise.all([still('#ff0000'), still('#0000ff'), still('#00ff00')]);
    const answers = await Promise.all(images.map((image) => upload(p, capture_id, image)));
    expect(answers.map((a) => (a.status === 204 ? 'stored' : a.json().code)).sort()).toEqual([
      'resource_conflict',
      'resource_conflict',
      'stored',
    ]);
    expect(await events(p.screen.id, 'screen.screenshot_ready')).toHaveLength(1);
  });

  it('refuses what is not a still WebP: another type, an animation, garbage, more than 2 MiB', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    const frames = await Promise.all(
      ['#f00', '#00f'].map((c) =>
        sharp({ create: { width: 8, height: 8, channels: 3, background: c } })
          .png()
          .toBuffer(),
      ),
    );
    const animated = await sharp(frames, { join: { animated: true } })
      .webp()
      .toBuffer();
    const garbage = Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBP'), Buffer.alloc(64, 7)]);
    const cases = [
      await upload(p, capture_id, png, { 'content-type': 'image/png' }),
      await upload(p, capture_id, png),
      await upload(p, capture_id, animated),
      await upload(p, capture_id, garbage),
      await upload(p, capture_id, Buffer.alloc(SCREENSHOT_MAX_BYTES + 1)),
    ];
    expect(cases.map((r) => [r.status, r.json().code])).toEqual(Array(5).fill([400, 'invalid_request']));
    expect(cases[2]!.json().errors[0].code).toBe('animated');
    expect((await status(p.screen.id)).state).toBe('pending'); // nothing was stored
  });

  it('is forbidden to an anonymous (read-only) session and needs a runtime credential', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    const viewer = await anonymousPlayer(env.server, p.screen);
    expect((await upload(viewer, capture_id, await still())).status).toBe(403);
    const res = await env.server.request('PUT', '/runtime/v1/screenshot', {
      body: await still(),
      headers: { 'content-type': 'image/webp', 'marquee-capture-id': capture_id },
    });
    expect(res.status).toBe(401);
  });
});

describe('latest wins', () => {
  it('a later request replaces an earlier one; the older ready image stays until a later upload', async () => {
    const p = await env.player();
    const first = await requested(p.screen.id);
    await upload(p, first.capture_id, await still('#ff0000'));
    const second = await requested(p.screen.id);
    const s = await status(p.screen.id);
    expect(s).toMatchObject({ state: 'pending', capture_id: second.capture_id, width: 64 });
    const old = await download(p.screen.id);
    expect(old.status).toBe(200); // the first image, still served
    const named = await download(p.screen.id, first.capture_id);
    expect(named.status).toBe(200);
    const pendingNamed = await download(p.screen.id, second.capture_id);
    expect([pendingNamed.status, pendingNamed.json().code]).toEqual([404, 'screenshot_unavailable']);
    await upload(p, second.capture_id, await still('#0000ff'));
    const replaced = await download(p.screen.id, first.capture_id);
    expect([replaced.status, replaced.json().code]).toEqual([409, 'resource_conflict']);
  });
});

describe('time-outs', () => {
  it('a request no player answered times out once, with the reason that the screen was offline', async () => {
    const p = await env.player(); // paired, but no stream was ever connected
    const { capture_id } = await requested(p.screen.id);
    env.clock.advance(SCREENSHOT_TTL_MS - 1);
    expect((await status(p.screen.id)).state).toBe('pending');
    env.clock.advance(1);
    const s = await status(p.screen.id);
    expect(s).toMatchObject({ state: 'timed_out', capture_id });
    expect(s.reason).toMatch(/offline/);
    await status(p.screen.id);
    const failed = await events(p.screen.id, 'screen.screenshot_failed');
    expect(failed).toEqual([{ runtime: 0, details: { capture_id, reason: 'expired', detail: s.reason } }]);
    const named = await download(p.screen.id, capture_id);
    expect([named.status, named.json().code]).toEqual([404, 'screenshot_unavailable']);
  });

  it('says the player did not answer when the screen was online', async () => {
    const p = await env.player();
    const reader = await StreamReader.open(env.server, '/runtime/v1/events', { cookies: p.cookies });
    open.push(reader);
    await reader.waitUntil(() => reader.raw.includes('retry:'), 'the preamble');
    const { capture_id } = await requested(p.screen.id);
    env.clock.advance(SCREENSHOT_TTL_MS);
    const s = await status(p.screen.id);
    expect(s.capture_id).toBe(capture_id);
    expect(s.reason).toMatch(/player did not send/);
    reader.close();
  });

  it('is recorded by the sweep without a reader, and by the next request', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    env.clock.advance(SCREENSHOT_TTL_MS);
    await expireScreenshots(env.server.services, env.clock.now());
    expect((await events(p.screen.id, 'screen.screenshot_failed')).map((e) => e.details.capture_id)).toEqual([
      capture_id,
    ]);
    const second = await requested(p.screen.id);
    env.clock.advance(SCREENSHOT_TTL_MS);
    await requested(p.screen.id); // the next request records the earlier one's time-out first
    expect((await events(p.screen.id, 'screen.screenshot_failed')).map((e) => e.details.capture_id)).toEqual([
      capture_id,
      second.capture_id,
    ]);
  });

  it('an idle screen has no screenshot: status idle, download screenshot_unavailable', async () => {
    const p = await env.player();
    expect(await status(p.screen.id)).toEqual({ state: 'idle' });
    const res = await download(p.screen.id);
    expect([res.status, res.json().code]).toEqual([404, 'screenshot_unavailable']);
  });
});

describe('budgets', () => {
  it('allows 10 requests a minute per screen, then 429 rate_limited', async () => {
    const p = await env.player();
    for (let i = 0; i < 10; i++) expect((await request(p.screen.id)).status).toBe(202);
    const res = await request(p.screen.id);
    expect([res.status, res.json().code]).toEqual([429, 'rate_limited']);
  });
});

describe('a deleted screen', () => {
  it('loses its screenshot with the sweep', async () => {
    const p = await env.player();
    const { capture_id } = await requested(p.screen.id);
    expect((await upload(p, capture_id, await still())).status).toBe(204);
    const removed = await env.server.request('DELETE', `/api/v1/screens/${p.screen.id}`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(removed.status, removed.text).toBeLessThan(300);
    await dropDeletedScreenshots(env.server.services);
    const rows = await env.server.services.store.db
      .selectFrom('screen_screenshots')
      .select('screen_id')
      .where('screen_id', '=', p.screen.id)
      .execute();
    expect(rows).toEqual([]);
  });
});
