// A hanging application cannot stop the player, in Chromium, when its release host is another site
// than the player (the server refuses any other configuration unless told otherwise): the frame
// runs in its own process, so the player keeps painting every animation frame and replaces the
// frame at the page's backstop. The control case runs the same measurement on a release host of
// the player's own site, where the frame shares the player's main thread, and checks that it sees
// the freeze; so a frame that ran on the player's thread would fail the first cases. Each shape is
// also checked against the server's same-site rule, which must agree with what Chromium does.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CAPABILITY_HANDLE_MIN_LENGTH,
  launchRoute,
  packageRoute,
  WEBAPP_PACKAGE_CONTENT_TYPE,
  WEBAPP_PACKAGE_VERSION,
  type RuntimeManifest,
  type RuntimePlacement,
} from '../../../sdk/contract/manifest';
import { releasesSameSiteAsPlayer } from '../../../server/release-host/release-site';
import { titledPng } from '../../../e2e/support/media-fixtures';
import {
  images,
  LOCAL_SITES,
  manifest,
  page,
  PlayerFixture,
  RELEASE_LABEL,
  type EngineTestWindow,
  type SitePair,
} from '../testing/player-fixture';

/** Production-shaped: the player and its release hosts on two registrable domains. */
const PRODUCTION_SITES: SitePair = { player: 'play.test', release: `${RELEASE_LABEL}.marquee-apps.test` };
/** What the server refuses by default: release hosts under the player's own registrable domain. */
const SAME_SITE: SitePair = { player: 'play.test', release: `${RELEASE_LABEL}.release.play.test` };

/** The page's backstop (advance max_ms) while its application hangs. */
const BACKSTOP_MS = 2500;
/** Longest pause between two painted frames of a player that is not blocked, on a loaded machine. */
const PAINT_GAP_MAX_MS = 500;
/** How late the backstop may fire on a loaded machine. */
const BACKSTOP_SLACK_MS = 1500;
/**
 * A wait, not a measurement: the first cross-site frame of a run starts a renderer process, which
 * took over 15 s while the whole suite kept both cores busy (seen in a full `npm test`).
 */
const FRAME_READY_WAIT_MS = 40_000;

const fixture = new PlayerFixture([LOCAL_SITES, PRODUCTION_SITES, SAME_SITE]);
fixture.reportFailures();

beforeAll(async () => {
  await fixture.start();
  fixture.media.set('med_next', { body: await titledPng(320, 180, '#1b4d7a', 'Next'), type: 'image/png' });
}, 60_000);
afterAll(async () => fixture.stop());

type TestWindow = EngineTestWindow;

function application(origin: string): RuntimePlacement {
  return {
    id: 'board',
    content: {
      type: 'application',
      applicationId: 'app_test000000001',
      releaseId: 'rel_test000000001',
      launchUrl: launchRoute('man_test', 'rel_test000000001'),
      origin,
      protocol: '1',
      grantId: 'gr_first',
      package: {
        version: WEBAPP_PACKAGE_VERSION,
        url: packageRoute('man_test', 'rel_test000000001'),
        bytes: 10,
        sha256: 'b'.repeat(64),
        entrypoint: 'index.html',
        contentType: WEBAPP_PACKAGE_CONTENT_TYPE,
      },
    },
    rect: { x: 0, y: 0, width: 1920, height: 1080 },
    layer: 0,
    contentFit: 'fill',
    controller: true,
    capabilityHandle: 'c'.repeat(CAPABILITY_HANDLE_MIN_LENGTH),
    capabilityExpiresAt: '2026-03-02T11:05:00Z',
  };
}

interface Observed {
  /** Longest pause between two painted frames of the player, from the hang until the measurement ends. */
  maxGapMs: number;
  /** From page one going live to page two going live, or null when page two never came. */
  pageOneMs: number | null;
}

/**
 * Plays an application page (backstop BACKSTOP_MS) then an image page; once the app has its context
 * (handshake done, so it runs the SDK child), it starts `hang` and the player is watched for `watchMs`.
 */
async function playHanging(sites: SitePair, hang: string, watchMs: number): Promise<Observed> {
  const p: Page = await fixture.open(undefined, fixture.originOf(sites.player));
  const releaseOrigin = fixture.originOf(sites.release);
  const m: RuntimeManifest = manifest([
    page('one', [application(releaseOrigin)], { advance: { mode: 'application', maxMs: BACKSTOP_MS } }),
    page('two', [images('next', ['med_next'])], { advance: { mode: 'duration', afterMs: 60_000 } }),
  ]);
  await p.evaluate(
    ({ m, releaseOrigin }) => {
      const w = window as unknown as TestWindow;
      w.m = w.t.mountEngine({ start: Date.parse('2026-03-02T11:00:00Z'), releaseOrigin });
      w.m.engine.setManifest(m);
    },
    { m, releaseOrigin },
  );
  await p.waitForFunction(
    () => (window as unknown as TestWindow).m.samples.some((s) => s.page === 'one' && s.shown.board === 'launch:1'),
    undefined,
    { timeout: FRAME_READY_WAIT_MS },
  );
  const frame = p.frames().find((f) => f.url().startsWith(`${releaseOrigin}/app.html?launch=1`))!;
  await frame.waitForFunction(() => (window as unknown as { contexts: number[] }).contexts.length > 0, undefined, {
    timeout: FRAME_READY_WAIT_MS,
  });
  // On the player's playback clock, which the samples carry: just before the hang starts.
  const hangStartedAt = await p.evaluate(() => (window as unknown as TestWindow).m.clock.now());
  // Starts in a later task, so this evaluation returns before the frame's thread is taken.
  await frame.evaluate((hang) => void setTimeout(new Function(hang) as () => void, 0), hang);
  await new Promise((resolve) => setTimeout(resolve, watchMs));
  const observed = await p.evaluate((hangStartedAt) => {
    const samples = (window as unknown as TestWindow).m.samples;
    // From the last frame painted before the hang began, so a pause that starts then is counted.
    const first = samples.findIndex((s) => s.t >= hangStartedAt);
    const since = first < 0 ? samples.slice(-1) : samples.slice(Math.max(0, first - 1));
    let maxGapMs = 0;
    for (let i = 1; i < since.length; i++) maxGapMs = Math.max(maxGapMs, since[i]!.t - since[i - 1]!.t);
    const one = samples.find((s) => s.page === 'one');
    const two = samples.find((s) => s.page === 'two');
    return { maxGapMs, pageOneMs: one && two ? two.t - one.t : null };
  }, hangStartedAt);
  await p.context().close();
  return observed;
}

describe('an application frame that never returns', () => {
  for (const [name, sites] of [
    ['on the default local origins', LOCAL_SITES],
    ['on a release domain of its own (the production shape)', PRODUCTION_SITES],
  ] as const) {
    it(`${name}: the player keeps painting and moves on at the backstop`, async () => {
      expect(
        releasesSameSiteAsPlayer(
          fixture.originOf(sites.player),
          fixture.originOf(sites.release).replace(RELEASE_LABEL, '{label}'),
        ),
      ).toBe(false);
      const observed = await playHanging(sites, 'for (;;) {}', BACKSTOP_MS + BACKSTOP_SLACK_MS + 1000);
      expect(observed.pageOneMs, 'page two never came').not.toBeNull();
      expect(observed.pageOneMs!).toBeGreaterThanOrEqual(BACKSTOP_MS - 50);
      expect(observed.pageOneMs!).toBeLessThan(BACKSTOP_MS + BACKSTOP_SLACK_MS);
      expect(observed.maxGapMs).toBeLessThan(PAINT_GAP_MAX_MS);
    }, 90_000);
  }

  it("control: on a release host of the player's own site (refused by the server) the same measurement sees the player freeze", async () => {
    expect(
      releasesSameSiteAsPlayer(
        fixture.originOf(SAME_SITE.player),
        fixture.originOf(SAME_SITE.release).replace(RELEASE_LABEL, '{label}'),
      ),
    ).toBe(true);
    // A bounded hang, so the player recovers and the context can close.
    const observed = await playHanging(SAME_SITE, 'const end = Date.now() + 3000; while (Date.now() < end) {}', 4500);
    expect(observed.maxGapMs).toBeGreaterThan(2500);
  }, 90_000);
});
