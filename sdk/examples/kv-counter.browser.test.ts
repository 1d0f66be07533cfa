// The example app, packed by the SDK packer with the bridge runtime, running in a player page.
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../testing/chromium';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packApplication } from '../pack/pack';
import { BridgeFixture, buildBridgeBundles, CAPABILITY_HANDLE } from '../testing/bridge-fixture';

const EXAMPLE = path.resolve(import.meta.dirname, 'kv-counter');

let browser: Browser;
let fixture: BridgeFixture;
let files: Map<string, Buffer>;

async function unpack(archive: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const extractor = tar.extract();
  for await (const entry of (async function* () {
    const done = new Promise<void>((resolve, reject) => {
      extractor.on('finish', () => resolve());
      extractor.on('error', reject);
    });
    extractor.end(zlib.gunzipSync(archive));
    yield* extractor;
    await done;
  })()) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    if (entry.header.type === 'file') out.set(entry.header.name, Buffer.concat(chunks));
  }
  return out;
}

beforeAll(async () => {
  const bundles = await buildBridgeBundles();
  const packed = await packApplication(EXAMPLE, { runtime: Buffer.from(bundles.classic), name: 'KV counter' });
  files = await unpack(packed.archive);
  fixture = new BridgeFixture(bundles);
  for (const [name, bytes] of files) fixture.releaseFiles.set(name, bytes);
  await fixture.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.stop();
});

async function host(page: Page, kvWrite = true): Promise<void> {
  await page.goto(`${fixture.playerOrigin}/player.html`);
  await page.waitForFunction(() => (window as any).bridgeLoaded === true);
  await page.evaluate(
    ({ src, releaseOrigin, handle, kvWrite }) => {
      const w = window as any;
      const frame = document.createElement('iframe');
      frame.id = 'app';
      frame.style.cssText = 'width:960px;height:540px;border:0';
      w.bridge.prepareApplicationFrame(frame);
      document.body.append(frame);
      const r = w.records;
      w.host = new w.bridge.ApplicationFrameBridge({
        frame,
        releaseOrigin,
        placementId: 'counter',
        applicationId: 'app_kvcounter0001',
        releaseId: 'rel_kvcounter0001',
        capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': kvWrite },
        viewport: { width: 1280, height: 720 },
        placement: { width: 960, height: 540 },
        runtimeKv: w.bridge.runtimeKvFetch({ runtimeOrigin: location.origin, capabilityHandle: () => handle }),
        onAdvance: (g: number) => r.advances.push(g),
        onEvent: (c: string) => r.events.push(c),
        onDiagnostic: (d: { code: string }) => r.diagnostics.push(d.code),
      });
      w.host.activate();
      frame.src = src;
    },
    {
      src: `${fixture.releaseOrigin}/index.html`,
      releaseOrigin: fixture.releaseOrigin,
      handle: CAPABILITY_HANDLE,
      kvWrite,
    },
  );
}

describe('kv-counter example', () => {
  it('packs with the runtime injected into its index.html', () => {
    expect([...files.keys()].sort()).toEqual(['_marquee/runtime.js', 'app.js', 'index.html', 'style.css']);
    expect(files.get('index.html')!.toString()).toContain(
      '<script src="./_marquee/runtime.js" data-marquee-sdk="1"></script>',
    );
  });

  it('counts each activation in KV, shows the count, and advances the page after a few seconds', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await host(page);
    const app = page.frameLocator('#app');
    await expect.poll(() => app.locator('#counter').getAttribute('data-state'), { timeout: 10_000 }).toBe('counted');
    expect(await app.locator('#count').textContent()).toBe('1');
    await page.screenshot({ path: path.join(import.meta.dirname, '../../test-results/kv-counter.png') });
    await expect
      .poll(async () => await page.evaluate(() => (window as any).records.advances), { timeout: 10_000 })
      .toEqual([1]);

    await page.evaluate(() => (window as any).host.activate());
    await expect.poll(() => app.locator('#count').textContent(), { timeout: 10_000 }).toBe('2');
    await expect
      .poll(async () => await page.evaluate(() => (window as any).records.advances), { timeout: 10_000 })
      .toEqual([1, 2]);
    const records = await page.evaluate(() => (window as any).records);
    expect(records.events).toEqual(['counter.incremented', 'counter.incremented']);
    expect(records.diagnostics).toEqual([]);
    const writes = fixture.kvRecords.filter((r) => r.method === 'PUT');
    expect(writes.map((w) => w.ifMatch)).toEqual([undefined, '"1"']);
    await page.close();
  }, 30_000);

  it('on a screen that may only read (a public screen), shows the count without writing, and still advances', async () => {
    fixture.resetKv();
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await host(page, false);
    const app = page.frameLocator('#app');
    await expect.poll(() => app.locator('#counter').getAttribute('data-state'), { timeout: 10_000 }).toBe('read-only');
    expect(await app.locator('#count').textContent()).toBe('0');
    await expect
      .poll(async () => await page.evaluate(() => (window as any).records.advances), { timeout: 10_000 })
      .toEqual([1]);
    expect(fixture.kvRecords.filter((r) => r.method !== 'GET')).toEqual([]);
    await page.close();
  }, 30_000);
});
