import { describe, expect, it } from 'vitest';
import { placementOf } from '../../sdk/contract/manifest';
import { CookieJar, randomKey } from '../testing/harness';
import { LAUNCH_TICKET_TTL_MS } from '../release-host/launch-tickets';
import { RELEASE_GRANT_COOKIE } from '../release-host/release-grant-cookie';
import { SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';
import {
  activate,
  anonymousPlayer,
  appPage,
  createPlaylist,
  patchScreen,
  publishApp,
  useEnrolledServer,
  validManifest,
  type Player,
} from './runtime.fixtures';

// The test client is a trusted proxy, so X-Forwarded-For stands for viewers at other addresses.
const env = useEnrolledServer({ config: { trustedProxies: ['127.0.0.1'] } });
const { clock } = env;

const FRAME_NAVIGATION = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' };
const OWN_SCRIPT = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' };

interface Launchable {
  p: Player;
  rev: string;
  releaseId: string;
  launchUrl: string;
  origin: string;
}

async function launchable(): Promise<Launchable> {
  const p = await env.player();
  const app = await publishApp(env.server, env.token, 'launch me');
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', app.releaseId)] }),
  });
  const { manifest } = await validManifest(env.server, p);
  const content = placementOf(manifest.pages[0]!.placements[0]!, 'application').content;
  return {
    p,
    rev: manifest.manifestRevision,
    releaseId: app.releaseId,
    launchUrl: content.launchUrl,
    origin: content.origin,
  };
}

function launch(l: Launchable, player: Player = l.p, url = l.launchUrl) {
  return env.server.request('POST', url, { cookies: player.cookies });
}

/** Follows a launch URL as the frame would: the ticket, then the release's own files with the grant cookie. */
async function openFrame(
  launchUrl: string,
): Promise<{ jar: CookieJar; host: string; status: number; indexStatus: number; index: string }> {
  const url = new URL(launchUrl);
  const jar = new CookieJar();
  const first = await env.server.request('GET', url.pathname + url.search, {
    host: url.host,
    cookies: jar,
    headers: FRAME_NAVIGATION,
  });
  if (first.status !== 302) return { jar, host: url.host, status: first.status, indexStatus: 0, index: '' };
  const index = await env.server.request('GET', first.headers.location!, {
    host: url.host,
    cookies: jar,
    headers: { ...FRAME_NAVIGATION },
  });
  return { jar, host: url.host, status: first.status, indexStatus: index.status, index: index.text };
}

describe('launching a release of the manifest', () => {
  it('mints a 30-second ticket for the exact release host, which the frame turns into the grant cookie', async () => {
    const l = await launchable();
    const res = await launch(l);
    expect(res.status, res.text).toBe(201);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'launch_url']);
    expect(body.launch_url).toMatch(new RegExp(`^${l.origin}/\\?ticket=[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(body.expires_at)).toBe(clock.now() + LAUNCH_TICKET_TTL_MS);

    const frame = await openFrame(body.launch_url);
    expect(frame.status).toBe(302);
    expect(frame.jar.get(frame.host, RELEASE_GRANT_COOKIE)).toBeDefined();
    expect(frame.indexStatus).toBe(200);
    expect(frame.index).toContain('launch me');
    const script = await env.server.request('GET', '/assets/app.js', {
      host: frame.host,
      cookies: frame.jar,
      headers: OWN_SCRIPT,
    });
    expect(script.status).toBe(200);
    // Tickets never reach the logs.
    expect(env.server.logText()).not.toContain(new URL(body.launch_url).searchParams.get('ticket'));
  });

  it('spends a ticket once, and only on its own host', async () => {
    const l = await launchable();
    const url = (await launch(l)).json().launch_url as string;
    expect((await openFrame(url)).status).toBe(302);
    expect((await openFrame(url)).status).toBe(403); // replayed

    const other = await launchable();
    const ticket = new URL((await launch(l)).json().launch_url).search;
    const elsewhere = await openFrame(`${other.origin}/${ticket}`);
    expect(elsewhere.status).toBe(403); // another release's host
    expect((await openFrame(`${l.origin}/${ticket}`)).status).toBe(403); // spent by the wrong-host attempt
  });

  it('lets a ticket lapse after 30 seconds', async () => {
    const l = await launchable();
    const url = (await launch(l)).json().launch_url as string;
    clock.advance(LAUNCH_TICKET_TTL_MS);
    expect((await openFrame(url)).status).toBe(403);
  });

  it('works for an anonymous viewer too', async () => {
    const l = await launchable();
    const viewer = await anonymousPlayer(env.server, l.p.screen);
    const res = await launch(l, viewer);
    expect(res.status, res.text).toBe(201);
    expect((await openFrame(res.json().launch_url)).indexStatus).toBe(200);
  });

  it("keeps public-URL viewers off the paired player's budget: viewers count per IP and screen (review 3, finding B)", async () => {
    const l = await launchable();
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000);
    const viewer = await anonymousPlayer(env.server, l.p.screen);
    for (let i = 0; i < 120; i++) expect((await launch(l, viewer)).status).toBe(201);
    const spent = await launch(l, viewer);
    expect(spent.status).toBe(429);
    expect(spent.headers['ratelimit-policy']).toBe('"release-launch";q=120;w=60');
    // A fresh anonymous session from the same address shares the spent budget.
    expect((await launch(l, await anonymousPlayer(env.server, l.p.screen))).status).toBe(429);
    // The physical screen still launches its applications, and so does a viewer elsewhere.
    expect((await launch(l)).status).toBe(201);
    const elsewhere = await anonymousPlayer(env.server, l.p.screen);
    const other = await env.server.request('POST', l.launchUrl, {
      cookies: elsewhere.cookies,
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    expect(other.status, other.text).toBe(201);
  });

  it('is refused for a release the manifest does not show, another screen, or an unknown revision', async () => {
    const l = await launchable();
    const other = await launchable();
    expect((await launch(l, l.p, `/runtime/v1/manifests/${l.rev}/releases/${other.releaseId}/launch`)).status).toBe(
      404,
    );
    expect((await launch(l, l.p, other.launchUrl)).status).toBe(404); // other screen's revision id
    expect(
      (await launch(l, l.p, `/runtime/v1/manifests/man_77_aaaaaaaaaaaa/releases/${l.releaseId}/launch`)).status,
    ).toBe(404);
    expect((await env.server.request('POST', l.launchUrl)).status).toBe(401);
    expect((await env.server.request('POST', l.launchUrl, { token: env.token })).status).toBe(401);
  });

  it('ends with the generation: a rotation revokes the grant cookies and old launch URLs', async () => {
    const l = await launchable();
    const frame = await openFrame((await launch(l)).json().launch_url);
    expect(frame.indexStatus).toBe(200);
    const rotated = await env.server.request('POST', `/api/v1/screens/${l.p.screen.id}/public-id/rotate`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(rotated.status).toBe(200);
    const again = await env.server.request('GET', '/', {
      host: frame.host,
      cookies: frame.jar,
      headers: FRAME_NAVIGATION,
    });
    expect(again.status).toBe(403);
    // The new session launches the same revision at the new generation.
    expect((await env.server.request('POST', '/runtime/v1/device-sessions', { cookies: l.p.cookies })).status).toBe(
      201,
    );
    const { manifest } = await validManifest(env.server, l.p);
    expect(manifest.manifestRevision).toBe(l.rev);
    const fresh = await launch(l);
    expect(fresh.status).toBe(201);
    expect((await openFrame(fresh.json().launch_url)).indexStatus).toBe(200);
  });

  it('ends with the screen: archive and delete revoke every grant', async () => {
    const l = await launchable();
    const frame = await openFrame((await launch(l)).json().launch_url);
    await env.server.request('POST', `/api/v1/screens/${l.p.screen.id}/archive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(
      (await env.server.request('GET', '/', { host: frame.host, cookies: frame.jar, headers: FRAME_NAVIGATION }))
        .status,
    ).toBe(403);
    const refused = await launch(l);
    expect(refused.status).toBe(403);

    const m = await launchable();
    const mFrame = await openFrame((await launch(m)).json().launch_url);
    expect(
      (
        await env.server.request('DELETE', `/api/v1/screens/${m.p.screen.id}`, {
          token: env.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(204);
    expect(
      (await env.server.request('GET', '/', { host: mFrame.host, cookies: mFrame.jar, headers: FRAME_NAVIGATION }))
        .status,
    ).toBe(403);
  });

  it('ends grants of revisions the player stopped showing once it activates a newer one', async () => {
    const l = await launchable();
    await activate(env.server, l.p, l.rev);
    const oldFrame = await openFrame((await launch(l)).json().launch_url);
    expect(oldFrame.indexStatus).toBe(200);
    await patchScreen(env.server, env.token, l.p.screen.id, { timezone: 'Europe/Berlin' });
    const next = await validManifest(env.server, l.p);
    const newContent = placementOf(next.manifest.pages[0]!.placements[0]!, 'application').content;
    const newFrame = await openFrame((await launch(l, l.p, newContent.launchUrl)).json().launch_url);
    expect(newFrame.indexStatus).toBe(200);
    // Until the new revision is on glass, both frames work.
    expect(
      (await env.server.request('GET', '/', { host: oldFrame.host, cookies: oldFrame.jar, headers: FRAME_NAVIGATION }))
        .status,
    ).toBe(200);
    await activate(env.server, l.p, next.manifest.manifestRevision);
    expect(
      (await env.server.request('GET', '/', { host: oldFrame.host, cookies: oldFrame.jar, headers: FRAME_NAVIGATION }))
        .status,
    ).toBe(403);
    expect(
      (await env.server.request('GET', '/', { host: newFrame.host, cookies: newFrame.jar, headers: FRAME_NAVIGATION }))
        .status,
    ).toBe(200);
    clock.advance(SUPERSEDED_MANIFEST_GRACE_MS);
    expect((await launch(l)).status).toBe(403); // the old revision lapsed
  });
});
