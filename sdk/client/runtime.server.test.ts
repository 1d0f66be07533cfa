// The runtime client in Node against a real Marquee server: pairing, the manifest and its validator,
// launch tickets, reports, the runtime stream, and refusals as MarqueeProblem. Node keeps no
// cookies, so the client is given either a fetch that keeps them (as a browser would) or a
// credential header (as a kiosk agent will, with its native session).
import { describe, expect, it } from 'vitest';
import { placementOf } from '../contract/manifest';
import { MANIFEST_ACTIVATED } from '../contract/runtime';
import { claimCode } from '../../server/pairing/pairing.fixtures';
import { imageDoc } from '../../server/playlists/content.fixtures';
import {
  appPage,
  createPlaylist,
  packagedRelease,
  patchScreen,
  storedMedia,
  useEnrolledServer,
  type Player,
} from '../../server/runtime/runtime.fixtures';
import { CookieJar } from '../../server/testing/harness';
import { MarqueeProblem } from './problem';
import { RuntimeClient } from './runtime';

const env = useEnrolledServer();

/** Node's fetch with a cookie jar in front, as a browser keeps cookies for the runtime origin. */
function cookieKeepingFetch(jar = new CookieJar()): typeof fetch {
  return async (input, init) => {
    const host = new URL(String(input)).host;
    const headers = new Headers(init?.headers);
    const cookie = jar.header(host);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(input, { ...init, headers });
    jar.store(host, response.headers.getSetCookie());
    return response;
  };
}

/** A client of the server's runtime plane; Node reaches it at 127.0.0.1 (see DESIGN: Node and *.localhost). */
function client(options: { fetch?: typeof fetch; headers?: () => Record<string, string> } = {}): RuntimeClient {
  return new RuntimeClient({ runtimeOrigin: `http://127.0.0.1:${env.server.port}`, ...options });
}

/** A paired player's cookies as one header: the credential a client without a jar sends itself. */
const cookieHeader = (p: Player) => () => ({ cookie: p.cookies.header(env.server.host)! });

async function withImagePlaylist(p: Player): Promise<void> {
  const mediaId = await storedMedia(env.server, env.tenantId, Buffer.from('shown'));
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, imageDoc(mediaId)),
  });
}

describe('the runtime client against a real server', () => {
  it('pairs a screen: a code, the claim on the pairing stream, completion, then a paired session', async () => {
    env.clock.advance(61_000); // pairing starts are budgeted per minute
    const runtime = client({ fetch: cookieKeepingFetch() });
    const pairing = await runtime.startPairing();
    expect(pairing.code).toMatch(/^[2-9A-Z]{6}$/);
    expect(Date.parse(pairing.expires_at)).toBeGreaterThan(env.clock.now());

    const claim = await claimCode(env.server, env.token, pairing.code, { label: 'Lobby' });
    expect(claim.status, claim.text).toBe(201);
    const nonce = await new Promise<string>((resolve, reject) => {
      const stream = runtime.pairingEvents({
        onEvent: (message) => {
          if (message.type !== 'pairing.claimed') return;
          stream.close();
          resolve((message.data as { completion_nonce: string }).completion_nonce);
        },
      });
      stream.done.catch(reject);
    });
    const completion = await runtime.completePairing(nonce);
    expect(completion.screen.id).toBe(claim.json().screen.id);

    const session = await runtime.deviceSession();
    expect(session).toMatchObject({ paired: true, public_url: completion.public_url });
  });

  it('fetches the manifest with its validator, then hears 304 as unchanged', async () => {
    const p = await env.player();
    await withImagePlaylist(p);
    const runtime = client({ headers: cookieHeader(p) });
    const fresh = await runtime.manifest(null, env.server.origin);
    if (fresh.status !== 'fresh') throw new Error('expected a fresh manifest');
    expect(fresh.manifest.screenId).toBe(p.screen.id);
    expect(fresh.etag).toEqual(expect.any(String));
    expect(await runtime.manifest(fresh.etag, env.server.origin)).toEqual({ status: 'unchanged' });
  });

  it('reports a manifest as activated, which the control plane records', async () => {
    const p = await env.player();
    await withImagePlaylist(p);
    const runtime = client({ headers: cookieHeader(p) });
    const fresh = await runtime.manifest(null, env.server.origin);
    if (fresh.status !== 'fresh') throw new Error('expected a fresh manifest');
    const revision = fresh.manifest.manifestRevision;
    await runtime.report({ severity: 'info', code: MANIFEST_ACTIVATED, context: { manifest_revision: revision } });
    const events = await env.server.request('GET', '/api/v1/events?limit=200', { token: env.token });
    const activated = events.json().items.filter((e: { type: string }) => e.type === 'manifest.activated');
    expect(JSON.stringify(activated)).toContain(revision);
  });

  it("asks for a launch ticket of an application placement at the manifest's launch URL", async () => {
    const p = await env.player();
    const { releaseId } = await packagedRelease(env.server, env.tenantId);
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, { name: 'App', pages: [appPage('board', releaseId)] }),
    });
    const runtime = client({ headers: cookieHeader(p) });
    const fresh = await runtime.manifest(null, env.server.origin);
    if (fresh.status !== 'fresh') throw new Error('expected a fresh manifest');
    const content = placementOf(fresh.manifest.pages[0]!.placements[0]!, 'application').content;
    const launch = await runtime.launch(content.launchUrl);
    expect(new URL(launch.launch_url).origin).toBe(content.origin);
    expect(new URL(launch.launch_url).searchParams.get('ticket')).toEqual(expect.any(String));
    expect(Date.parse(launch.expires_at)).toBeGreaterThan(env.clock.now());
  });

  it('follows the runtime stream with the credential header', async () => {
    const p = await env.player();
    const runtime = client({ headers: cookieHeader(p) });
    const heard = new Promise<string>((resolve, reject) => {
      const stream = runtime.events({
        cursor: p.session.event_cursor,
        onOpen: () => void withImagePlaylist(p).catch(reject),
        onEvent: (message) => {
          stream.close();
          resolve(message.type);
        },
      });
      stream.done.catch(reject);
    });
    expect(await heard).toBe('screen.manifest_changed');
  });

  it('turns a refusal into the shared problem type, with its code, status and request id', async () => {
    const runtime = client({ headers: () => ({ authorization: 'Marquee-Session not-yet-accepted' }) });
    const refused = await runtime.deviceSession().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MarqueeProblem);
    expect(refused).toMatchObject({ status: 401, code: 'unauthorized', request_id: expect.stringMatching(/^req_/) });
    expect((refused as MarqueeProblem).document.type).toEqual(expect.any(String));
  });
});
