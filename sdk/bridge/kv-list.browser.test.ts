// kv.list through the whole bridge: the app's classic script in a release frame, the parent bridge in
// a player page (Chromium), and a real Marquee server behind the runtime KV routes. An application
// with more than one page of keys sees all of them by following next_cursor.
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKey } from '../../server/testing/harness';
import {
  appPage,
  createPlaylist,
  getManifest,
  packagedRelease,
  patchScreen,
  useEnrolledServer,
  type Player,
} from '../../server/runtime/runtime.fixtures';
import { KV_LIST_MAX_ITEMS } from '../contract/kv';
import type { RuntimeApplicationPlacement } from '../contract/manifest';
import { launchChromium } from '../testing/chromium';
import { BridgeFixture, buildBridgeBundles } from '../testing/bridge-fixture';

const env = useEnrolledServer();
let browser: Browser;
let fixture: BridgeFixture;
/** The paired player whose cookies the fixture presents to the real server. */
let player: Player | undefined;

beforeAll(async () => {
  fixture = new BridgeFixture(await buildBridgeBundles());
  fixture.runtimeUpstream = async (request) => {
    if (!player) throw new Error('no paired player yet');
    const res = await env.server.request(request.method, request.path, {
      cookies: player.cookies,
      headers: request.headers,
      ...(request.body ? { body: request.body } : {}),
    });
    return { status: res.status, contentType: res.headers['content-type'], body: res.body };
  };
  await fixture.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.stop();
});

/** A paired screen showing one application placement; returns the application and the placement capability. */
async function placedApplication(): Promise<{ applicationId: string; handle: string }> {
  player = await env.player();
  const { applicationId, releaseId } = await packagedRelease(env.server, env.tenantId);
  await patchScreen(env.server, env.token, player.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
  });
  const manifest = await getManifest(env.server, player);
  expect(manifest.status, manifest.text).toBe(200);
  const placement = manifest.json().pages[0].placements[0] as RuntimeApplicationPlacement;
  return { applicationId, handle: placement.capabilityHandle };
}

/** The app frame (classic script, window.marquee) hosted by the parent bridge, ready. */
async function hostApp(applicationId: string, handle: string): Promise<{ page: Page; frame: Frame }> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${fixture.playerOrigin}/player.html`);
  await page.waitForFunction(() => (window as any).bridgeLoaded === true);
  const src = `${fixture.releaseOrigin}/app.html`;
  await page.evaluate(
    ({ src, releaseOrigin, applicationId, handle }) => {
      const w = window as any;
      const frame = document.createElement('iframe');
      frame.id = 'app';
      w.bridge.prepareApplicationFrame(frame);
      document.body.append(frame);
      w.host = new w.bridge.ApplicationFrameBridge({
        frame,
        releaseOrigin,
        placementId: 'board',
        applicationId,
        releaseId: 'rel_listing000001',
        capabilities: { 'page.advance': false, 'kv.read': true, 'kv.write': false },
        viewport: { width: 1280, height: 720 },
        placement: { width: 1280, height: 720 },
        runtimeKv: w.bridge.runtimeKvFetch({ runtimeOrigin: location.origin, capabilityHandle: () => handle }),
        onDiagnostic: (d: { code: string }) => w.records.diagnostics.push(d.code),
      });
      w.host.activate();
      frame.src = src;
    },
    { src, releaseOrigin: fixture.releaseOrigin, applicationId, handle },
  );
  let frame: Frame | undefined;
  await expect.poll(() => (frame = page.frames().find((f) => f.url() === src)) !== undefined).toBe(true);
  await frame!.waitForLoadState('load');
  await frame!.evaluate(() => (window as any).marquee.ready());
  return { page, frame: frame! };
}

describe('kv.list through the bridge against a real server', () => {
  it('lists more than one page of keys by following next_cursor, sending it URL-encoded as ?cursor=', async () => {
    const { applicationId, handle } = await placedApplication();
    // Written by the owner: runtime writes are budgeted at 120 a minute per screen.
    const keys = Array.from({ length: KV_LIST_MAX_ITEMS + 7 }, (_, i) => `item/${String(i).padStart(4, '0')}`);
    for (const key of keys) {
      const res = await env.server.request(
        'PUT',
        `/api/v1/applications/${applicationId}/kv/${encodeURIComponent(key)}`,
        {
          token: env.token,
          idempotencyKey: randomKey(),
          json: { value_base64: Buffer.from(key).toString('base64'), content_type: 'text/plain' },
        },
      );
      expect(res.status, res.text).toBe(200);
    }
    const { page, frame } = await hostApp(applicationId, handle);

    const listed = await frame.evaluate(async () => {
      const m = (window as any).marquee;
      const pages: { count: number; next: string | null }[] = [];
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await m.kv.list(cursor === undefined ? {} : { cursor });
        pages.push({ count: page.items.length, next: page.next_cursor });
        seen.push(...page.items.map((i: { key: string }) => i.key));
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined && pages.length < 10);
      return { pages, seen };
    });
    expect(listed.seen).toEqual(keys);
    expect(listed.pages.map((p) => p.count)).toEqual([KV_LIST_MAX_ITEMS, 7]);
    expect(listed.pages[0]!.next).toEqual(expect.any(String));
    expect(listed.pages[1]!.next).toBeNull();

    const lists = fixture.kvRecords.filter(
      (r) => r.method === 'GET' && r.path === `/runtime/v1/apps/${applicationId}/kv`,
    );
    expect(lists.map((r) => r.search)).toEqual(['', `?cursor=${encodeURIComponent(listed.pages[0]!.next!)}`]);
    // The placement capability travelled on the parent's call, never in the frame's messages.
    expect(lists.every((r) => r.capability === handle)).toBe(true);
    await page.context().close();
  }, 60_000);

  it('sends a cursor as one URL-encoded value, and refuses one of the wrong type or length before any request', async () => {
    const { applicationId, handle } = await placedApplication();
    const { page, frame } = await hostApp(applicationId, handle);
    fixture.kvRecords.length = 0;

    // Not a cursor the server issued: the server's own problem comes back, and the query was one value.
    const foreign = await frame.evaluate(() =>
      (window as any).marquee.kv.list({ cursor: 'a&b=c d' }).then(
        () => null,
        (e: any) => ({ code: e.code, status: e.status, detail: e.message }),
      ),
    );
    expect(foreign).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(foreign!.detail).toContain('cursor');
    expect(fixture.kvRecords.map((r) => r.search)).toEqual(['?cursor=a%26b%3Dc%20d']);

    const refused = await frame.evaluate(async () => {
      const m = (window as any).marquee;
      const code = (cursor: unknown) =>
        m.kv.list({ cursor }).then(
          () => 'listed',
          (e: any) => e.code,
        );
      return [await code(42), await code(''), await code('c'.repeat(401))];
    });
    expect(refused).toEqual(['invalid_payload', 'invalid_payload', 'invalid_payload']);
    expect(fixture.kvRecords).toHaveLength(1); // the parent refused those without calling the server
    await page.context().close();
  }, 60_000);
});
