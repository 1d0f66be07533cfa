// The client's screenshot methods against a real server: request, wait (ready, replaced, timed
// out, still pending), and the image whose ETag is its SHA-256.
import crypto from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../../server/clock';
import { pairedPlayer, type Player } from '../../server/runtime/runtime.fixtures';
import { TestServer } from '../../server/testing/harness';
import { SCREENSHOT_TTL_MS } from '../contract/screen-health';
import { testClient } from '../testing/client-fixture';
import type { MarqueeClient } from './marquee-client';

let server: TestServer;
let token: string;
let client: MarqueeClient;
const clock = new TestClock('2026-11-25T10:00:00Z');

beforeAll(async () => {
  server = await TestServer.start({ clock });
  ({ token } = await server.enroll());
  client = testClient(`http://127.0.0.1:${server.port}`, { token });
});
afterAll(async () => server?.stop());

const upload = async (p: Player, captureId: string) =>
  server.request('PUT', '/runtime/v1/screenshot', {
    cookies: p.cookies,
    body: await sharp({ create: { width: 40, height: 20, channels: 3, background: '#808080' } })
      .webp()
      .toBuffer(),
    headers: { 'content-type': 'image/webp', 'marquee-capture-id': captureId },
  });

describe('screenshots through the client', () => {
  it('waits until ready and downloads the image its status names', async () => {
    const p = await pairedPlayer(server, token);
    const { capture_id } = (await client.screens.requestScreenshot(p.screen.id)).data;
    const waiting = client.screens.awaitScreenshot(p.screen.id, capture_id, { intervalMs: 20 });
    expect((await upload(p, capture_id)).status).toBe(204);
    const waited = await waiting;
    expect(waited).toMatchObject({ outcome: 'ready', status: { state: 'ready', width: 40, height: 20 } });
    const image = await client.screens.screenshotImage(p.screen.id, { captureId: capture_id });
    const bytes = Buffer.from(await new Response(image.body).arrayBuffer());
    expect([image.bytes, image.sha256]).toEqual([bytes.length, waited.status.sha256]);
    expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(image.sha256);
  });

  it('tells a replaced request, a timed-out one and one still pending apart', async () => {
    const p = await pairedPlayer(server, token);
    const first = (await client.screens.requestScreenshot(p.screen.id)).data;
    const second = (await client.screens.requestScreenshot(p.screen.id)).data;
    expect((await client.screens.awaitScreenshot(p.screen.id, first.capture_id)).outcome).toBe('replaced');
    expect(
      (await client.screens.awaitScreenshot(p.screen.id, second.capture_id, { intervalMs: 10, timeoutMs: 50 })).outcome,
    ).toBe('still_pending');
    clock.advance(SCREENSHOT_TTL_MS);
    const timedOut = await client.screens.awaitScreenshot(p.screen.id, second.capture_id);
    expect(timedOut.outcome).toBe('timed_out');
    expect(timedOut.status.reason).toMatch(/offline/);
  });
});
