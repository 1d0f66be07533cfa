// A player document inside a frame must do nothing: a third-party page shown by an iframe placement
// (or an uploaded application) can navigate its own frame to the player origin, and another site
// can frame the player. Either way a running player would exchange a provisioning token (replacing
// the screen's device cookie with another project's) or open another screen's session. The victim
// here is a paired, playing screen in the same browser profile as the hostile frames.
import type { Page, Request } from '@playwright/test';
import { ControlApi } from './support/control-api';
import { expect, test } from './support/fixtures';
import { NEWS_HOST } from './support/news-site';

const ATTACKER_ORIGIN = 'http://attacker.marquee-e2e.test';
/** After the framed player document loaded, how long it gets to misbehave. */
const GRACE_MS = 3000;

/** Runtime-plane requests and player documents loaded by any frame but the top one. */
function watchFrames(page: Page, playerOrigin: string) {
  const runtimeCalls: string[] = [];
  const framedDocuments: Request[] = [];
  page.on('request', (request) => {
    if (request.frame() === page.mainFrame()) return;
    const url = new URL(request.url());
    if (url.origin !== playerOrigin) return;
    if (request.resourceType() === 'document') framedDocuments.push(request);
    else if (/^\/(runtime|content)\//.test(url.pathname)) runtimeCalls.push(`${request.method()} ${url.pathname}`);
  });
  return {
    runtimeCalls,
    /** Waits until `count` player documents were requested inside frames and answered, then the grace period. */
    async settle(count: number): Promise<void> {
      await expect.poll(() => framedDocuments.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(count);
      await Promise.all(framedDocuments.map((r) => r.response().catch(() => null)));
      await page.waitForTimeout(GRACE_MS);
    },
  };
}

async function playerCookies(page: Page) {
  const cookies = await page.context().cookies();
  return Object.fromEntries(cookies.filter((c) => c.name.startsWith('__Host-marquee-')).map((c) => [c.name, c.value]));
}

test('a framed player does nothing: no provisioning exchange, no session, the screen keeps its pairing', async ({
  page,
  player,
  marquee,
  news,
}) => {
  test.setTimeout(90_000);
  const playerOrigin = marquee.origin;
  const victim = new ControlApi(marquee.origin);
  const attacker = new ControlApi(marquee.origin);
  await Promise.all([victim.enroll(), attacker.enroll()]);

  // The attacker's project provisions screens whose links a hijacked frame opens.
  const provision = async () => {
    const res = await attacker.request('POST', '/api/v1/screens/provision', { json: { label: 'Hijacked' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { screen: { id: string; public_id: string }; public_url: string; provisioning_url: string };
  };
  const [inPlacement, inAttackerPage] = await Promise.all([provision(), provision()]);

  // A third-party page an iframe placement shows, which navigates its own frame to the player.
  news.pages.set(
    '/hijack',
    `<!doctype html><html><body style="background:#400"><script>location.href = ${JSON.stringify(inPlacement.provisioning_url)};</script></body></html>`,
  );

  const frames = watchFrames(page, playerOrigin);
  let screenId = '';
  await test.step('the victim screen is paired and plays a page with the hostile iframe', async () => {
    await player.open('/');
    const claim = await victim.pair(await player.code(), 'Victim');
    screenId = claim.screen.id;
    await expect(player.pairingScreen).toBeHidden({ timeout: 10_000 });
    const playlist = await victim.createPlaylist({
      name: 'Hostile ticker',
      pages: [
        {
          id: 'news',
          canvas: { width: 1920, height: 1080, background: '#0F2A44FF' },
          transition: { type: 'crossfade', duration_ms: 200 },
          advance: { mode: 'duration', after_ms: 60_000 },
          placements: [
            {
              id: 'ticker',
              content: { type: 'iframe', src: `https://${NEWS_HOST}/hijack`, title: 'News' },
              rect: { x: 360, y: 240, width: 1200, height: 600 },
              layer: 0,
              content_fit: 'fill',
            },
          ],
        },
      ],
    });
    await victim.patchScreen(screenId, { playlist_id: playlist.id });
    await player.waitForLivePage('news', 30_000);
  });
  const before = await playerCookies(page);
  expect(Object.keys(before)).toEqual(expect.arrayContaining(['__Host-marquee-device', '__Host-marquee-runtime']));
  const victimUrl = (await player.session())!.publicUrl;

  await test.step('the placement navigates its own frame to the provisioning link: the framed player does nothing', async () => {
    await frames.settle(1);
    const framed = page.frames().find((f) => f.url().startsWith(playerOrigin) && f !== page.mainFrame());
    if (framed) expect(await framed.evaluate(() => document.getElementById('root')?.childElementCount ?? 0)).toBe(0);
    await player.screenshot('framing-hijack-attempt.png');
  });

  await test.step('another site frames the player with a provisioning link and a public screen URL', async () => {
    const other = await page.context().newPage();
    const otherFrames = watchFrames(other, playerOrigin);
    await other.route(`${ATTACKER_ORIGIN}/**`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><html><body>
          <iframe src="${inAttackerPage.provisioning_url}" width="640" height="360"></iframe>
          <iframe src="${inPlacement.public_url}" width="640" height="360"></iframe></body></html>`,
      }),
    );
    await other.goto(`${ATTACKER_ORIGIN}/`);
    await otherFrames.settle(2);
    expect(otherFrames.runtimeCalls).toEqual([]);
    await other.close();
  });

  await test.step('nothing changed: cookies, the attacker screens, the victim session', async () => {
    expect(frames.runtimeCalls).toEqual([]);
    expect(await playerCookies(page)).toEqual(before);
    for (const provisioned of [inPlacement, inAttackerPage]) {
      const res = await attacker.request('GET', `/api/v1/screens/${provisioned.screen.id}`);
      expect(res.body.state).toBe('pairing_pending');
    }
    expect((await victim.screen(screenId)).state).toBe('active');
    // A reload resumes the victim screen's own session.
    await page.reload();
    await player.waitForLivePage('news', 30_000);
    await expect.poll(async () => (await player.session())?.publicUrl, { timeout: 15_000 }).toBe(victimUrl);
  });
});
