// Runtime plane benchmark: an authenticated GET /runtime/v1/manifest answered 304 (what every
// player polls), against a bare Express route, both measured in this run. Goal: at least 0.6x.
import { load, ratio, startChild, startMarquee, table } from './harness';

/** The values of the Set-Cookie headers, as a Cookie header. */
function cookiesOf(res: Response, jar: Map<string, string>): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
}

function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

/**
 * Enrolls (unless given a project bearer), pairs one screen, assigns a playlist of one page (an
 * iframe, unless given another placement), and returns the paired player's cookies.
 */
export async function pairedPlayer(
  origin: string,
  options: { token?: string; placement?: Record<string, unknown> } = {},
): Promise<string> {
  const json = { 'content-type': 'application/json' };
  let token = options.token;
  if (!token) {
    const enrolled = await fetch(`${origin}/api/v1/enrollments`, {
      method: 'POST',
      headers: { ...json, 'idempotency-key': 'bench-manifest-enrollment' },
      body: JSON.stringify({ client_id: `cli_${'m'.repeat(43)}`, email: 'bench@example.com' }),
    });
    ({ token } = (await enrolled.json()) as { token: string });
  }
  const bearer = { authorization: `Bearer ${token}` };
  const jar = new Map<string, string>();

  const started = await fetch(`${origin}/runtime/v1/pairing-sessions`, { method: 'POST' });
  cookiesOf(started, jar);
  const { code } = (await started.json()) as { code: string };
  const claimed = await fetch(`${origin}/api/v1/screens/pair`, {
    method: 'POST',
    headers: { ...json, ...bearer, 'idempotency-key': 'bench-manifest-pair' },
    body: JSON.stringify({ code }),
  });
  const { screen } = (await claimed.json()) as { screen: { id: string } };
  const events = await (
    await fetch(`${origin}/runtime/v1/pairing-events`, { headers: { cookie: cookieHeader(jar) } })
  ).text();
  const nonce = /"completion_nonce":"([^"]+)"/.exec(events)![1];
  cookiesOf(
    await fetch(`${origin}/runtime/v1/pairing-sessions/complete`, {
      method: 'POST',
      headers: { ...json, cookie: cookieHeader(jar) },
      body: JSON.stringify({ completion_nonce: nonce }),
    }),
    jar,
  );
  cookiesOf(
    await fetch(`${origin}/runtime/v1/device-sessions`, { method: 'POST', headers: { cookie: cookieHeader(jar) } }),
    jar,
  );

  const playlist = await fetch(`${origin}/api/v1/playlists`, {
    method: 'POST',
    headers: { ...json, ...bearer, 'idempotency-key': 'bench-manifest-playlist' },
    body: JSON.stringify({
      name: 'Bench loop',
      pages: [
        {
          id: 'news',
          canvas: { width: 1920, height: 1080, background: '#000000FF' },
          transition: { type: 'crossfade', duration_ms: 200 },
          advance: { mode: 'duration', after_ms: 15000 },
          placements: [
            options.placement ?? {
              id: 'site',
              content: { type: 'iframe', src: 'https://example.com/', title: 'News' },
              rect: { x: 0, y: 0, width: 1920, height: 1080 },
              layer: 0,
              content_fit: 'fill',
            },
          ],
        },
      ],
    }),
  });
  const { id: playlistId } = (await playlist.json()) as { id: string };
  await fetch(`${origin}/api/v1/screens/${screen.id}`, {
    method: 'PATCH',
    headers: { ...json, ...bearer },
    body: JSON.stringify({ playlist_id: playlistId }),
  });
  return cookieHeader(jar);
}

export async function manifestNotModified(): Promise<void> {
  const bare = await startChild('bench/bare-express.ts', { PORT: '18931' }, 'listening');
  const marquee = await startMarquee(18932);
  try {
    const cookie = await pairedPlayer(marquee.origin);
    const url = `${marquee.origin}/runtime/v1/manifest`;
    const first = await fetch(url, { headers: { cookie } });
    if (first.status !== 200) throw new Error(`manifest answered ${first.status}: ${await first.text()}`);
    const etag = first.headers.get('etag')!;
    const check = await fetch(url, { headers: { cookie, 'if-none-match': etag } });
    if (check.status !== 304) throw new Error(`the conditional manifest answered ${check.status}, not 304`);

    await load('http://127.0.0.1:18931/bare', { seconds: 1 }); // warm-up
    await load(url, { headers: { cookie, 'if-none-match': etag }, seconds: 1 });
    const baseline = await load('http://127.0.0.1:18931/bare');
    const notModified = await load(url, { headers: { cookie, 'if-none-match': etag } });
    const full = await load(url, { headers: { cookie } });
    table([
      {
        route: 'bare Express GET /bare',
        'req/s': Math.round(baseline.requestsPerSecond),
        p99_ms: baseline.p99Ms,
        ratio: '1.00x',
        non2xx: baseline.non2xx,
      },
      {
        route: 'GET /runtime/v1/manifest → 304',
        'req/s': Math.round(notModified.requestsPerSecond),
        p99_ms: notModified.p99Ms,
        ratio: ratio(notModified.requestsPerSecond, baseline.requestsPerSecond),
        non2xx: notModified.non2xx, // every answer is a 304
      },
      {
        route: 'GET /runtime/v1/manifest → 200',
        'req/s': Math.round(full.requestsPerSecond),
        p99_ms: full.p99Ms,
        ratio: ratio(full.requestsPerSecond, baseline.requestsPerSecond),
        non2xx: full.non2xx,
      },
    ]);
  } finally {
    await Promise.all([bare.stop(), marquee.stop()]);
  }
}
