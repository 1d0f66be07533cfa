// The typed client bundled for the browser and run in Chromium against a real Marquee server: the
// bundle must hold no Node module, and the main flows (enroll, media upload from a File, archive
// upload from a Blob, a playlist of both, a byte range, the event stream, a typed problem) work
// there as they do in Node. The test page is served at the server's own origin (intercepted by
// Playwright), since the control plane sends no CORS headers.
import crypto from 'node:crypto';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../testing/chromium';
import sharp from 'sharp';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../server/testing/harness';
import { packApplication } from '../pack/pack';

/**
 * Minified size bound. About 20 kB is the client itself; the rest is zod, which sdk/sse pulls in
 * through the schemas that share sdk/contract/events.ts with the stream constants it needs.
 */
const BUNDLE_MAX_BYTES = 160_000;

let server: TestServer;
let browser: Browser;
let bundle: string;

async function bundleClient(): Promise<string> {
  const result = (await build({
    configFile: false,
    logLevel: 'silent',
    publicDir: false,
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      lib: {
        entry: path.resolve(import.meta.dirname, 'marquee-client.ts'),
        formats: ['es'],
        fileName: () => 'marquee-client.mjs',
      },
    },
  })) as { output: { type: string; code?: string }[] }[] | { output: { type: string; code?: string }[] };
  const outputs = Array.isArray(result) ? result : [result];
  const chunks = outputs[0]!.output.filter((o) => o.type === 'chunk');
  if (chunks.length !== 1 || !chunks[0]!.code) throw new Error('expected one chunk');
  return chunks[0]!.code;
}

beforeAll(async () => {
  [server, bundle] = await Promise.all([TestServer.start(), bundleClient()]);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the client in a browser', () => {
  it('bundles without any Node module and stays small', () => {
    expect(bundle).not.toMatch(/["'](node:)?(fs|crypto|path|stream|http|os)(\/[a-z]+)?["']/);
    expect(bundle.length).toBeLessThan(BUNDLE_MAX_BYTES);
  });

  it('enrolls, uploads a File and an archive Blob, builds a playlist, reads a range, follows events and throws typed problems', async () => {
    const origin = `http://localhost:${server.port}`;
    const png = await sharp({ create: { width: 80, height: 45, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    const packed = await packApplication(path.resolve(import.meta.dirname, '../examples/kv-counter'), {
      runtime: Buffer.from('/* bridge */'),
      name: 'KV counter',
    });

    const page = await browser.newPage();
    await page.route(`${origin}/client-test/**`, (route) => {
      const url = new URL(route.request().url());
      if (url.pathname.endsWith('.mjs')) return route.fulfill({ contentType: 'text/javascript', body: bundle });
      const loader = `<script type="module">import * as client from './marquee-client.mjs'; window.marqueeClient = client;</script>`;
      return route.fulfill({ contentType: 'text/html', body: `<!doctype html><title>client</title>${loader}` });
    });
    await page.goto(`${origin}/client-test/index.html`);
    await page.waitForFunction(() => (window as { marqueeClient?: unknown }).marqueeClient !== undefined);

    const outcome = await page.evaluate(
      async ({ clientId, pngBytes, archiveBytes, headers }) => {
        const { createMarqueeClient, MarqueeProblem } = (window as any).marqueeClient;
        const c = createMarqueeClient({ baseUrl: location.origin });
        const enrolled = await c.enroll({ client_id: clientId, email: 'browser@example.com' });
        c.useToken(enrolled.data.token);

        const seen: string[] = [];
        const stream = c.events.follow({ onEvent: (e: { type: string }) => void seen.push(e.type) });

        const progress: { stage: string; sent: number; total?: number }[] = [];
        const file = new File([new Uint8Array(pngBytes)], 'lobby.png', { type: 'image/png' });
        const media = await c.media.upload(file, {
          onProgress: (p: { stage: string; sent: number; total?: number }) =>
            progress.push({ stage: p.stage, sent: p.sent, total: p.total }),
          wait: { intervalMs: 50 },
        });
        const app = await c.applications.publish(
          { archive: new Blob([new Uint8Array(archiveBytes)]), headers },
          { wait: { intervalMs: 50 } },
        );

        const canvas = { width: 1920, height: 1080, background: '#000000FF' };
        const rect = { x: 0, y: 0, width: 1920, height: 1080 };
        const playlist = await c.playlists.create({
          name: 'Browser loop',
          pages: [
            {
              id: 'image',
              canvas,
              transition: { type: 'crossfade', duration_ms: 0 },
              advance: { mode: 'duration', after_ms: 5000 },
              placements: [
                {
                  id: 'i',
                  content: { type: 'image', selector: { by: 'id', media_id: media.data.id } },
                  rect,
                  layer: 0,
                  content_fit: 'cover',
                },
              ],
            },
            {
              id: 'counter',
              canvas,
              transition: { type: 'crossfade', duration_ms: 0 },
              advance: { mode: 'application', max_ms: 60000 },
              placements: [
                {
                  id: 'a',
                  content: { type: 'application', release_id: app.releaseId },
                  rect,
                  layer: 0,
                  content_fit: 'fill',
                  controller: true,
                },
              ],
            },
          ],
        });
        const range = await c.media.contentBytes(media.data.id, { range: { start: 0, end: 7 } });

        for (let i = 0; i < 200 && !seen.includes('playlist.created'); i++) await new Promise((r) => setTimeout(r, 10));
        stream.close();

        let problem: unknown;
        try {
          await c.playlists.get('pl_does_not_exist');
        } catch (error) {
          problem = {
            typed: error instanceof MarqueeProblem,
            code: (error as { code: string }).code,
            status: (error as { status: number }).status,
          };
        }
        return {
          media: { state: media.data.state, width: media.data.width, credits: typeof media.credits?.remaining },
          app: { state: app.data.state, release: app.data.latest_ready_release === app.releaseId },
          playlist: {
            revision: playlist.revision,
            kinds: playlist.data.pages.map(
              (p: { placements: { content: { type: string } }[] }) => p.placements[0]!.content.type,
            ),
          },
          range: { status: range.status, bytes: Array.from(range.data as Uint8Array), contentRange: range.range },
          progress,
          seen,
          problem,
        };
      },
      {
        clientId: `cli_${crypto.randomBytes(32).toString('base64url')}`,
        pngBytes: [...png],
        archiveBytes: [...packed.archive],
        headers: packed.headers,
      },
    );

    expect(outcome.media).toEqual({ state: 'ready', width: 80, credits: 'number' });
    expect(outcome.app).toEqual({ state: 'ready', release: true });
    expect(outcome.playlist).toEqual({ revision: 1, kinds: ['image', 'application'] });
    expect(outcome.range).toEqual({
      status: 206,
      bytes: [...png.subarray(0, 8)],
      contentRange: { start: 0, end: 7, size: png.length },
    });
    // Browsers send the body whole: progress says it started and when it was all sent.
    expect(outcome.progress.filter((p) => p.stage === 'upload')).toEqual([
      { stage: 'upload', sent: 0, total: png.length },
      { stage: 'upload', sent: png.length, total: png.length },
    ]);
    expect(outcome.seen).toEqual(expect.arrayContaining(['media.ready', 'application.published', 'playlist.created']));
    expect(outcome.problem).toEqual({ typed: true, code: 'not_found', status: 404 });
    await page.close();
  }, 60_000);
});
