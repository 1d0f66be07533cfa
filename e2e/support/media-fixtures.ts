// Media made inside the test, uploaded through the real media API: PNGs drawn with sharp, a WebM
// (VP8) clip encoded by mediabunny with the browser's own WebCodecs encoder, and an MP3 of silent
// MPEG-1 Layer III frames (what server/media builds its fixtures from).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser } from '@playwright/test';
import sharp from 'sharp';

/** A card-like image: a background colour, a title and a subtitle, so screenshots show which page is up. */
export async function titledPng(
  width: number,
  height: number,
  background: string,
  title: string,
  subtitle = '',
): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="${background}"/>
    <text x="50%" y="46%" text-anchor="middle" font-family="DejaVu Sans, sans-serif" font-weight="bold" font-size="${Math.round(height / 7)}" fill="#ffffff">${title}</text>
    <text x="50%" y="60%" text-anchor="middle" font-family="DejaVu Sans, sans-serif" font-size="${Math.round(height / 22)}" fill="#e6edf3" opacity="0.85">${subtitle}</text>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** `seconds` of MPEG-1 Layer III 128 kbit/s 44.1 kHz frames with silent granules (417 bytes, 1152 samples each). */
export function silentMp3(seconds: number): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  const frames = Math.ceil((seconds * 44100) / 1152);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** A real, decodable WebM/VP8 clip: a moving bar over a colour field, encoded in Chromium by mediabunny. */
export async function webmClip(
  browser: Browser,
  secureOrigin: string,
  options: { seconds: number; width: number; height: number; color: string },
): Promise<Buffer> {
  const require = createRequire(import.meta.url);
  const source = fs.readFileSync(
    `${require
      .resolve('mediabunny')
      .replace(/[^/]+$/, '')
      .replace(/\/dist\/.*$/, '')}/dist/bundles/mediabunny.min.mjs`,
    'utf8',
  );
  const page = await browser.newPage();
  try {
    // WebCodecs needs a secure context: any page of a localhost origin is one.
    await page.goto(`${secureOrigin}/.health`);
    // Imported by a string expression: a test runner may rewrite `import()` in a function it ships to the page.
    await page.evaluate(`(async () => {
      const url = URL.createObjectURL(new Blob([${JSON.stringify(source)}], { type: 'text/javascript' }));
      window.mediabunny = await import(url);
      URL.revokeObjectURL(url);
    })()`);
    const bytes = await page.evaluate(async ({ seconds, width, height, color }) => {
      const mb = (window as unknown as { mediabunny: typeof import('mediabunny') }).mediabunny;
      const canvas = new OffscreenCanvas(width, height);
      const ctx = canvas.getContext('2d')!;
      const output = new mb.Output({ format: new mb.WebMOutputFormat(), target: new mb.BufferTarget() });
      const video = new mb.CanvasSource(canvas, { codec: 'vp8', bitrate: 500_000 });
      output.addVideoTrack(video, { frameRate: 25 });
      await output.start();
      const frames = seconds * 25;
      for (let i = 0; i < frames; i++) {
        ctx.fillStyle = color;
        ctx.fillRect(0, 0, width, height);
        ctx.fillStyle = '#ffffff';
        ctx.fillRect(((i / frames) * width) | 0, 0, width / 10, height);
        await video.add(i / 25, 1 / 25);
      }
      await output.finalize();
      return Array.from(new Uint8Array(output.target.buffer!));
    }, options);
    return Buffer.from(bytes);
  } finally {
    await page.close();
  }
}
