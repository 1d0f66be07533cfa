import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { placementOf, WEBAPP_PACKAGE_CONTENT_TYPE } from '../../sdk/contract/manifest';
import { imageDoc, imagePlacement, page } from '../playlists/content.fixtures';
import { CookieJar, randomKey, type RequestOptions } from '../testing/harness';
import { watchedWritesSettled } from '../testing/test-store';
import { EGRESS_LIMITS, type EgressLimits } from './egress-budgets';
import { manifestRevisionId } from '../manifests/manifest-ids';
import { SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';
import { PACKAGE_RETRY_AFTER_FAILURE_MS } from '../applications/package-builds';
import { PACKAGE_PENDING_RETRY_AFTER_S, packageKey, writeReleasePackage } from '../applications/release-package';
import {
  activate,
  anonymousPlayer,
  appPage,
  createPlaylist,
  getManifest,
  patchScreen,
  publishApp,
  sha256,
  storedMedia,
  useEnrolledServer,
  validManifest,
  type Player,
} from './runtime.fixtures';

const env = useEnrolledServer();
const { clock } = env;

const BYTES = crypto.randomBytes(1000);
const PLAYER_IMAGE = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' };

interface Shown {
  p: Player;
  rev: string;
  mediaId: string;
  audioId: string;
}

/** A paired player whose manifest shows one image (`bytes`) and a soundtrack. */
async function showing(bytes = BYTES): Promise<Shown> {
  const p = await env.player();
  const mediaId = await storedMedia(env.server, env.tenantId, bytes);
  const audioId = await storedMedia(env.server, env.tenantId, Buffer.from('ID3 soundtrack'), {
    kind: 'audio',
    durationMs: 60_000,
  });
  const doc = { ...imageDoc(mediaId), audio: { tracks: [{ media_id: audioId }] } };
  await patchScreen(env.server, env.token, p.screen.id, {
    playlist_id: await createPlaylist(env.server, env.token, doc),
  });
  const { manifest } = await validManifest(env.server, p);
  return { p, rev: manifest.manifestRevision, mediaId, audioId };
}

function fetchMedia(s: Shown, options: RequestOptions & { rev?: string; mediaId?: string; method?: string } = {}) {
  const { rev = s.rev, mediaId = s.mediaId, method = 'GET', ...rest } = options;
  return env.server.request(method, `/content/v1/manifests/${rev}/media/${mediaId}`, { cookies: s.p.cookies, ...rest });
}

let shown: Shown;
beforeAll(async () => {
  shown = await showing();
});

describe('protected media', () => {
  it('serves a media of the manifest whole, with its identity headers', async () => {
    const res = await fetchMedia(shown, { headers: PLAYER_IMAGE });
    expect(res.status).toBe(200);
    expect(res.body.equals(BYTES)).toBe(true);
    expect(res.headers).toMatchObject({
      'accept-ranges': 'bytes',
      'content-length': '1000',
      'content-type': 'image/webp',
      etag: `"${sha256(BYTES)}"`,
      'content-disposition': `inline; filename="${shown.mediaId}.webp"`,
      'x-content-type-options': 'nosniff',
      'cross-origin-resource-policy': 'same-origin',
      'referrer-policy': 'no-referrer',
    });
    expect(res.headers['content-range']).toBeUndefined();
  });

  it('serves the soundtrack through the same route', async () => {
    const res = await fetchMedia(shown, { mediaId: shown.audioId });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(res.text).toBe('ID3 soundtrack');
  });

  it('answers If-None-Match with 304 and HEAD without a body', async () => {
    const etag = `"${sha256(BYTES)}"`;
    const cached = await fetchMedia(shown, { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
    const head = await fetchMedia(shown, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('1000');
    expect(head.body.length).toBe(0);
  });

  it.each([
    ['bytes=0-9', 206, 0, 9],
    ['bytes=10-', 206, 10, 999],
    ['bytes=-5', 206, 995, 999],
    ['bytes=990-5000', 206, 990, 999],
    ['bytes=999-999', 206, 999, 999],
  ])('serves one range %s as %i', async (range, status, start, end) => {
    const res = await fetchMedia(shown, { headers: { range } });
    expect(res.status).toBe(status);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/1000`);
    expect(res.headers['content-length']).toBe(String(end - start + 1));
    expect(res.body.equals(BYTES.subarray(start, end + 1))).toBe(true);
  });

  it.each(['bytes=0-1,5-6', 'bytes=1000-', 'bytes=5-2', 'bytes=-0', 'items=0-1', 'bytes=a-b', 'bytes=-'])(
    'refuses the range %s with 416',
    async (range) => {
      const res = await fetchMedia(shown, { headers: { range } });
      expect(res.status).toBe(416);
      expect(res.json().code).toBe('invalid_range');
      expect(res.headers['content-range']).toBe('bytes */1000');
      expect(res.headers['accept-ranges']).toBe('bytes');
    },
  );

  it.each([
    ['no Fetch Metadata (a native client)', {}, 200],
    ['a same-origin image', PLAYER_IMAGE, 200],
    [
      'a same-origin video',
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'video' },
      200,
    ],
    [
      'a same-origin audio element',
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'audio' },
      200,
    ],
    [
      'the player or its service worker caching (fetch)',
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' },
      200,
    ],
    [
      'a cross-site image',
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
      403,
    ],
    [
      'a same-site image',
      { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
      403,
    ],
    [
      'a typed-in address',
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      403,
    ],
    [
      'a same-origin navigation',
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      403,
    ],
    [
      'a same-origin frame',
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
      403,
    ],
    [
      'a same-origin script',
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
      403,
    ],
    ['a destination without a site', { 'sec-fetch-dest': 'image' }, 403],
    ['an unknown site value', { 'sec-fetch-site': 'elsewhere', 'sec-fetch-dest': 'image' }, 403],
  ])('Fetch Metadata of %s %j → %i', async (_what, headers, status) => {
    const res = await fetchMedia(shown, { headers });
    expect(res.status).toBe(status);
    if (status === 403) expect(res.json().detail).toMatch(/Fetch Metadata/);
  });

  it('serves only media of that manifest, of this screen', async () => {
    const other = await storedMedia(env.server, env.tenantId, Buffer.from('not in the manifest'));
    expect((await fetchMedia(shown, { mediaId: other })).status).toBe(404);
    const elsewhere = await showing();
    // Another screen's revision id names nothing for this screen, and its media are not ours to fetch.
    expect((await fetchMedia(shown, { rev: elsewhere.rev })).status).toBe(404);
    expect((await fetchMedia(shown, { mediaId: elsewhere.mediaId })).status).toBe(404);
    expect((await fetchMedia(shown, { rev: 'man_999_000000000000' })).status).toBe(404);
    expect((await fetchMedia(shown, { rev: 'nonsense' })).status).toBe(404);
  });

  it('needs a runtime cookie; anonymous sessions may fetch', async () => {
    expect((await env.server.request('GET', `/content/v1/manifests/${shown.rev}/media/${shown.mediaId}`)).status).toBe(
      401,
    );
    const viewer = await anonymousPlayer(env.server, shown.p.screen);
    const res = await fetchMedia({ ...shown, p: viewer });
    expect(res.status).toBe(200);
  });

  it('keeps an older revision granted for its grace, then only while it is the active one', async () => {
    const s = await showing();
    await activate(env.server, s.p, s.rev);
    await patchScreen(env.server, env.token, s.p.screen.id, { timezone: 'Europe/Paris' });
    const next = await validManifest(env.server, s.p);
    expect(next.manifest.manifestRevision).not.toBe(s.rev);
    clock.advance(SUPERSEDED_MANIFEST_GRACE_MS + 1000);
    expect((await fetchMedia(s)).status).toBe(200); // still what the player reported on glass
    await activate(env.server, s.p, next.manifest.manifestRevision);
    const lapsed = await fetchMedia(s);
    expect(lapsed.status).toBe(403);
    expect(lapsed.json().detail).toMatch(/no longer grants/);
    expect((await fetchMedia(s, { rev: next.manifest.manifestRevision })).status).toBe(200);
  });

  it('keeps a superseded revision granted within the grace even when it was never activated', async () => {
    const s = await showing();
    await patchScreen(env.server, env.token, s.p.screen.id, { timezone: 'Europe/Rome' });
    await validManifest(env.server, s.p);
    expect((await fetchMedia(s)).status).toBe(200);
    clock.advance(SUPERSEDED_MANIFEST_GRACE_MS);
    expect((await fetchMedia(s)).status).toBe(403);
  });

  it('stops granting a revision this process superseded, though its content was just fetched (D-372)', async () => {
    const s = await showing();
    expect((await fetchMedia(s)).status).toBe(200);
    await patchScreen(env.server, env.token, s.p.screen.id, { timezone: 'Europe/Madrid' });
    await validManifest(env.server, s.p);
    clock.advance(SUPERSEDED_MANIFEST_GRACE_MS);
    expect((await fetchMedia(s)).status).toBe(403);
  });

  it('refuses a session this process ended, or a screen it archived, on the very next range (D-373)', async () => {
    const s = await showing();
    expect((await fetchMedia(s)).status).toBe(200);
    const rotated = await env.server.request('POST', `/api/v1/screens/${s.p.screen.id}/public-id/rotate`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(rotated.status).toBe(200);
    expect((await fetchMedia(s)).status).toBe(401);
    const t = await showing();
    expect((await fetchMedia(t)).status).toBe(200);
    const archived = await env.server.request('POST', `/api/v1/screens/${t.p.screen.id}/archive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(archived.status).toBe(200);
    expect((await fetchMedia(t)).status).toBe(403);
  });

  it('keeps its session rows across a screen write they do not read (presence), not across one they do', async () => {
    const s = await showing();
    await watchedWritesSettled(env.server.services.store);
    expect((await fetchMedia(s)).status).toBe(200);
    const { db } = env.server.services.store;
    // Raw SQL: a change the cache is not told of, so only what empties the cache makes it seen.
    await sql`UPDATE runtime_sessions SET revoked_at = ${clock.now()} WHERE screen_id = ${s.p.screen.id}`.execute(db);
    await db.updateTable('screens').set({ last_online_at: clock.now() }).where('id', '=', s.p.screen.id).execute();
    expect((await fetchMedia(s)).status).toBe(200);
    await db
      .updateTable('screens')
      .set((eb) => ({ manifest_revision: eb.ref('manifest_revision') }))
      .where('id', '=', s.p.screen.id)
      .execute();
    expect((await fetchMedia(s)).status).toBe(401);
  });

  it('gives back the bytes it reserved for a client that left while they were reserved', async () => {
    const s = await showing();
    const { egress } = env.server.services;
    const { reserve, settle } = egress;
    const settled: number[] = [];
    let entered = () => {};
    const reserving = new Promise<void>((resolve) => (entered = resolve));
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    egress.reserve = async (...args) => {
      entered();
      await released;
      return reserve.apply(egress, args);
    };
    egress.settle = async (reservation, sent) => {
      settled.push(sent);
      return settle.call(egress, reservation, sent);
    };
    try {
      const path = `/content/v1/manifests/${s.rev}/media/${s.mediaId}`;
      const req = env.server.rawRequest('GET', path, { cookies: s.p.cookies }, () => {});
      req.on('error', () => {});
      await reserving;
      req.destroy();
      await new Promise((r) => setTimeout(r, 50)); // the server sees the connection close
      release();
      await vi.waitFor(() => expect(settled).toEqual([0]));
    } finally {
      egress.reserve = reserve;
      egress.settle = settle;
    }
  });

  it('grants nothing on an archived screen', async () => {
    const s = await showing();
    const archived = await env.server.request('POST', `/api/v1/screens/${s.p.screen.id}/archive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(archived.status).toBe(200);
    const res = await fetchMedia(s);
    expect(res.status).toBe(403);
    expect(res.json().detail).toMatch(/archived/);
  });

  it('records completed bytes in the egress ledger, and nothing for HEAD or 304', async () => {
    const s = await showing();
    const ledger = async () => {
      // Completed bytes are committed in batches; flush what this process holds.
      await env.server.services.egressLedger.flush();
      return (
        (await env.server.services.store.db
          .selectFrom('egress_ledger')
          .selectAll()
          .where('tenant_id', '=', env.tenantId)
          .where('kind', '=', 'runtime_media_delivery')
          .executeTakeFirst()) ?? { bytes: 0, count: 0 }
      );
    };
    const before = await ledger();
    await fetchMedia(s);
    await fetchMedia(s, { headers: { range: 'bytes=0-99' } });
    await fetchMedia(s, { method: 'HEAD' });
    await fetchMedia(s, { headers: { 'if-none-match': `"${sha256(BYTES)}"` } });
    await new Promise((r) => setTimeout(r, 50));
    const after = await ledger();
    expect(after.bytes - before.bytes).toBe(1100);
    expect(after.count - before.count).toBe(2);
  });
});

describe('egress budgets', () => {
  /** The server reads its limits on each request: tests spend them with small objects, then restore them. */
  const tuneEgress = (limits: Partial<EgressLimits>) => Object.assign(env.server.services.tuning.egressLimits, limits);

  async function spent(status: number, s: Shown, p: Player = s.p) {
    const res = await fetchMedia({ ...s, p });
    expect(res.status).toBe(status);
    return res;
  }

  it('refuse a client past its bytes with 429 and Retry-After, and admit it again next window', async () => {
    const s = await showing();
    tuneEgress({ clientBytesPerMinute: 2500 });
    try {
      clock.set(Math.ceil(clock.now() / 60_000) * 60_000 + 1000);
      await spent(200, s);
      await spent(200, s); // 2000 of 2500 bytes reserved
      const refused = await spent(429, s); // 1000 more do not fit
      expect(refused.json().code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(59);
      expect(refused.headers['ratelimit-policy']).toBeUndefined(); // byte budgets carry no RateLimit headers
      // Another session of the same screen has its own client budget.
      await spent(200, s, await anonymousPlayer(env.server, s.p.screen));
      clock.advance(60_000);
      await spent(200, s);
    } finally {
      tuneEgress(EGRESS_LIMITS);
    }
  });

  it('hold under concurrency: of 20 parallel 200 KB requests under a 250 KB budget, one is served', async () => {
    const big = crypto.randomBytes(200_000);
    const s = await showing(big);
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000 + 1000);
    tuneEgress({ clientBytesPerMinute: 250_000 });
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetchMedia(s)));
      const served = answers.filter((a) => a.status === 200);
      expect(served).toHaveLength(1);
      expect(served[0]!.body.equals(big)).toBe(true);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(19);
      // What a client did not take is given back: a 1-byte range still fits beside the 200 KB.
      expect((await fetchMedia(s, { headers: { range: 'bytes=0-0' } })).status).toBe(206);
    } finally {
      tuneEgress(EGRESS_LIMITS);
    }
  });

  it('give back the bytes of a response the client abandoned', async () => {
    const MiB = 1024 * 1024;
    const big = crypto.randomBytes(32 * MiB);
    const s = await showing(big);
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000 + 1000);
    // Two whole copies do not fit; one copy and what socket buffers took of the abandoned one do.
    tuneEgress({ clientBytesPerMinute: 48 * MiB });
    try {
      // Reads the headers and then hangs up: most of the 32 MiB never leaves the server.
      await new Promise<void>((resolve, reject) => {
        const req = env.server.rawRequest(
          'GET',
          `/content/v1/manifests/${s.rev}/media/${s.mediaId}`,
          { cookies: s.p.cookies },
          (res) => {
            expect(res.statusCode).toBe(200);
            req.destroy();
            res.destroy();
            resolve();
          },
        );
        req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
      });
      await new Promise((r) => setTimeout(r, 100));
      const again = await fetchMedia(s);
      expect(again.status).toBe(200);
      expect(again.body.length).toBe(big.length);
    } finally {
      tuneEgress(EGRESS_LIMITS);
    }
  });

  it('refuse every client of a screen past the screen budget, and every screen past the account budget', async () => {
    const s = await showing();
    const t = await showing();
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000 + 1000);
    tuneEgress({ screenBytesPerMinute: 1000 });
    try {
      await spent(200, s);
      await spent(429, s, await anonymousPlayer(env.server, s.p.screen));
      await spent(200, t); // another screen
    } finally {
      tuneEgress(EGRESS_LIMITS);
    }
    clock.advance(60_000);
    tuneEgress({ accountBytesPerMinute: 1000 });
    try {
      await spent(200, s);
      await spent(429, t);
    } finally {
      tuneEgress(EGRESS_LIMITS);
    }
  });
});

describe('application packages', () => {
  async function untar(gz: Buffer): Promise<{ name: string; mode: number; mtime: number; body: string }[]> {
    const extract = tar.extract();
    const out: { name: string; mode: number; mtime: number; body: string }[] = [];
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        out.push({
          name: header.name,
          mode: header.mode!,
          mtime: header.mtime!.getTime(),
          body: Buffer.concat(chunks).toString(),
        });
        next();
      });
    });
    const done = new Promise((resolve, reject) => {
      extract.on('finish', () => resolve(undefined));
      extract.on('error', reject);
    });
    Readable.from([zlib.gunzipSync(gz)]).pipe(extract);
    await done;
    return out;
  }

  async function appShown() {
    const p = await env.player();
    const app = await publishApp(env.server, env.token, 'packaged');
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, {
        name: 'App',
        pages: [appPage('board', app.releaseId)],
      }),
    });
    const { manifest } = await validManifest(env.server, p);
    const placement = placementOf(manifest.pages[0]!.placements[0]!, 'application');
    return { p, app, manifest, pkg: placement.content.package };
  }

  it('serves the deterministic tar.gz the manifest names, to the paired device', async () => {
    const { p, app, pkg } = await appShown();
    const device = new CookieJar();
    device.set(env.server.host, '__Host-marquee-device', p.cookies.get(env.server.host, '__Host-marquee-device')!);
    const res = await env.server.request('GET', pkg.url, { cookies: device });
    expect(res.status, res.text).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': WEBAPP_PACKAGE_CONTENT_TYPE,
      'content-length': String(pkg.bytes),
      etag: `"${pkg.sha256}"`,
      'cache-control': 'private, max-age=31536000, immutable',
      'cross-origin-resource-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      vary: 'Cookie, Authorization',
      'accept-ranges': 'bytes',
      'content-disposition': `attachment; filename="${app.releaseId}.tar.gz"`,
    });
    expect(sha256(res.body)).toBe(pkg.sha256);
    expect(
      res.body.subarray(0, 10).equals(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff])),
    ).toBe(true);
    const entries = await untar(res.body);
    expect(entries.map((e) => e.name)).toEqual(['assets/app.js', 'assets/style.css', 'index.html']);
    expect(entries.every((e) => e.mode === 0o644 && e.mtime === 0)).toBe(true);
    expect(entries[0]!.body).toContain('packaged');

    const ranged = await env.server.request('GET', pkg.url, { cookies: p.cookies, headers: { range: 'bytes=0-9' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-range']).toBe(`bytes 0-9/${pkg.bytes}`);
  });

  it('is rebuilt byte for byte identical', async () => {
    const { app, pkg } = await appShown();
    await env.server.services.blobs.delete(packageKey(app.releaseId));
    const rebuilt = await writeReleasePackage(env.server.services, app.releaseId);
    expect(rebuilt.sha256).toBe(pkg.sha256);
    expect(rebuilt.bytes).toBe(pkg.bytes);
  });

  it('is built once the release is published, before any manifest names it', async () => {
    const app = await publishApp(env.server, env.token, 'published'); // waits for the queue to settle
    const row = await env.server.services.store.db
      .selectFrom('release_packages')
      .selectAll()
      .where('release_id', '=', app.releaseId)
      .executeTakeFirstOrThrow();
    expect(row.blob_key).toBe(packageKey(app.releaseId));
    const chunks: Buffer[] = [];
    for await (const chunk of env.server.services.blobs.read(row.blob_key)) chunks.push(chunk as Buffer);
    const blob = Buffer.concat(chunks);
    expect(blob.length).toBe(row.bytes);
    expect(sha256(blob)).toBe(row.sha256);
  });

  it('is never built by a manifest request: a release without one is manifest_degraded until the background queue built it', async () => {
    const { services } = env.server;
    const { blobs } = services;
    const write = blobs.write.bind(blobs);
    const packageWrites: string[] = [];
    let failing = true;
    let open: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    blobs.write = async (key, source, options) => {
      if (!key.endsWith('/package')) return write(key, source, options);
      packageWrites.push(key);
      await gate;
      if (!failing) return write(key, source, options);
      if (!Buffer.isBuffer(source)) source.destroy();
      throw new Error('no space left on device');
    };
    try {
      // The build queued at publication fails; the release is published all the same (the release host serves its files).
      const p = await env.player();
      const app = await publishApp(env.server, env.token, 'late package');
      expect(packageWrites).toHaveLength(1);
      const stored = () =>
        services.store.db.selectFrom('release_packages').selectAll().where('release_id', '=', app.releaseId).execute();
      expect(await stored()).toEqual([]);
      await patchScreen(env.server, env.token, p.screen.id, {
        playlist_id: await createPlaylist(env.server, env.token, {
          name: 'App',
          pages: [appPage('board', app.releaseId)],
        }),
      });

      const degraded = await getManifest(env.server, p);
      expect(degraded.status).toBe(500);
      expect(degraded.json().code).toBe('manifest_degraded');
      expect(degraded.headers['retry-after']).toBe('60'); // a failed build is not retried at once
      await services.packageBuilds.idle();
      expect(packageWrites).toHaveLength(1); // nor per poll

      failing = false;
      gate = new Promise((resolve) => (open = resolve)); // the next package write waits until the test lets it go
      clock.advance(PACKAGE_RETRY_AFTER_FAILURE_MS);
      const answered = await getManifest(env.server, p);
      // The request asked the queue for the package and answered while its build was held.
      expect(answered.status).toBe(500);
      expect(answered.headers['retry-after']).toBe(String(PACKAGE_PENDING_RETRY_AFTER_S));
      expect(await stored()).toEqual([]);
      open();
      await services.packageBuilds.idle();
      expect(packageWrites).toHaveLength(2);
      expect(await stored()).toHaveLength(1);
      const { manifest } = await validManifest(env.server, p);
      const shown = placementOf(manifest.pages[0]!.placements[0]!, 'application').content.package;
      expect(shown.sha256).toBe((await stored())[0]!.sha256);
      expect(packageWrites).toHaveLength(2);
      expect(env.server.logText()).toContain('release package could not be built');
    } finally {
      open();
      blobs.write = write;
    }
  });

  it('is refused to anonymous sessions, to releases the manifest does not show, and without a player cookie', async () => {
    const { p, pkg, manifest } = await appShown();
    const viewer = await anonymousPlayer(env.server, p.screen);
    expect((await env.server.request('GET', pkg.url, { cookies: viewer.cookies })).status).toBe(403);
    expect((await env.server.request('GET', pkg.url)).status).toBe(401);
    const other = await publishApp(env.server, env.token, 'other');
    const res = await env.server.request(
      'GET',
      `/content/v1/manifests/${manifest.manifestRevision}/releases/${other.releaseId}/package`,
      { cookies: p.cookies },
    );
    expect(res.status).toBe(404);
    expect(
      (
        await env.server.request('GET', pkg.url, {
          cookies: p.cookies,
          headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors' },
        })
      ).status,
    ).toBe(403);
  });

  it('names the revision it belongs to', async () => {
    const { p, pkg, manifest } = await appShown();
    expect(pkg.url).toBe(
      `/content/v1/manifests/${manifest.manifestRevision}/releases/${placementOf(manifest.pages[0]!.placements[0]!, 'application').content.releaseId}/package`,
    );
    expect(manifest.manifestRevision).toBe(
      manifestRevisionId(p.screen.id, Number(manifest.manifestRevision.split('_')[1])),
    );
  });
});

describe('media and pages together', () => {
  it('a media shown on two pages is one grant', async () => {
    const p = await env.player();
    const m = await storedMedia(env.server, env.tenantId, BYTES);
    const doc = {
      name: 'Twice',
      pages: [
        page('a', [imagePlacement('x', { by: 'id', media_id: m })]),
        page('b', [imagePlacement('y', { by: 'id', media_id: m })]),
      ],
    };
    await patchScreen(env.server, env.token, p.screen.id, {
      playlist_id: await createPlaylist(env.server, env.token, doc),
    });
    const { manifest } = await validManifest(env.server, p);
    const srcs = manifest.pages.map((pg) => placementOf(pg.placements[0]!, 'image').content.items[0]!.src);
    expect(new Set(srcs).size).toBe(1);
    const rows = await env.server.services.store.db
      .selectFrom('runtime_manifest_content')
      .selectAll()
      .where('screen_id', '=', p.screen.id)
      .execute();
    expect(rows.filter((r) => r.ref === m)).toHaveLength(1);
  });
});

describe('cached grants', () => {
  it('stops serving content at once when this process removes what the revision names', async () => {
    const s = await showing();
    expect((await fetchMedia(s, { headers: PLAYER_IMAGE })).status).toBe(200);
    await env.server.services.store.db
      .deleteFrom('runtime_manifest_content')
      .where('screen_id', '=', s.p.screen.id)
      .where('ref', '=', s.mediaId)
      .execute();
    expect((await fetchMedia(s, { headers: PLAYER_IMAGE })).status).toBe(404);
  });
});
