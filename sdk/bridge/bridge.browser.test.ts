// The app bridge end to end in Chromium: the parent bridge in a player page and the child script in
// a frame on a release host (another origin), plus spoofing pages on a third origin.
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from '../testing/chromium';
import { BridgeFixture, buildBridgeBundles, CAPABILITY_HANDLE, RELEASE_LABEL } from '../testing/bridge-fixture';

const ALL = { 'page.advance': true, 'kv.read': true, 'kv.write': true };

/** The classic script must stay small: every application on every screen loads it. */
const RUNTIME_MAX_BYTES = 24 * 1024;

let browser: Browser;
let fixture: BridgeFixture;
let bundles: Awaited<ReturnType<typeof buildBridgeBundles>>;

beforeAll(async () => {
  bundles = await buildBridgeBundles();
  fixture = new BridgeFixture(bundles);
  await fixture.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.stop();
});

beforeEach(() => fixture.resetKv());

async function openPlayer(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${fixture.playerOrigin}/player.html`);
  await page.waitForFunction(() => (window as any).bridgeLoaded === true);
  return page;
}

interface HostOptions {
  path: string;
  origin?: string;
  capabilities?: Record<string, boolean>;
  kvTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  /** Attach the bridge to the frame (default) or leave the frame without a parent bridge. */
  bridge?: boolean;
  /** Make the bridge before the frame is added, as the player does (it then sees the initial about:blank load). */
  bridgeFirst?: boolean;
}

/** Adds the application frame to the player page, hosted by an ApplicationFrameBridge, and activates it. */
async function hostFrame(page: Page, options: HostOptions): Promise<Frame> {
  return frameAt(page, await addFrame(page, options));
}

/**
 * hostFrame without waiting for the frame's document: a loader page sends the frame on 50 ms after
 * its load, and a wait for it can miss that window altogether on a loaded machine. Answers its URL.
 */
async function addFrame(page: Page, options: HostOptions): Promise<string> {
  const src = `${options.origin ?? fixture.releaseOrigin}${options.path}`;
  await page.evaluate(
    ({ src, releaseOrigin, capabilities, handle, kvTimeoutMs, handshakeTimeoutMs, bridge, bridgeFirst }) => {
      const w = window as any;
      const frame = document.createElement('iframe');
      frame.id = 'app';
      w.bridge.prepareApplicationFrame(frame);
      if (!bridgeFirst) document.body.append(frame);
      if (bridge) {
        const r = w.records;
        w.host = new w.bridge.ApplicationFrameBridge({
          frame,
          releaseOrigin,
          placementId: 'board',
          applicationId: 'app_counter000001',
          releaseId: 'rel_counter000001',
          screenId: 'scr_lobby0000001',
          capabilities,
          viewport: { width: 1280, height: 720 },
          placement: { width: 640, height: 360 },
          runtimeKv: w.bridge.runtimeKvFetch({ runtimeOrigin: location.origin, capabilityHandle: () => handle }),
          onReady: (g: number) => r.ready.push(g),
          onAdvance: (g: number) => r.advances.push(g),
          onEvent: (c: string, g: number) => r.events.push([c, g]),
          onLog: (e: unknown) => r.logs.push(e),
          onDiagnostic: (d: { code: string }) => r.diagnostics.push(d.code),
          kvTimeoutMs,
          handshakeTimeoutMs,
        });
        w.host.activate();
      }
      if (bridgeFirst) document.body.append(frame);
      frame.src = src;
    },
    {
      src,
      releaseOrigin: fixture.releaseOrigin,
      capabilities: options.capabilities ?? ALL,
      handle: CAPABILITY_HANDLE,
      kvTimeoutMs: options.kvTimeoutMs,
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      bridge: options.bridge ?? true,
      bridgeFirst: options.bridgeFirst ?? false,
    },
  );
  return src;
}

async function frameAt(page: Page, url: string): Promise<Frame> {
  let found: Frame | undefined;
  await expect
    .poll(() => (found = page.frames().find((f) => f.url() === url)) !== undefined, { timeout: 10_000 })
    .toBe(true);
  await found!.waitForLoadState('load');
  return found!;
}

async function connected(page: Page): Promise<void> {
  await page.waitForFunction(() => (window as any).host.isConnected === true);
}

const records = (page: Page) => page.evaluate(() => (window as any).records);

/** The challenge of the context the frame accepted last (read from its message log). */
async function challengeIn(frame: Frame): Promise<string> {
  return frame.evaluate(() => {
    const contexts = (window as any).received
      .map((m: string) => JSON.parse(m))
      .filter((m: any) => m.kind === 'context');
    return contexts[contexts.length - 1].payload.nonce as string;
  });
}

describe('bridge builds', () => {
  it('are small and carry no dependencies (no zod, no luxon)', () => {
    for (const code of [bundles.classic, bundles.module]) {
      expect(code.length).toBeLessThan(RUNTIME_MAX_BYTES);
      expect(code).not.toMatch(/zod|luxon|ZodError/);
    }
    expect(bundles.module).toMatch(/export\s*\{/);
    expect(bundles.classic).not.toMatch(/^\s*(import|export)\b/m);
  });
});

describe('app bridge in Chromium', () => {
  it('connects, delivers the context, and serves KV through the parent with the capability the frame never sees', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app.html' });
    const context = await frame.evaluate(() => (window as any).marquee.ready());
    expect(context).toEqual({
      applicationId: 'app_counter000001',
      releaseId: 'rel_counter000001',
      placementId: 'board',
      screenId: 'scr_lobby0000001',
      generation: 1,
      capabilities: ALL,
      viewport: { width: 1280, height: 720 },
      placement: { width: 640, height: 360 },
    });
    expect((await records(page)).ready).toEqual([1]);

    const outcome = await frame.evaluate(async () => {
      const m = (window as any).marquee;
      const missing = await m.kv.get('counter');
      const created = await m.kv.set('counter', 'héllo');
      const read = await m.kv.get('counter');
      const updated = await m.kv.set('counter', '2', { expectedRevision: 1 });
      const stale = await m.kv
        .set('counter', '3', { expectedRevision: 1 })
        .catch((e: any) => ({ code: e.code, status: e.status, currentRevision: e.currentRevision, name: e.name }));
      const bytes = await m.kv.set('blob', new Uint8Array([0, 255, 7]));
      const list = await m.kv.list();
      await m.kv.delete('counter', 2);
      const gone = await m.kv.get('counter');
      // Keys no URL can carry are refused in the frame, before any message.
      const refused = await Promise.all(
        ['.', '..', 'x\ud800'].map((key) => m.kv.set(key, 'v').catch((e: any) => ({ code: e.code, status: e.status }))),
      );
      return {
        missing,
        created,
        text: m.kv.text(read),
        readContentType: read.content_type,
        updated: updated.revision,
        stale,
        bytes,
        list,
        gone,
        refused,
      };
    });
    expect(outcome.refused).toEqual(Array(3).fill({ code: 'invalid_key', status: 400 }));
    expect(fixture.kvRecords.some((r) => r.path.endsWith('/kv/.') || r.path.endsWith('/kv/..'))).toBe(false);
    expect(outcome.missing).toBeNull();
    expect(outcome.created).toMatchObject({
      application_id: 'app_counter000001',
      key: 'counter',
      revision: 1,
      content_type: 'text/plain; charset=utf-8',
    });
    expect(outcome.text).toBe('héllo');
    expect(outcome.updated).toBe(2);
    expect(outcome.stale).toEqual({ code: 'revision_conflict', status: 412, currentRevision: 2, name: 'BridgeError' });
    expect(outcome.bytes).toMatchObject({
      key: 'blob',
      value_base64: 'AP8H',
      content_type: 'application/octet-stream',
    });
    expect(outcome.list.items.map((i: any) => i.key).sort()).toEqual(['blob', 'counter']);
    expect(outcome.gone).toBeNull();

    // Every KV call carried the capability and the player's runtime cookie; writes carried their keys.
    expect(fixture.kvRecords.length).toBeGreaterThanOrEqual(8);
    for (const r of fixture.kvRecords) {
      expect(r.capability).toBe(CAPABILITY_HANDLE);
      expect(r.cookie).toContain('marquee-runtime=');
      expect(r.path.startsWith('/runtime/v1/apps/app_counter000001/kv')).toBe(true);
    }
    const writes = fixture.kvRecords.filter((r) => r.method !== 'GET');
    expect(writes.every((r) => /^[A-Za-z0-9_-]{22}$/.test(r.idempotencyKey ?? ''))).toBe(true);
    expect(new Set(writes.map((r) => r.idempotencyKey)).size).toBe(writes.length);
    expect(fixture.kvRecords.find((r) => r.method === 'DELETE')?.ifMatch).toBe('"2"');

    // The frame never saw the capability: not in any message, the DOM, or the context.
    const seen = await frame.evaluate((handle) => {
      const w = window as any;
      return {
        inMessages: w.received.some((m: string) => m.includes(handle)),
        inDom: document.documentElement.outerHTML.includes(handle),
        inContext: JSON.stringify(w.marquee.context).includes(handle),
        messages: w.received.length,
      };
    }, CAPABILITY_HANDLE);
    expect(seen).toEqual({ inMessages: false, inDom: false, inContext: false, messages: expect.any(Number) });
    expect(seen.messages).toBeGreaterThan(8);
    await page.context().close();
  });

  it('never calls a stored write too large: a kv.set near the message limit resolves with its entry or is refused unsent', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app.html' });
    await frame.evaluate(() => (window as any).marquee.ready());
    // Values around the size where the request still fits the 64 KiB message but its answer, the
    // stored entry echoing the value, would not.
    const outcomes = await frame.evaluate(async () => {
      const m = (window as any).marquee;
      const results: string[] = [];
      for (let n = 48_700; n <= 49_100; n += 11) {
        const value = 'x'.repeat(n);
        results.push(
          await m.kv.set(`k${n}`, value).then(
            (entry: any) => (m.kv.text(entry) === value && entry.bytes === n ? 'stored' : 'wrong entry'),
            (e: any) => e.code,
          ),
        );
      }
      return results;
    });
    expect(new Set(outcomes)).toEqual(new Set(['stored', 'message_too_large']));
    // Every write that reached the runtime was answered as stored; the refused ones were never sent.
    const puts = fixture.kvRecords.filter((r) => r.method === 'PUT').length;
    expect(puts).toBe(outcomes.filter((o) => o === 'stored').length);
    await page.context().close();
  });

  it('honours page.advance once per activation and rearms it with the next context; forwards events, logs and viewport changes', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app.html' });
    await frame.evaluate(() => (window as any).marquee.ready());
    const first = await frame.evaluate(async () => {
      const m = (window as any).marquee;
      await m.page.advance();
      const again = await m.page.advance().catch((e: any) => e.code);
      return again;
    });
    expect(first).toBe('capability_denied');
    expect((await records(page)).advances).toEqual([1]);

    await frame.evaluate(() => {
      const w = window as any;
      w.contexts = [];
      w.viewports = [];
      w.marquee.onContext((c: any) => w.contexts.push(c.generation));
      w.marquee.onViewportChange((v: any) => w.viewports.push(v));
    });
    await page.evaluate(() => (window as any).host.activate());
    await frame.waitForFunction(() => (window as any).contexts.length === 1);
    expect(await frame.evaluate(() => (window as any).marquee.context.generation)).toBe(2);
    await frame.evaluate(() => (window as any).marquee.page.advance());
    await expect.poll(async () => (await records(page)).advances).toEqual([1, 2]);
    // ready is announced again on the new activation.
    await expect.poll(async () => (await records(page)).ready).toEqual([1, 2]);

    await frame.evaluate(() => {
      const m = (window as any).marquee;
      m.event.emit('button.pressed');
      m.log.warn('low on coffee', 'coffee.low');
      m.log.info('hello');
    });
    await expect.poll(async () => (await records(page)).events).toEqual([['button.pressed', 2]]);
    await expect
      .poll(async () => (await records(page)).logs)
      .toEqual([
        { level: 'warn', code: 'coffee.low', message: 'low on coffee', generation: 2 },
        { level: 'info', code: 'app', message: 'hello', generation: 2 },
      ]);
    expect(
      await frame.evaluate(() => {
        try {
          (window as any).marquee.event.emit('bad code!');
          return 'sent';
        } catch (e: any) {
          return e.code;
        }
      }),
    ).toBe('invalid_event');

    await page.evaluate(() =>
      (window as any).host.setViewport({ width: 1920, height: 1080 }, { width: 960, height: 540 }),
    );
    await frame.waitForFunction(() => (window as any).viewports.length === 1);
    expect(await frame.evaluate(() => (window as any).viewports[0])).toEqual({
      viewport: { width: 1920, height: 1080 },
      placement: { width: 960, height: 540 },
    });
    expect(await frame.evaluate(() => (window as any).marquee.context.placement)).toEqual({ width: 960, height: 540 });

    // Off glass, advance is refused even with the capability.
    await page.evaluate(() => {
      const host = (window as any).host;
      host.activate();
      host.deactivate();
    });
    await frame.waitForFunction(() => (window as any).contexts.length === 2);
    expect(await frame.evaluate(() => (window as any).marquee.page.advance().catch((e: any) => e.code))).toBe(
      'capability_denied',
    );
    await page.context().close();
  });

  it('exposes a read-only, frozen window.marquee and keeps the frame away from the player', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app.html' });
    await frame.evaluate(() => (window as any).marquee.ready());
    const probe = await frame.evaluate(() => {
      const w = window as any;
      const original = w.marquee;
      try {
        w.marquee = { fake: true };
      } catch {
        /* strict-mode assignment throws; either way it must not stick */
      }
      let parentDocument = 'readable';
      try {
        void (window.parent as any).document.cookie;
      } catch {
        parentDocument = 'blocked';
      }
      let topNavigation = 'allowed';
      try {
        (window.top as any).location.href = 'http://evil.localhost/';
      } catch {
        topNavigation = 'blocked';
      }
      return {
        same: w.marquee === original,
        deleted: delete w.marquee,
        frozen: Object.isFrozen(original) && Object.isFrozen(original.kv) && Object.isFrozen(original.context),
        canReplaceKv: (() => {
          try {
            original.kv.get = () => 'hijacked';
          } catch {
            /* frozen */
          }
          return original.kv.get.toString().includes('hijacked');
        })(),
        cookie: document.cookie,
        parentDocument,
        topNavigation,
      };
    });
    expect(probe).toEqual({
      same: true,
      deleted: false,
      frozen: true,
      canReplaceKv: false,
      cookie: '',
      parentDocument: 'blocked',
      topNavigation: 'blocked',
    });
    expect(page.url()).toBe(`${fixture.playerOrigin}/player.html`);
    await page.context().close();
  });

  it('ignores a handshake from an untrusted origin and stays inert', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${fixture.evilOrigin}/evil.html`);
    const appUrl = `${fixture.releaseOrigin}/app-module.html`;
    await page.evaluate((src) => {
      const frame = document.createElement('iframe');
      frame.id = 'app';
      frame.src = src;
      document.body.append(frame);
    }, appUrl);
    const frame = await frameAt(page, appUrl);
    await frame.waitForFunction(() => (window as any).appLoaded === true);
    await page.evaluate(() => {
      const target = (document.getElementById('app') as HTMLIFrameElement).contentWindow!;
      const challenge = 'C'.repeat(32);
      target.postMessage({ protocol: 'marquee.parent-handshake/1', kind: 'parent.handshake', challenge }, '*');
      target.postMessage(
        {
          protocol: '1',
          message_id: 'msg_00000000000000000000000000000001',
          kind: 'context',
          placement_id: 'board',
          payload: {
            application_id: 'app_counter000001',
            release_id: 'rel_counter000001',
            placement_id: 'board',
            generation: 1,
            nonce: challenge,
            player_origin: location.origin,
            capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': true },
            viewport: { width: 1, height: 1 },
            placement: { width: 1, height: 1 },
          },
        },
        '*',
      );
    });
    await frame.waitForFunction(() => (window as any).diagnostics.length > 0);
    const state = await frame.evaluate(() => ({
      diagnostics: (window as any).diagnostics.map((d: any) => d.code),
      context: (window as any).app.context,
    }));
    expect(state.diagnostics).toEqual(['untrusted_origin']);
    expect(state.context).toBeNull();
    // The evil page heard nothing back.
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => (window as any).received)).toEqual([]);
    await context.close();
  });

  it('ignores handshakes and contexts from other windows, even of the trusted origin and with the right nonce', async () => {
    const page = await openPlayer();
    const appUrl = `${fixture.releaseOrigin}/app-module.html`;
    const frame = await hostFrame(page, { path: '/app-module.html', bridge: false });
    await frame.waitForFunction(() => (window as any).appLoaded === true);
    // A sibling frame on the player's own origin tries to pin the app first.
    await page.evaluate(() => {
      const sibling = document.createElement('iframe');
      sibling.id = 'sibling';
      sibling.src = '/sibling.html';
      document.body.append(sibling);
      return new Promise((resolve) => sibling.addEventListener('load', resolve));
    });
    const sibling = await frameAt(page, `${fixture.playerOrigin}/sibling.html`);
    await sibling.evaluate((origin) => {
      const app = (parent.document.getElementById('app') as HTMLIFrameElement).contentWindow!;
      app.postMessage(
        { protocol: 'marquee.parent-handshake/1', kind: 'parent.handshake', challenge: 'S'.repeat(32) },
        origin,
      );
    }, fixture.releaseOrigin);
    await page.waitForTimeout(200);
    expect(await sibling.evaluate(() => (window as any).received)).toEqual([]);

    // The real parent still pins the frame afterwards: the spoof did not.
    await page.evaluate((releaseOrigin) => {
      const w = window as any;
      const r = w.records;
      w.host = new w.bridge.ApplicationFrameBridge({
        frame: document.getElementById('app'),
        releaseOrigin,
        placementId: 'board',
        applicationId: 'app_counter000001',
        releaseId: 'rel_counter000001',
        capabilities: { 'page.advance': true, 'kv.read': false, 'kv.write': false },
        viewport: { width: 1280, height: 720 },
        placement: { width: 640, height: 360 },
        runtimeKv: () => Promise.reject(new Error('unused')),
        onAdvance: (g: number) => r.advances.push(g),
        onDiagnostic: (d: { code: string }) => r.diagnostics.push(d.code),
      });
      w.host.activate();
      w.host.handshake();
    }, fixture.releaseOrigin);
    await connected(page);
    await frame.waitForFunction(() => (window as any).app.context !== null);
    const nonce = await challengeIn(frame);
    expect(nonce).not.toBe('S'.repeat(32));

    // The sibling now sends a context with the right nonce and more capabilities: still ignored.
    await sibling.evaluate(
      ({ origin, nonce, playerOrigin }) => {
        const app = (parent.document.getElementById('app') as HTMLIFrameElement).contentWindow!;
        app.postMessage(
          {
            protocol: '1',
            message_id: 'msg_00000000000000000000000000000002',
            kind: 'context',
            placement_id: 'board',
            payload: {
              application_id: 'app_counter000001',
              release_id: 'rel_counter000001',
              placement_id: 'board',
              generation: 7,
              nonce,
              player_origin: playerOrigin,
              capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': true },
              viewport: { width: 1, height: 1 },
              placement: { width: 1, height: 1 },
            },
          },
          origin,
        );
      },
      { origin: fixture.releaseOrigin, nonce, playerOrigin: fixture.playerOrigin },
    );
    await page.waitForTimeout(200);
    const context = await frame.evaluate(() => (window as any).app.context);
    expect(context.generation).toBe(1);
    expect(context.capabilities).toEqual({ 'page.advance': true, 'kv.read': false, 'kv.write': false });
    expect(appUrl).toContain(RELEASE_LABEL);
    await page.context().close();
  });

  it('the parent ignores other windows and a frame that navigated to another origin', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app.html' });
    await frame.evaluate(() => (window as any).marquee.ready());
    const nonce = await challengeIn(frame);
    const advance = {
      protocol: '1',
      message_id: '',
      kind: 'page.advance',
      placement_id: 'board',
      payload: { generation: 1, nonce },
    };

    // An unrelated origin and a second window of the release origin both try to advance the page.
    for (const [id, src] of [
      ['evil', `${fixture.evilOrigin}/evil.html`],
      ['twin', `${fixture.releaseOrigin}/raw.html`],
    ] as const) {
      await page.evaluate(
        ({ id, src }) => {
          const f = document.createElement('iframe');
          f.id = id;
          f.src = src;
          document.body.append(f);
          return new Promise((resolve) => f.addEventListener('load', resolve));
        },
        { id, src },
      );
      const other = await frameAt(page, src);
      await other.evaluate(
        (message) =>
          parent.postMessage(
            { ...message, message_id: `msg_${Math.random().toString(16).slice(2).padEnd(16, '0')}` },
            '*',
          ),
        advance,
      );
    }
    await page.waitForTimeout(300);
    expect((await records(page)).advances).toEqual([]);

    // The app frame itself navigates to another origin and speaks from there.
    const evilUrl = `${fixture.evilOrigin}/evil.html?navigated`;
    await page.evaluate((src) => ((document.getElementById('app') as HTMLIFrameElement).src = src), evilUrl);
    const navigated = await frameAt(page, evilUrl);
    await navigated.evaluate(
      ({ message, nonce }) => {
        parent.postMessage(
          {
            protocol: 'marquee.parent-handshake/1',
            kind: 'child.handshake',
            challenge: nonce,
            parent_origin: 'http://localhost',
          },
          '*',
        );
        parent.postMessage({ ...message, message_id: 'msg_00000000000000000000000000000003' }, '*');
      },
      { message: advance, nonce },
    );
    await expect
      .poll(async () => (await records(page)).diagnostics.filter((c: string) => c === 'untrusted_origin').length)
      .toBe(2);
    expect((await records(page)).advances).toEqual([]);
    await page.context().close();
  });

  it('the parent refuses every malformed envelope kind from the frame', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/raw.html' });
    await connected(page);
    await frame.waitForFunction(() => (window as any).ctx !== undefined);
    await frame.evaluate(() => {
      const w = window as any;
      const { generation, nonce } = w.ctx.payload;
      let n = 0;
      const id = () => `msg_${String(++n).padStart(32, '0')}`;
      const ok = (kind: string, payload: Record<string, unknown>) => ({
        protocol: '1',
        message_id: id(),
        kind,
        placement_id: 'board',
        payload: { generation, nonce, ...payload },
      });
      const post = (m: unknown) => parent.postMessage(m, '*');
      post('{"protocol":"1",'); // invalid_json
      post(JSON.stringify({ ...ok('ready', {}), pad: 'x'.repeat(70_000) })); // message_too_large (string)
      post(ok('ready', { pad: 'x'.repeat(70_000) })); // message_too_large (object)
      post({ ...ok('ready', {}), extra: 1 }); // invalid_shape
      const { payload: _p, ...missing } = ok('ready', {});
      post(missing); // invalid_shape
      post(
        `{"protocol":"1","message_id":"${id()}","kind":"ready","placement_id":"board","payload":{"generation":${generation},"nonce":"${nonce}","__proto__":{}}}`,
      ); // invalid_shape
      post(ok('ready', { constructor: 1 })); // invalid_shape
      post(ok('ready', { when: new Date() })); // invalid_shape
      post({ ...ok('ready', {}), protocol: '2' }); // protocol_mismatch
      post({ ...ok('ready', {}), message_id: 'bad id' }); // invalid_message_id
      post({ ...ok('ready', {}), kind: '' }); // invalid_kind
      post({ ...ok('ready', {}), placement_id: 'other' }); // invalid_placement
      post({ ...ok('ready', {}), payload: [] }); // invalid_payload
      post(ok('kv.get', { key: '_marquee/x' })); // invalid_key (answered)
      post(ok('kv.get', { key: '..' })); // invalid_key (answered): a URL would collapse it
      post(
        ok('kv.set', {
          key: 'x\ud800',
          value_base64: 'MQ==',
          content_type: 'text/plain',
          idempotency_key: 'A'.repeat(22),
        }),
      ); // invalid_key (answered): no UTF-8 form
      post(
        ok('kv.set', { key: 'k', value_base64: '***', content_type: 'text/plain', idempotency_key: 'A'.repeat(22) }),
      ); // invalid_payload (answered)
      post(ok('log', { level: 'loud', code: 'app', message: 'x' })); // invalid_log
      post(ok('event.emit', { code: 'no spaces allowed' })); // invalid_event
      post({ ...ok('page.advance', {}), payload: { generation: generation + 5, nonce } }); // invalid_generation (dropped)
      post({ ...ok('page.advance', {}), payload: { generation, nonce: 'N'.repeat(32) } }); // invalid_generation (dropped)
      const twice = ok('ready', {});
      post(twice);
      post(twice); // duplicate_message
      post(ok('future.kind', {})); // ignored: unknown kind
    });
    await expect.poll(async () => (await records(page)).diagnostics.length).toBe(22);
    expect((await records(page)).diagnostics).toEqual([
      'invalid_json',
      'message_too_large',
      'message_too_large',
      'invalid_shape',
      'invalid_shape',
      'invalid_shape',
      'invalid_shape',
      'invalid_shape',
      'protocol_mismatch',
      'invalid_message_id',
      'invalid_kind',
      'invalid_placement',
      'invalid_payload',
      'invalid_key',
      'invalid_key',
      'invalid_key',
      'invalid_payload',
      'invalid_log',
      'invalid_event',
      'invalid_generation',
      'invalid_generation',
      'duplicate_message',
    ]);
    const problems = await frame.evaluate(() =>
      (window as any).received
        .map((m: string) => JSON.parse(m))
        .filter((m: any) => m.kind === 'response.problem')
        .map((m: any) => m.payload.problem.code),
    );
    expect(problems).toEqual(['invalid_key', 'invalid_key', 'invalid_key', 'invalid_payload']);
    const r = await records(page);
    expect(r.ready).toEqual([1]); // only the one valid ready, once
    expect(r.advances).toEqual([]);
    expect(r.events).toEqual([]);
    expect(r.logs).toEqual([]);
    expect(fixture.kvRecords).toEqual([]);
    await page.context().close();
  });

  it('the child drops malformed or foreign parent messages', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app-module.html', bridge: false });
    await frame.waitForFunction(() => (window as any).appLoaded === true);
    await page.evaluate((releaseOrigin) => {
      const target = (document.getElementById('app') as HTMLIFrameElement).contentWindow!;
      const w = window as any;
      w.fromChild = [];
      addEventListener('message', (e) => w.fromChild.push(e.data));
      const challenge = 'G'.repeat(32);
      const post = (m: unknown) => target.postMessage(m, releaseOrigin);
      const handshake = { protocol: 'marquee.parent-handshake/1', kind: 'parent.handshake', challenge };
      let n = 0;
      const context = (over: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) => ({
        protocol: '1',
        message_id: `msg_${String(++n).padStart(32, '0')}`,
        kind: 'context',
        placement_id: 'board',
        payload: {
          application_id: 'app_counter000001',
          release_id: 'rel_counter000001',
          placement_id: 'board',
          generation: 3,
          nonce: challenge,
          player_origin: location.origin,
          capabilities: { 'page.advance': true, 'kv.read': true, 'kv.write': true },
          viewport: { width: 100, height: 100 },
          placement: { width: 50, height: 50 },
          ...over,
        },
        ...envelope,
      });
      post({ ...handshake, extra: 1 }); // invalid_handshake
      post({ ...handshake, challenge: 'short' }); // invalid_handshake
      post(handshake); // pins
      post({ ...handshake, challenge: 'H'.repeat(32) }); // invalid_handshake: already pinned
      post({
        protocol: '1',
        message_id: 'msg_00000000000000000000000000000099',
        kind: 'viewport.changed',
        placement_id: 'board',
        payload: {
          generation: 3,
          nonce: challenge,
          viewport: { width: 1, height: 1 },
          placement: { width: 1, height: 1 },
        },
      }); // inert
      const { capabilities: _c, ...noCaps } = context().payload;
      post({ ...context(), payload: noCaps }); // invalid_context
      post(context({ nonce: 'X'.repeat(32) })); // invalid_nonce
      post(context({ player_origin: 'http://evil.localhost' })); // invalid_player_origin
      post(context({ application_id: 'x' })); // invalid_application
      post('x'.repeat(70_000)); // message_too_large
      post('{not json'); // invalid_json
      post(context({}, { protocol: '2' })); // protocol_mismatch
      post(context()); // accepted: generation 3
      post(context({ generation: 2 })); // invalid_generation
      post(context({}, { placement_id: 'other' })); // invalid_placement
      post(context({ release_id: 'rel_other0000001' })); // invalid_release
      post({
        protocol: '1',
        message_id: 'msg_00000000000000000000000000000098',
        kind: 'response.ack',
        placement_id: 'board',
        payload: { request_message_id: 'msg_unknown_request_000', generation: 3, nonce: challenge, result: null },
      }); // invalid_response
      post({
        protocol: '1',
        message_id: 'msg_00000000000000000000000000000097',
        kind: 'future.kind',
        placement_id: 'board',
        payload: {},
      }); // ignored
    }, fixture.releaseOrigin);
    await expect.poll(() => frame.evaluate(() => (window as any).diagnostics.length)).toBe(15);
    await page.waitForTimeout(100);
    const state = await frame.evaluate(() => ({
      codes: (window as any).diagnostics.map((d: any) => d.code),
      context: (window as any).app.context,
    }));
    expect(state.codes).toEqual([
      'invalid_handshake',
      'invalid_handshake',
      'invalid_handshake',
      'inert',
      'invalid_context',
      'invalid_nonce',
      'invalid_player_origin',
      'invalid_application',
      'message_too_large',
      'invalid_json',
      'protocol_mismatch',
      'invalid_generation',
      'invalid_placement',
      'invalid_release',
      'invalid_response',
    ]);
    expect(state.context).toMatchObject({ generation: 3, placementId: 'board' });
    // The child answered the winning handshake only, to the player origin.
    const replies = await page.evaluate(() => (window as any).fromChild);
    expect(replies).toEqual([
      {
        protocol: 'marquee.parent-handshake/1',
        kind: 'child.handshake',
        challenge: 'G'.repeat(32),
        parent_origin: fixture.playerOrigin,
      },
    ]);
    await page.context().close();
  });

  it('denies what the placement lacks, in the child and again in the parent', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, {
      path: '/app.html',
      capabilities: { 'page.advance': false, 'kv.read': true, 'kv.write': false },
    });
    await frame.evaluate(() => (window as any).marquee.ready());
    const local = await frame.evaluate(async () => {
      const m = (window as any).marquee;
      const code = (p: Promise<unknown>) =>
        p.then(
          () => 'allowed',
          (e: any) => e.code,
        );
      return {
        set: await code(m.kv.set('k', 'v')),
        del: await code(m.kv.delete('k', 1)),
        advance: await code(m.page.advance()),
        get: await m.kv.get('k'),
      };
    });
    expect(local).toEqual({
      set: 'capability_denied',
      del: 'capability_denied',
      advance: 'capability_denied',
      get: null,
    });
    expect(fixture.kvRecords.map((r) => r.method)).toEqual(['GET']);
    await page.context().close();

    // A frame that skips the SDK's own checks meets the parent's.
    fixture.resetKv();
    const raw = await openPlayer();
    const rawFrame = await hostFrame(raw, {
      path: '/raw.html',
      capabilities: { 'page.advance': false, 'kv.read': false, 'kv.write': false },
    });
    await connected(raw);
    await rawFrame.waitForFunction(() => (window as any).ctx !== undefined);
    await rawFrame.evaluate(() => {
      const { generation, nonce } = (window as any).ctx.payload;
      const send = (n: number, kind: string, payload: Record<string, unknown>) =>
        parent.postMessage(
          {
            protocol: '1',
            message_id: `msg_${String(n).padStart(32, '0')}`,
            kind,
            placement_id: 'board',
            payload: { generation, nonce, ...payload },
          },
          '*',
        );
      send(1, 'kv.get', { key: 'k' });
      send(2, 'kv.list', {});
      send(3, 'kv.set', {
        key: 'k',
        value_base64: 'MQ==',
        content_type: 'text/plain',
        idempotency_key: 'A'.repeat(22),
      });
      send(4, 'kv.delete', { key: 'k', expected_revision: 1, idempotency_key: 'B'.repeat(22) });
      send(5, 'page.advance', {});
    });
    await expect
      .poll(() =>
        rawFrame.evaluate(
          () =>
            (window as any).received.map((m: string) => JSON.parse(m)).filter((m: any) => m.kind === 'response.problem')
              .length,
        ),
      )
      .toBe(5);
    const problems = await rawFrame.evaluate(() =>
      (window as any).received
        .map((m: string) => JSON.parse(m))
        .filter((m: any) => m.kind === 'response.problem')
        .map((m: any) => [m.payload.request_message_id.slice(-1), m.payload.problem.code, m.payload.problem.status]),
    );
    expect(problems).toEqual([
      ['1', 'capability_denied', 403],
      ['2', 'capability_denied', 403],
      ['3', 'capability_denied', 403],
      ['4', 'capability_denied', 403],
      ['5', 'capability_denied', 403],
    ]);
    expect(fixture.kvRecords).toEqual([]);
    expect((await records(raw)).advances).toEqual([]);
    await raw.context().close();
  });

  it('times out: the child after its ack timeout, the parent KV call before it, and a silent handshake', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app-module.html?timeout=400', kvTimeoutMs: 60_000 });
    await frame.waitForFunction(() => (window as any).appLoaded === true);
    await frame.evaluate(() => (window as any).app.ready());
    const started = Date.now();
    const childTimeout = await frame.evaluate(() =>
      (window as any).app.kv.get('slow').then(
        () => 'answered',
        (e: any) => e.code,
      ),
    );
    expect(childTimeout).toBe('ack_timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
    // The bridge still works after a timeout.
    expect(await frame.evaluate(() => (window as any).app.kv.get('missing'))).toBeNull();
    await page.context().close();

    const second = await openPlayer();
    const frame2 = await hostFrame(second, { path: '/app-module.html?timeout=5000', kvTimeoutMs: 300 });
    await frame2.waitForFunction(() => (window as any).appLoaded === true);
    await frame2.evaluate(() => (window as any).app.ready());
    const parentTimeout = await frame2.evaluate(() =>
      (window as any).app.kv.get('slow').then(
        () => null,
        (e: any) => ({ code: e.code, status: e.status }),
      ),
    );
    expect(parentTimeout).toEqual({ code: 'dependency_unavailable', status: 503 });
    await second.context().close();

    const third = await openPlayer();
    await hostFrame(third, { path: '/plain.html', handshakeTimeoutMs: 500 });
    await expect.poll(async () => (await records(third)).diagnostics).toEqual(['handshake_timeout']);
    expect(await third.evaluate(() => (window as any).host.isConnected)).toBe(false);
    await third.context().close();
  });

  it("connects when the bridge watched the frame's initial about:blank and the release document loads slowly", async () => {
    // The release page's load event waits for an image: its SDK learns its player and listens
    // long before that load tells the parent to handshake.
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/slow-load.html', bridgeFirst: true });
    // Connected right after the load event, not after a handshake that never comes.
    await page.waitForFunction(() => (window as any).host.isConnected === true, undefined, { timeout: 3000 });
    expect((await frame.evaluate(() => (window as any).marquee.ready())).generation).toBe(1);
    expect((await records(page)).diagnostics).not.toContain('invalid_handshake');
    await page.context().close();
  });

  it('connects to the release page a loader page sent the frame on to, though that page heard the loader’s round first', async () => {
    // The loader's load began a round; its retries reach the release page (whose load waits for a
    // slow image) long before that page's own load begins the next round.
    const page = await openPlayer();
    await addFrame(page, { path: '/loader.html', bridgeFirst: true });
    const frame = await frameAt(page, `${fixture.releaseOrigin}/slow-load.html`);
    await page.waitForFunction(() => (window as any).host.isConnected === true, undefined, { timeout: 3000 });
    expect((await frame.evaluate(() => (window as any).marquee.ready())).generation).toBe(1);
    expect(
      await frame.evaluate(() => (window as any).marquee.kv.set('after-loader', 'ok').then((e: any) => e.revision)),
    ).toBe(1);
    await page.context().close();
  });

  it('takes the requests the release page makes from its own load handler, after it connected through the loader’s round', async () => {
    const page = await openPlayer();
    await addFrame(page, { path: '/loader.html?to=/onload-kv.html', bridgeFirst: true });
    const frame = await frameAt(page, `${fixture.releaseOrigin}/onload-kv.html`);
    await expect.poll(() => frame.evaluate(() => (window as any).onloadResult), { timeout: 5000 }).toBe('ok:1');
    expect((await records(page)).diagnostics).not.toContain('inert');
    expect((await frame.evaluate(() => (window as any).marquee.ready())).generation).toBe(1);
    await page.context().close();
  });

  it('handshakes again when the frame reloads, with the challenge of its launch', async () => {
    const page = await openPlayer();
    const frame = await hostFrame(page, { path: '/app.html' });
    await frame.evaluate(() => (window as any).marquee.ready());
    const before = await challengeIn(frame);
    await page.evaluate(() => {
      const f = document.getElementById('app') as HTMLIFrameElement;
      f.src = `${f.src}?reloaded`;
    });
    const reloaded = await frameAt(page, `${fixture.releaseOrigin}/app.html?reloaded`);
    const context = await reloaded.evaluate(() => (window as any).marquee.ready());
    expect(context.generation).toBe(1);
    // One challenge per bridge, and a bridge per launch (D-403).
    expect(await challengeIn(reloaded)).toBe(before);
    expect(
      await reloaded.evaluate(() => (window as any).marquee.kv.set('after-reload', 'ok').then((e: any) => e.revision)),
    ).toBe(1);
    await page.context().close();
  });
});
