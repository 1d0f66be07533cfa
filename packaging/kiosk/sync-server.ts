// The embedded sync server on 127.0.0.1: the player build, and the runtime plane as the renderer
// knows it (pairing, sessions, manifest, events, reports, launches, protected content, runtime
// key/value), answered from the agent's mirror and, when online, from upstream through the agent.
// Each release plays from its own local origin (`<label>.release.localhost:<port>`) with launch
// tickets minted here. Any Host but those is refused (DNS rebinding), and so is a browser request
// whose Origin is another site's.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import type { KVEntry, KVList, KVWrite } from '../../sdk/contract/kv';
import { PLACEMENT_CAPABILITY_HEADER, kvContentTypeProblem, kvKeyProblem, kvValueProblem } from '../../sdk/contract/kv';
import type { RuntimeApplicationPlacement } from '../../sdk/contract/manifest';
import { parseRuntimeManifest } from '../../sdk/contract/manifest';
import { PlaybackReportBatch } from '../../sdk/contract/playback';
import { RuntimeReport, SyncAdvance } from '../../sdk/contract/runtime';
import { RUNTIME_CAPABILITIES, type RuntimeSession } from '../../sdk/contract/screens';
import { MarqueeProblem } from '../../sdk/client/problem';
import { isUnreachable } from '../../sdk/client/runtime';
import type { KioskAgent } from './agent';
import { LocalKvProblem } from './kv-mirror';
import { localReleaseLabel, mediaOf, releasesOf, renderLocalManifest } from './local-manifest';
import { CHANNEL_PATH, RendererChannel } from './renderer-channel';
import { openSse } from './sse';

/** spec: launch tickets are single use and live 30 seconds. */
export const LAUNCH_TICKET_TTL_MS = 30_000;
/** spec: placement capabilities live five minutes. */
export const LOCAL_CAPABILITY_TTL_MS = 5 * 60_000;
const RELEASE_GRANT_COOKIE = '__Host-marquee-release';
const RELEASE_GRANT_TTL_MS = 24 * 3600_000;
const RELEASE_HOST = /^([a-f0-9]{40})\.release\.localhost$/;
const IMMUTABLE = 'private, max-age=31536000, immutable';
const FRAMING = { 'Content-Security-Policy': "frame-ancestors 'none'", 'X-Frame-Options': 'DENY' };
const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.wasm': 'application/wasm',
};
/** Tells the player it runs in a kiosk and where its channel to the agent is. */
export const KIOSK_META = `<meta name="marquee-kiosk-channel" content="${CHANNEL_PATH}" />`;

function sendProblem(
  res: Response,
  status: number,
  code: string,
  detail: string,
  headers: Record<string, string> = {},
  extensions: Record<string, unknown> = {},
) {
  if (res.headersSent) return void res.destroy();
  res
    .status(status)
    .set({ 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store', ...headers })
    .end(JSON.stringify({ type: 'about:blank', title: code, status, detail, code, errors: [], ...extensions }));
}

/** A local signed value: `base64url(JSON).hmac`, under the agent's own key and a purpose. */
function seal(key: Buffer, purpose: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${crypto.createHmac('sha256', key).update(`${purpose}\u0000${payload}`).digest('base64url')}`;
}

function unseal<T>(key: Buffer, purpose: string, text: string | undefined): T | undefined {
  if (!text) return undefined;
  const dot = text.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const payload = text.slice(0, dot);
  const expected = crypto.createHmac('sha256', key).update(`${purpose}\u0000${payload}`).digest('base64url');
  const given = text.slice(dot + 1);
  if (given.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected)))
    return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** One byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`) of `size`, or why it is refused. */
function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'refused' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'refused';
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return 'refused';
  return { start, end };
}

/** A release file's size, or undefined when it is gone (evicted or reset since it was looked up). */
function fileBytes(file: string): number | undefined {
  try {
    return fs.statSync(file).size;
  } catch {
    return undefined;
  }
}

/** Bodies the JSON parser refuses, by its error type: the server's codes, and nothing of the body itself. */
const BODY_REFUSALS = new Map<unknown, { detail: string; field: { code: string; detail: string } }>([
  [
    'entity.parse.failed',
    { detail: 'malformed JSON', field: { code: 'malformed_json', detail: 'body is not valid JSON' } },
  ],
  [
    'entity.too.large',
    {
      detail: 'the request body exceeds the limit of this route',
      field: { code: 'too_large', detail: 'the body is larger than this route takes' },
    },
  ],
]);

interface LocalCapability {
  a: string; // application
  r: string; // release
  p: string; // <page>/<placement>
  m: string; // manifest revision
  e: number; // expiry
}

interface ReleaseGrant {
  l: string; // host label
  r: string; // release
  e: number;
}

export function createSyncServer(agent: KioskAgent): express.Express & { attachChannel(server: http.Server): void } {
  const app = express() as express.Express & { attachChannel(server: http.Server): void };
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  const channel = new RendererChannel();
  agent.channel = channel;
  agent.events.subscribe((event) =>
    channel.send({ type: 'runtime.event', event: { type: event.type, data: event.data } }),
  );
  const tickets = new Map<string, { releaseId: string; label: string; expiresAt: number }>();
  const playerDir = path.resolve(agent.options.playerDir);
  const playerHost = () => `127.0.0.1:${agent.listeningPort}`;
  const playerOrigin = () => agent.origin;

  /** Releases of the manifests the agent holds, by local host label. */
  const releaseOfLabel = (label: string): string | undefined => {
    for (const held of [agent.book.active(), agent.book.next()]) {
      for (const release of held ? releasesOf(held.manifest) : [])
        if (localReleaseLabel(release.releaseId) === label) return release.releaseId;
    }
    return undefined;
  };

  // The player's clock comes from Date headers: the server's time, not this device's (agent.serverNow).
  app.use((_req, res, next) => {
    res.setHeader('Date', new Date(agent.serverNow()).toUTCString());
    next();
  });

  // Host and Origin: the player's loopback origin, or a release's local origin. Nothing else.
  app.use((req, res, next) => {
    const host = (req.headers.host ?? '').toLowerCase();
    res.locals.plane = 'player';
    if (host !== playerHost()) {
      const [name, port] = host.split(':');
      const label = RELEASE_HOST.exec(name ?? '')?.[1];
      if (label === undefined || port !== String(agent.listeningPort))
        return sendProblem(res, 421, 'forbidden', 'this kiosk agent answers on its own loopback origin only');
      res.locals.plane = 'release';
      res.locals.label = label;
      return next();
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== playerOrigin())
      return sendProblem(res, 403, 'forbidden', 'requests from other sites are refused');
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site')
      return sendProblem(res, 403, 'forbidden', `Fetch Metadata: ${site} requests are refused`);
    next();
  });

  const release = express.Router();
  const player = express.Router();
  app.use((req, res, next) => (res.locals.plane === 'release' ? release(req, res, next) : player(req, res, next)));

  // ---- Pairing and sessions (the renderer pairs through the agent; the agent holds the key)

  player.post('/runtime/v1/pairing-sessions', async (_req, res) => {
    if (agent.enrollment())
      return sendProblem(res, 409, 'resource_conflict', 'this kiosk is paired; open a device session');
    try {
      const pairing = await agent.pairingCode();
      res
        .status(201)
        .set('Cache-Control', 'no-store')
        .json({ code: pairing.code, expires_at: new Date(pairing.expiresAt).toISOString() });
    } catch (error) {
      upstreamFailure(res, error);
    }
  });

  player.get('/runtime/v1/pairing-events', (_req, res) => {
    const stream = openSse(res);
    const deliver = () => {
      const enrollment = agent.enrollment();
      if (!enrollment) return false;
      stream.send({
        event: 'pairing.claimed',
        data: { type: 'pairing.claimed', completion_nonce: enrollment.localNonce },
      });
      stream.close();
      return true;
    };
    if (deliver()) return;
    const off = agent.onPaired(() => deliver());
    stream.onClose(off);
  });

  player.post('/runtime/v1/pairing-sessions/complete', express.json(), (req, res) => {
    const enrollment = agent.enrollment();
    if (!enrollment) return sendProblem(res, 409, 'resource_conflict', 'this kiosk has not been claimed yet');
    if (req.body?.completion_nonce !== enrollment.localNonce)
      return sendProblem(res, 403, 'forbidden', 'the completion nonce does not match');
    res.set('Cache-Control', 'no-store').json(enrollment.completion);
  });

  player.post('/runtime/v1/device-sessions', (_req, res) => {
    const enrollment = agent.enrollment();
    if (!enrollment) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    const body: RuntimeSession = {
      paired: true,
      capabilities: [...RUNTIME_CAPABILITIES],
      event_cursor: agent.events.head(),
      public_url: enrollment.completion.public_url,
      // Mirrored from upstream (its sessions and display events): the schedule holds offline.
      display: agent.display(),
    };
    res.status(201).set('Cache-Control', 'no-store').json(body);
  });

  player.post('/runtime/v1/sessions', (_req, res) =>
    sendProblem(res, 404, 'not_found', 'a kiosk plays its own screen only; open the kiosk at /'),
  );

  // ---- Manifest and events

  const localCapability = (placement: RuntimeApplicationPlacement, pageId: string, revision: string, now: number) => {
    const value: LocalCapability = {
      a: placement.content.applicationId,
      r: placement.content.releaseId,
      p: `${pageId}/${placement.id}`,
      m: revision,
      e: now + LOCAL_CAPABILITY_TTL_MS,
    };
    return { handle: `lc.${seal(agent.localKey, 'capability', value)}`, expiresAt: new Date(value.e).toISOString() };
  };

  player.get('/runtime/v1/manifest', (req, res) => {
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    const active = agent.book.active();
    if (!active)
      return sendProblem(res, 503, 'dependency_unavailable', 'no manifest on disk yet; waiting for upstream', {
        'Retry-After': '5',
      });
    const now = Date.now();
    // Capabilities are reissued every minute at least (a 304 never leaves handles about to lapse).
    const etag = `"${active.manifest.manifestRevision}.${Math.floor(now / 60_000)}"`;
    if (req.headers['if-none-match'] === etag)
      return void res.status(304).set({ ETag: etag, 'Cache-Control': 'no-store' }).end();
    const manifest = renderLocalManifest(active.manifest, {
      releaseOrigin: (releaseId) => agent.releaseOrigin(releaseId),
      capability: (placement, pageId) => localCapability(placement, pageId, active.manifest.manifestRevision, now),
    });
    const checked = parseRuntimeManifest(manifest, playerOrigin());
    if (!checked.ok) {
      agent.log('error', 'the local manifest does not validate', { issues: checked.issues.slice(0, 3) });
      return sendProblem(res, 500, 'internal_error', 'the kiosk could not render its manifest');
    }
    res.set({ ETag: etag, 'Cache-Control': 'private, no-store' }).json(manifest);
  });

  player.get('/runtime/v1/events', (req, res) => {
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    const after =
      typeof req.query.after === 'string' ? req.query.after : (req.headers['last-event-id'] as string | undefined);
    const stream = openSse(res);
    const backlog = agent.events.after(after);
    if (backlog === 'resync') {
      const head = agent.events.head();
      stream.send({
        id: head,
        event: 'stream.resync_required',
        data: { type: 'stream.resync_required', cursor: head },
      });
      stream.close();
      return;
    }
    for (const event of backlog) stream.send({ id: event.cursor, event: event.type, data: event.data });
    const off = agent.events.subscribe((event) => {
      stream.send({ id: event.cursor, event: event.type, data: event.data });
      // A deleted screen ends the session: the player opens another (and pairs again).
      if (event.type === 'screen.deleted') stream.close();
    });
    stream.onClose(off);
  });

  player.post('/runtime/v1/reports', express.json({ limit: '64kb' }), (req, res) => {
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    const parsed = RuntimeReport.safeParse(req.body);
    if (!parsed.success) return sendProblem(res, 400, 'invalid_request', 'not a runtime report');
    agent.report(parsed.data);
    res.status(202).end();
  });

  // Proof of play goes upstream as it is: the player's own IndexedDB queue holds it while the
  // kiosk is offline (a 503 here keeps it queued) and deletes it only after upstream's answer.
  player.post('/runtime/v1/playback', express.json({ limit: '512kb' }), async (req, res) => {
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    const parsed = PlaybackReportBatch.safeParse(req.body);
    if (!parsed.success) return sendProblem(res, 400, 'invalid_request', 'not a batch of playback reports');
    if (!agent.isOnline)
      return sendProblem(res, 503, 'dependency_unavailable', 'the kiosk is offline; keep the reports', {
        'Retry-After': '30',
      });
    try {
      const ack = await agent.upstream.withSession(() => agent.upstream.client.reportPlayback(parsed.data.reports));
      res.set('Cache-Control', 'no-store').json(ack);
    } catch (error) {
      if (error instanceof MarqueeProblem)
        return sendProblem(res, error.status, error.code, error.detail, {}, { errors: error.errors });
      sendProblem(res, 503, 'dependency_unavailable', 'upstream did not answer; keep the reports', {
        'Retry-After': '30',
      });
    }
  });

  // ---- Launches and protected content

  player.post('/runtime/v1/manifests/:rev/releases/:releaseId/launch', (req, res) => {
    const held = agent.book.byRevision(req.params.rev!);
    const releaseId = req.params.releaseId!;
    if (!held || !releasesOf(held.manifest).some((r) => r.releaseId === releaseId) || !agent.trees.has(releaseId))
      return sendProblem(res, 404, 'not_found', 'this manifest shows no such release on this kiosk');
    const ticket = crypto.randomBytes(32).toString('base64url');
    const expiresAt = Date.now() + LAUNCH_TICKET_TTL_MS;
    for (const [t, v] of tickets) if (v.expiresAt <= Date.now()) tickets.delete(t);
    tickets.set(ticket, { releaseId, label: localReleaseLabel(releaseId), expiresAt });
    res
      .status(201)
      .set({ 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' })
      .json({
        launch_url: `${agent.releaseOrigin(releaseId)}/?ticket=${ticket}`,
        expires_at: new Date(expiresAt).toISOString(),
      });
  });

  const serveBlob = async (
    req: Request,
    res: Response,
    file: { sha256: string; bytes: number; contentType: string },
  ) => {
    if (!(await agent.mirror.servable(file.sha256))) {
      void agent.refresh(); // fetched again when upstream allows
      return sendProblem(res, 503, 'dependency_unavailable', 'this content is not on the kiosk yet', {
        'Retry-After': '5',
      });
    }
    agent.mirror.touch(file.sha256);
    const etag = `"${file.sha256}"`;
    const common = {
      ETag: etag,
      // The mirror is the screen's one copy, within its budget: the renderer keeps none of its own (D-411).
      'Cache-Control': 'no-store',
      'Accept-Ranges': 'bytes',
      'X-Content-Type-Options': 'nosniff',
    };
    if (req.headers['if-none-match'] === etag) return void res.status(304).set(common).end();
    const ifRange = req.headers['if-range'];
    const range = byteRange(ifRange === undefined || ifRange === etag ? req.headers.range : undefined, file.bytes);
    if (range === 'refused')
      return sendProblem(res, 416, 'invalid_range', 'one satisfiable byte range only', {
        'Content-Range': `bytes */${file.bytes}`,
        'Accept-Ranges': 'bytes',
      });
    const { start, end } = range ?? { start: 0, end: file.bytes - 1 };
    res.status(range ? 206 : 200).set({
      ...common,
      'Content-Type': file.contentType,
      'Content-Length': String(end - start + 1),
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${file.bytes}` } : {}),
    });
    if (req.method === 'HEAD') return void res.end();
    const stream = fs.createReadStream(agent.mirror.filePath(file.sha256), { start, end });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  };

  player.get('/content/v1/manifests/:rev/media/:mediaId', async (req, res) => {
    const held = agent.book.byRevision(req.params.rev!);
    const item = held ? mediaOf(held.manifest, req.params.mediaId!) : undefined;
    if (!item) return sendProblem(res, 404, 'not_found', 'this manifest shows no such media');
    await serveBlob(req, res, item);
  });

  player.get('/content/v1/manifests/:rev/releases/:releaseId/package', async (req, res) => {
    const held = agent.book.byRevision(req.params.rev!);
    const found = held ? releasesOf(held.manifest).find((r) => r.releaseId === req.params.releaseId) : undefined;
    if (!held || !found) return sendProblem(res, 404, 'not_found', 'this manifest shows no such release');
    const placement = held.manifest.pages
      .flatMap((p) => p.placements)
      .find((p) => p.content.type === 'application' && p.content.releaseId === found.releaseId);
    const pkg = placement?.content.type === 'application' ? placement.content.package : undefined;
    await serveBlob(req, res, {
      sha256: found.packageSha256,
      bytes: pkg?.bytes ?? 0,
      contentType: pkg?.contentType ?? 'application/gzip',
    });
  });

  // ---- Runtime key/value: upstream when online, the agent's mirror and queue when not

  const capabilityOf = (req: Request, res: Response): LocalCapability | undefined => {
    const handle = req.get(PLACEMENT_CAPABILITY_HEADER);
    const value = handle?.startsWith('lc.')
      ? unseal<LocalCapability>(agent.localKey, 'capability', handle.slice(3))
      : undefined;
    if (!value || value.e <= Date.now() || value.a !== req.params.applicationId) {
      sendProblem(res, 403, 'forbidden', 'this needs a current placement capability of this application');
      return undefined;
    }
    return value;
  };

  const kvFailure = (res: Response, error: unknown) => {
    const current = (revision: number | undefined) => (revision !== undefined ? { current_revision: revision } : {});
    if (error instanceof LocalKvProblem)
      return sendProblem(res, error.status, error.code, error.message, {}, current(error.currentRevision));
    if (error instanceof MarqueeProblem)
      return sendProblem(res, error.status, error.code, error.detail, {}, current(error.current_revision));
    sendProblem(res, 500, 'internal_error', 'key/value storage failed');
  };

  const ifMatchOf = (req: Request): number | undefined => {
    const m = /^\s*"(\d+)"\s*$/.exec(req.headers['if-match'] ?? '');
    return m ? Number(m[1]) : undefined;
  };

  player.get('/runtime/v1/apps/:applicationId/kv', async (req, res) => {
    const cap = capabilityOf(req, res);
    if (!cap) return;
    try {
      if (agent.isOnline && agent.kv.pending() === 0) {
        const list = (await agent.upstreamKv('GET', cap.a, cap.p, undefined, {})) as KVList;
        agent.kv.rememberList(cap.a, list);
        return void res.json(list);
      }
    } catch (error) {
      if (!isUnreachable(error)) return kvFailure(res, error);
    }
    res.json(agent.kv.list(cap.a));
  });

  player.get('/runtime/v1/apps/:applicationId/kv/:key', async (req, res) => {
    const cap = capabilityOf(req, res);
    if (!cap) return;
    const key = req.params.key!;
    try {
      if (agent.isOnline && agent.kv.pending() === 0) {
        const entry = (await agent.upstreamKv('GET', cap.a, cap.p, key, {})) as KVEntry;
        agent.kv.remember(entry);
        return void res.set('ETag', `"${entry.revision}"`).json(entry);
      }
    } catch (error) {
      if (error instanceof MarqueeProblem && error.status === 404) agent.kv.rememberDeleted(cap.a, key, 0);
      if (!isUnreachable(error)) return kvFailure(res, error);
    }
    const entry = agent.kv.get(cap.a, key);
    if (!entry) return sendProblem(res, 404, 'not_found', `no key ${key}`);
    res.set('ETag', `"${entry.revision}"`).json(entry);
  });

  const write = (method: 'PUT' | 'DELETE') => async (req: Request, res: Response) => {
    const cap = capabilityOf(req, res);
    if (!cap) return;
    const key = String(req.params.key);
    const idempotencyKey = req.get('idempotency-key');
    if (!idempotencyKey || idempotencyKey.length < 8 || idempotencyKey.length > 200)
      return sendProblem(res, 400, 'invalid_request', 'this write needs an Idempotency-Key');
    const keyProblem = kvKeyProblem(key);
    if (keyProblem) return sendProblem(res, 400, 'invalid_request', keyProblem);
    const body = method === 'PUT' ? (req.body as KVWrite | undefined) : undefined;
    if (method === 'PUT') {
      const problem = kvValueProblem(body?.value_base64) ?? kvContentTypeProblem(body?.content_type);
      if (problem) return sendProblem(res, 400, 'invalid_request', problem);
    }
    const ifMatch = ifMatchOf(req);
    const request = { json: body, ifMatch, idempotencyKey };
    try {
      if (agent.isOnline && agent.kv.pending() === 0) {
        const answer = await agent.upstreamKv(method, cap.a, cap.p, key, request);
        if (method === 'PUT') {
          agent.kv.remember(answer as KVEntry);
          return void res.set('ETag', `"${(answer as KVEntry).revision}"`).json(answer);
        }
        agent.kv.rememberDeleted(cap.a, key, (ifMatch ?? 0) + 1);
        return void res.status(204).end();
      }
    } catch (error) {
      if (!isUnreachable(error)) return kvFailure(res, error);
    }
    try {
      const entry = agent.kv.writeOffline({
        applicationId: cap.a,
        placement: cap.p,
        method,
        key,
        body: body ?? null,
        ifMatch: ifMatch ?? null,
        idempotencyKey,
      });
      if (entry) return void res.set('ETag', `"${entry.revision}"`).json(entry);
      res.status(204).end();
    } catch (error) {
      kvFailure(res, error);
    }
  };
  player.put('/runtime/v1/apps/:applicationId/kv/:key', express.json({ limit: '2mb' }), write('PUT'));
  player.delete('/runtime/v1/apps/:applicationId/kv/:key', write('DELETE'));

  // ---- Lockstep: the agent's clock (the LAN lead's, or the server's) and the group's barriers

  player.get('/runtime/v1/time', (_req, res) => {
    const arrived = performance.now();
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    res.set('Cache-Control', 'no-store').json(agent.lockstep.stamps(arrived));
  });

  player.get('/runtime/v1/sync/barrier', (_req, res) => {
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    res.set('Cache-Control', 'no-store').json({ barrier: agent.lastBarrier });
  });

  player.post('/runtime/v1/sync/advance', express.json({ limit: '4kb' }), async (req, res) => {
    if (!agent.enrollment()) return sendProblem(res, 401, 'unauthorized', 'this kiosk is not paired yet');
    const parsed = SyncAdvance.safeParse(req.body);
    if (!parsed.success) return sendProblem(res, 400, 'invalid_request', 'not a lockstep advance');
    const { timeline, page_index } = parsed.data;
    const decided = agent.lockstep.advance(timeline, page_index);
    if (decided !== 'not-on-lan') {
      // On the LAN the lead decides; its barrier reaches this renderer as a runtime event too.
      const barrier = decided && { timeline, page_index, at: new Date(decided.at).toISOString() };
      return void res
        .status(202)
        .set('Cache-Control', 'no-store')
        .json({ barrier: barrier ?? null });
    }
    if (!agent.isOnline) return void res.status(202).set('Cache-Control', 'no-store').json({ barrier: null });
    try {
      const answer = await agent.upstream.withSession(() => agent.upstream.client.syncAdvance(parsed.data));
      res.status(202).set('Cache-Control', 'no-store').json(answer);
    } catch (error) {
      upstreamFailure(res, error);
    }
  });

  player.get('/kiosk/v1/status', (req, res) => {
    // Diagnostics: an agent started with --expose-gc collects first, so memory figures compare.
    const gc = (globalThis as { gc?: () => void }).gc;
    if (req.query.gc === '1' && gc) gc();
    res.set('Cache-Control', 'no-store').json(agent.status());
  });

  // ---- The player build (the same one the server serves), never inside a frame

  let shell: { builtAt: number; html: string } | undefined;
  player.get(/.*/, (req, res) => {
    if (/^\/(api|runtime|content|kiosk)(\/|$)/.test(req.path))
      return sendProblem(res, 404, 'not_found', `no route for ${req.method} ${req.path}`);
    const dest = req.get('sec-fetch-dest');
    if (dest && ['iframe', 'frame', 'embed', 'object'].includes(dest))
      return sendProblem(res, 403, 'forbidden', 'the player never runs inside a frame', FRAMING);
    let relative: string;
    try {
      relative = path.normalize(decodeURIComponent(req.path));
    } catch {
      return sendProblem(res, 400, 'invalid_request', 'malformed path');
    }
    const file = path.join(playerDir, relative);
    if (file.startsWith(playerDir + path.sep) && relative !== '/index.html' && isFile(file)) {
      res.set({
        'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream',
        'Cache-Control': relative.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        ...FRAMING,
      });
      return void fs
        .createReadStream(file)
        .on('error', () => res.destroy())
        .pipe(res);
    }
    if (path.extname(relative) !== '' && relative !== '/index.html')
      return sendProblem(res, 404, 'not_found', 'no such file');
    // Read again whenever the build on disk changed (an update rebuilt it in place): a kept shell
    // would name hashed assets that are gone, and a renderer that reloads would show nothing.
    const index = path.join(playerDir, 'index.html');
    try {
      const builtAt = fs.statSync(index).mtimeMs;
      if (shell?.builtAt !== builtAt)
        shell = { builtAt, html: fs.readFileSync(index, 'utf8').replace('</head>', `  ${KIOSK_META}\n  </head>`) };
    } catch {
      return void res.status(503).type('text/plain').send('The player is not built yet (npm run build:web).\n');
    }
    res.set({ 'Content-Type': MIME['.html'], 'Cache-Control': 'no-cache', ...FRAMING }).send(shell.html);
  });

  // ---- Release hosts: one local origin per release, launch ticket → grant cookie → files

  release.get(/.*/, (req, res) => {
    const label = res.locals.label as string;
    const releaseId = releaseOfLabel(label);
    const noReferrer = { 'Referrer-Policy': 'no-referrer' };
    if (!releaseId || !agent.trees.has(releaseId))
      return sendProblem(res, 403, 'forbidden', 'this release host serves no release on this kiosk', noReferrer);
    const ticket = req.query.ticket;
    if (typeof ticket === 'string') {
      const held = tickets.get(ticket);
      tickets.delete(ticket);
      if (!held || held.expiresAt <= Date.now() || held.label !== label)
        return sendProblem(
          res,
          403,
          'forbidden',
          'the launch ticket is unknown, expired, used or for another host',
          noReferrer,
        );
      const grant: ReleaseGrant = { l: label, r: releaseId, e: Date.now() + RELEASE_GRANT_TTL_MS };
      const rest = new URLSearchParams(req.query as Record<string, string>);
      rest.delete('ticket');
      const query = rest.toString();
      return void res
        .status(302)
        .set({
          Location: `/${req.path.replace(/^[/\\]+/, '')}${query ? `?${query}` : ''}`,
          'Set-Cookie': `${RELEASE_GRANT_COOKIE}=${seal(agent.localKey, 'release-grant', grant)}; Path=/; Max-Age=${RELEASE_GRANT_TTL_MS / 1000}; Secure; HttpOnly; SameSite=None; Partitioned`,
          'Cache-Control': 'no-store',
          ...noReferrer,
        })
        .end();
    }
    const grant = unseal<ReleaseGrant>(agent.localKey, 'release-grant', cookie(req, RELEASE_GRANT_COOKIE));
    if (!grant || grant.e <= Date.now() || grant.l !== label || grant.r !== releaseId)
      return sendProblem(res, 403, 'forbidden', 'this needs a release grant; launch the release again', noReferrer);
    if (req.path === '/.marquee/player-origin') {
      return void res
        .set({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...noReferrer })
        .send(JSON.stringify({ player_origin: playerOrigin() }));
    }
    const file = agent.trees.file(releaseId, req.path);
    const bytes = file === undefined ? undefined : fileBytes(file);
    if (file === undefined || bytes === undefined)
      return sendProblem(res, 404, 'not_found', 'no such file in this release', noReferrer);
    agent.mirror.touch(`tree:${releaseId}`);
    // One byte range, as the server's release hosts answer (D-492): an application's video seeks.
    // Files carry no entity tag here, so an If-Range never matches: the whole file is sent.
    const range = byteRange(req.headers['if-range'] === undefined ? req.headers.range : undefined, bytes);
    if (range === 'refused')
      return sendProblem(res, 416, 'invalid_range', 'one satisfiable byte range only', {
        'Content-Range': `bytes */${bytes}`,
        'Accept-Ranges': 'bytes',
        ...noReferrer,
      });
    const { start, end } = range ?? { start: 0, end: bytes - 1 };
    res.status(range ? 206 : 200).set({
      'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': String(end - start + 1),
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${bytes}` } : {}),
      'Accept-Ranges': 'bytes',
      'Cache-Control': IMMUTABLE,
      'X-Content-Type-Options': 'nosniff',
      'Cross-Origin-Resource-Policy': 'same-origin',
      ...noReferrer,
    });
    if (req.method === 'HEAD' || bytes === 0) return void res.end();
    fs.createReadStream(file, { start, end })
      .on('error', () => res.destroy())
      .pipe(res);
  });
  release.use((_req, res) => sendProblem(res, 403, 'forbidden', 'only GET and HEAD are allowed on a release host'));

  app.use((error: unknown, _req: Request, res: Response, _next: express.NextFunction) => {
    // A body the JSON parser could not read is the caller's (the server's codes); its message,
    // which quotes the body, is not logged.
    const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
    const refused = BODY_REFUSALS.get(type);
    if (refused)
      return sendProblem(
        res,
        400,
        'invalid_request',
        refused.detail,
        {},
        { errors: [{ field: 'body', ...refused.field }] },
      );
    if (typeof status === 'number' && status >= 400 && status < 500)
      return sendProblem(res, 400, 'invalid_request', 'the request could not be read');
    agent.log('error', 'request failed', { error: String(error) });
    sendProblem(res, 500, 'internal_error', 'the kiosk agent failed');
  });

  app.attachChannel = (server) => {
    server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://agent.invalid');
      if (
        url.pathname !== CHANNEL_PATH ||
        (req.headers.host ?? '').toLowerCase() !== playerHost() ||
        (req.headers.origin !== undefined && req.headers.origin !== playerOrigin())
      ) {
        socket.destroy();
        return;
      }
      channel.accept(req, socket, head);
    });
    server.on('close', () => channel.close());
  };
  return app;

  function upstreamFailure(res: Response, error: unknown) {
    if (error instanceof MarqueeProblem) return sendProblem(res, error.status, error.code, error.detail);
    agent.log('warn', 'upstream unreachable', { error: String(error) });
    sendProblem(res, 503, 'dependency_unavailable', 'the kiosk cannot reach its server yet', { 'Retry-After': '5' });
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
