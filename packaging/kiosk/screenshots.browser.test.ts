// The kiosk's screenshots are real pixels: Debian's Chromium (headless) shows a page of one colour,
// the agent's screenshot module captures it through the DevTools pipe, and the WebP it uploads has
// that colour at its centre; the window's surface is reported with it.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScreenObservation } from '../../sdk/contract/screen-health';
import { CHROMIUM_PATH } from '../../sdk/testing/chromium';
import { ChromiumKiosk } from './chromium';
import { KioskScreenshots } from './screenshots';

const COLOUR = { r: 0xd0, g: 0x40, b: 0x20 };

describe('kiosk screenshots through the Chromium shell', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<body style="margin:0;background:#d04020"></body>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('capture the window’s real pixels, scaled by the request’s divisors, as a still WebP', async () => {
    const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-chromium-shot-'));
    const kiosk = await ChromiumKiosk.launch({ url, profileDir, executable: CHROMIUM_PATH, headless: true });
    try {
      const uploads: { captureId: string; method: string; image: Uint8Array }[] = [];
      const observations: ScreenObservation[] = [];
      const shots = new KioskScreenshots({
        upload: async (c) => void uploads.push(c),
        observe: async (o) => void observations.push(o),
      });
      shots.source = kiosk;
      await new Promise((r) => setTimeout(r, 500)); // the page painted
      const sent = await shots.answer({
        capture_id: 'shot_kioskkioskkioskkiosk',
        expires_at: new Date(Date.now() + 30_000).toISOString(),
        max_width_divisor: 2,
        max_height_divisor: 2,
        quality: 80,
        max_bytes: 2_097_152,
      });
      expect(sent).toBe(true);
      expect(uploads.map((u) => [u.captureId, u.method])).toEqual([['shot_kioskkioskkioskkiosk', 'kiosk']]);
      const image = Buffer.from(uploads[0]!.image);
      const full = await sharp(await kiosk.capture()).metadata();
      const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([Math.round(full.width! / 2), Math.round(full.height! / 2)]);
      const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * 3;
      for (const [i, channel] of (['r', 'g', 'b'] as const).entries())
        expect(Math.abs(data[at + i]! - COLOUR[channel]), channel).toBeLessThanOrEqual(12);
      fs.mkdirSync(path.resolve(import.meta.dirname, '../../e2e/artifacts'), { recursive: true });
      fs.writeFileSync(path.resolve(import.meta.dirname, '../../e2e/artifacts/kiosk-screenshot.webp'), image);

      await shots.reportSurface();
      await shots.reportSurface(); // the same surface is told once
      expect(observations).toHaveLength(1);
      expect(observations[0]!.surfaces[0]).toMatchObject({ id: 'primary', presentation: 'windowed' });
      expect(observations[0]!.surfaces[0]!.width).toBeGreaterThan(0);
    } finally {
      await kiosk.close();
      fs.rmSync(profileDir, { recursive: true, force: true });
    }
  }, 60_000);
});
