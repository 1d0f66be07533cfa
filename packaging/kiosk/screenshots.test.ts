// The agent answers a screenshot request it hears upstream with its shell's capture (method kiosk),
// tells the window's surface, and the screen's health shows a kiosk with its host facts. The
// renderer never hears the request.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import type { KioskAgent } from './agent';
import { HOST, Renderer, startAgent, tempDataDir, until } from './agent.fixtures';
import { KIOSK_VERSION, stillFrom } from './screenshots';

let server: TestServer;
let token: string;
const agents: KioskAgent[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  ({ token } = await server.enroll());
});
afterAll(async () => {
  for (const agent of agents) await agent.stop().catch(() => undefined);
  await server.stop();
});

const surface = { id: 'primary', width: 1920, height: 1080, pixel_ratio: 1, presentation: 'output' as const };

describe('kiosk screenshots', () => {
  it('are answered by the agent with the shell’s capture, and the health names a kiosk, its host and surface', async () => {
    const agent = await startAgent(server.origin, tempDataDir());
    agents.push(agent);
    const png = await sharp({ create: { width: 320, height: 180, channels: 3, background: '#ffcc00' } })
      .png()
      .toBuffer();
    agent.screenshots.source = { capture: async () => png, surface: async () => surface };
    const renderer = new Renderer(agent);
    const { screen } = await renderer.pair(server.origin, token);
    await until(() => agent.isOnline);

    const requested = await server.request('POST', `/api/v1/screens/${screen.id}/screenshot`, { token });
    expect(requested.status, requested.text).toBe(202);
    const status = await until(async () => {
      const s = (await server.request('GET', `/api/v1/screens/${screen.id}/screenshot/status`, { token })).json();
      return s.state === 'ready' ? s : undefined;
    });
    expect(status).toMatchObject({ capture_id: requested.json().capture_id, method: 'kiosk', width: 160, height: 90 });

    const view = await until(async () => {
      const v = (await server.request('GET', `/api/v1/screens/${screen.id}`, { token })).json();
      return v.observation ? v : undefined;
    });
    expect(view.observation.surfaces).toEqual([surface]);
    expect(view.health.player).toEqual({ kind: 'kiosk', version: KIOSK_VERSION });
    expect(view.health.host).toEqual({ platform: HOST.platform, model: HOST.model, manufacturer: HOST.manufacturer });
  }, 60_000);

  it('are not answered once expired, nor without a shell that can capture', async () => {
    const uploads: string[] = [];
    const { KioskScreenshots } = await import('./screenshots');
    const shots = new KioskScreenshots({
      upload: async (c) => void uploads.push(c.captureId),
      observe: async () => {},
    });
    const request = { capture_id: 'shot_nocapturenocapture', expires_at: new Date(Date.now() + 30_000).toISOString() };
    expect(await shots.answer(request)).toBe(false); // no source
    shots.source = {
      capture: async () =>
        sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
          .png()
          .toBuffer(),
    };
    expect(await shots.answer({ ...request, expires_at: new Date(Date.now() - 1).toISOString() })).toBe(false);
    expect(await shots.answer(request)).toBe(true);
    expect(uploads).toEqual(['shot_nocapturenocapture']);
  });

  it('shrink a still until it fits the request’s byte budget', async () => {
    const noise = await sharp(
      Buffer.from(Array.from({ length: 400 * 400 * 3 }, () => Math.floor(Math.random() * 256))),
      {
        raw: { width: 400, height: 400, channels: 3 },
      },
    )
      .png()
      .toBuffer();
    const roomy = await stillFrom(noise, { max_width_divisor: 1, max_height_divisor: 1, quality: 80 });
    const tight = await stillFrom(noise, {
      max_width_divisor: 1,
      max_height_divisor: 1,
      quality: 80,
      max_bytes: roomy.length - 1,
    });
    expect(tight.length).toBeLessThan(roomy.length);
  });

  it("reports the package's version", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'));
    expect(KIOSK_VERSION).toBe(pkg.version);
  });
});
