// The child's root of trust in Chromium: a frame learns its player from its release host's
// /.marquee/player-origin answer before it accepts any handshake, holds the latest handshake that
// arrives meanwhile, and stays inert when the host names no player or another one.
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../testing/chromium';
import { BridgeFixture, buildBridgeBundles } from '../testing/bridge-fixture';

let browser: Browser;
let fixture: BridgeFixture;

beforeAll(async () => {
  fixture = new BridgeFixture(await buildBridgeBundles());
  await fixture.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.stop();
});

afterEach(() => {
  fixture.playerOriginAnswer = null;
  fixture.playerOriginDelayMs = 0;
  fixture.playerOriginRequests.length = 0;
  fixture.playerOriginFailures.length = 0;
});

/** The player page with the module child framed on the release host, no parent bridge: the test speaks for the player. */
async function framedChild(): Promise<{ page: Page; frame: Frame }> {
  const page = await browser.newPage();
  await page.goto(`${fixture.playerOrigin}/player.html`);
  await page.waitForFunction(() => (window as any).bridgeLoaded === true);
  const src = `${fixture.releaseOrigin}/app-module.html`;
  await page.evaluate((src) => {
    (window as any).answers = [];
    addEventListener('message', (e) => (window as any).answers.push(e.data));
    const frame = document.createElement('iframe');
    frame.id = 'app';
    frame.src = src;
    document.body.append(frame);
  }, src);
  let frame: Frame | undefined;
  await expect.poll(() => (frame = page.frames().find((f) => f.url() === src)) !== undefined).toBe(true);
  await frame!.waitForFunction(() => (window as any).appLoaded === true);
  return { page, frame: frame! };
}

function handshake(page: Page, challenge: string): Promise<void> {
  return page.evaluate((challenge) => {
    const app = (document.getElementById('app') as HTMLIFrameElement).contentWindow!;
    app.postMessage({ protocol: 'marquee.parent-handshake/1', kind: 'parent.handshake', challenge }, '*');
  }, challenge);
}

const answers = (page: Page) =>
  page.evaluate(() => (window as any).answers as { kind: string; challenge: string; parent_origin: string }[]);
const diagnostics = (frame: Frame) =>
  frame.evaluate(() => (window as any).diagnostics.map((d: { code: string }) => d.code) as string[]);

describe('the player origin a frame trusts', () => {
  it('is asked of the release host, same-origin and uncached; a handshake meanwhile waits, and only the latest is answered', async () => {
    fixture.playerOriginDelayMs = 1500;
    const { page, frame } = await framedChild();
    await handshake(page, 'A'.repeat(32));
    await handshake(page, 'B'.repeat(32));
    await page.waitForTimeout(300);
    expect(await answers(page)).toEqual([]); // nothing is pinned before the host has answered
    await expect.poll(() => answers(page), { timeout: 10_000 }).toHaveLength(1);
    expect(await answers(page)).toEqual([
      {
        protocol: 'marquee.parent-handshake/1',
        kind: 'child.handshake',
        challenge: 'B'.repeat(32),
        parent_origin: fixture.playerOrigin,
      },
    ]);
    expect(await diagnostics(frame)).toEqual([]);
    expect(fixture.playerOriginRequests).toHaveLength(1);
    expect(fixture.playerOriginRequests[0]).toMatchObject({
      site: 'same-origin',
      mode: 'cors',
      cacheControl: 'no-cache',
    });
    await page.close();
  });

  it('is asked again after a failure that may pass (no answer, a 5xx), and the frame then pins its player', async () => {
    fixture.playerOriginFailures.push('reset', 503);
    const { page, frame } = await framedChild();
    await handshake(page, 'E'.repeat(32));
    await expect.poll(() => answers(page), { timeout: 10_000 }).toHaveLength(1);
    expect((await answers(page))[0]).toMatchObject({ challenge: 'E'.repeat(32), parent_origin: fixture.playerOrigin });
    expect(fixture.playerOriginRequests).toHaveLength(3);
    expect(await diagnostics(frame)).toEqual([]);
    await page.close();
  });

  it('gives up, inert, when the release host keeps failing for 10 s, having asked with backoff rather than in a storm', async () => {
    fixture.playerOriginFailures.push(...Array<503>(100).fill(503));
    const { frame } = await framedChild();
    const startedAt = Date.now();
    const ready = await frame.evaluate(() =>
      (window as any).app.ready().then(
        () => 'ready',
        (e: { code: string }) => e.code,
      ),
    );
    expect(ready).toBe('inert');
    expect(Date.now() - startedAt).toBeLessThan(12_000);
    // 250, 500, 1000, 2000 and 4000 ms apart: six requests fit in 10 s.
    expect(fixture.playerOriginRequests.length).toBeGreaterThanOrEqual(5);
    expect(fixture.playerOriginRequests.length).toBeLessThanOrEqual(7);
  }, 30_000);

  it('stays inert when the release host names no player: an error, a redirect, a non-JSON answer, or not exactly an origin', async () => {
    for (const answer of [
      { status: 403, body: JSON.stringify({ code: 'forbidden' }), type: 'application/problem+json' },
      {
        status: 302,
        body: '',
        type: 'text/plain',
        headers: { location: `${fixture.releaseOrigin}/.marquee/elsewhere` },
      },
      { status: 200, body: JSON.stringify({ player_origin: fixture.playerOrigin }), type: 'text/html' },
      { status: 200, body: JSON.stringify({ player_origin: `${fixture.playerOrigin}/` }), type: 'application/json' },
      { status: 200, body: '{"player_origin":', type: 'application/json' },
    ]) {
      fixture.playerOriginAnswer = answer;
      fixture.playerOriginRequests.length = 0;
      const { page, frame } = await framedChild();
      const ready = frame.evaluate(() =>
        (window as any).app.ready().then(
          () => 'ready',
          (e: { code: string }) => e.code,
        ),
      );
      expect(await ready, JSON.stringify(answer)).toBe('inert');
      await handshake(page, 'C'.repeat(32));
      await expect.poll(() => diagnostics(frame)).toEqual(['inert', 'untrusted_origin']);
      expect(await answers(page)).toEqual([]);
      expect(await frame.evaluate(() => (window as any).app.context)).toBeNull();
      // An answer is an answer: asked once, not again.
      expect(fixture.playerOriginRequests, JSON.stringify(answer)).toHaveLength(1);
      await page.close();
    }
  });

  it('pins exactly the player the host names: the real player is refused when the host names another', async () => {
    fixture.playerOriginAnswer = {
      status: 200,
      body: JSON.stringify({ player_origin: fixture.evilOrigin }),
      type: 'application/json',
    };
    const { page, frame } = await framedChild();
    await handshake(page, 'D'.repeat(32));
    await expect.poll(() => diagnostics(frame)).toEqual(['untrusted_origin']);
    expect(await answers(page)).toEqual([]);
    await page.close();
  });
});
