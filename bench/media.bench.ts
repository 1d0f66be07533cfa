// Ranged GET throughput of one 50 MB media object against nginx serving the same bytes from a file,
// all measured in this run on 127.0.0.1, in interleaved rounds: Marquee's content export
// (GET /api/v1/media/{id}/content with a project bearer, credit meter and all), the player's route
// (GET /content/v1/manifests/{rev}/media/{id} with a paired runtime session: grant, Fetch Metadata,
// request and byte budgets), and the export through nginx with MARQUEE_ACCEL_REDIRECT (nginx sends
// the file), nginx reaching Marquee over loopback TCP and over MARQUEE_PROXY_SOCKET; and, as the
// floor under Marquee's figures, Node's bare HTTP server sending the same ranges with the same
// headers and no checks (bare-node-range.ts), and as the offload's floor that server answering
// each range with X-Accel-Redirect behind the same nginx (D-391). The server is
// bench/marquee-server.ts: every budget is consulted, with limits raised. The load comes from
// range-client.ts (D-390).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { BufferTarget, EncodedPacket, EncodedVideoPacketSource, Mp4OutputFormat, Output } from 'mediabunny';
import { median, startChild, startMarquee, table } from './harness';
import { type LoadTally, type RangeJob, rangeClient } from './range-client';
import { pairedPlayer } from './manifest.bench';
import { freePort } from '../server/testing/harness';
import {
  ACCEL_PREFIX,
  ACCEL_PROXY_ADDRESS,
  loopbackNginxConfig,
  operationsAccelLocation,
  operationsSocketUpstream,
  startNginx as startNginxAt,
} from '../server/testing/nginx';

const OBJECT_BYTES = 50 * 1024 * 1024;

let MARQUEE_PORT = 0;
let NGINX_PORT = 0;
/** nginx's second server: the same offload, reaching Marquee over MARQUEE_PROXY_SOCKET. */
let NGINX_SOCKET_PORT = 0;

/** A real MP4 (synthetic packets) of about `bytes`, so it passes Marquee's verification. */
async function mp4Of(bytes: number): Promise<Buffer> {
  const packetBytes = 256 * 1024;
  const output = new Output({ format: new Mp4OutputFormat(), target: new BufferTarget() });
  const source = new EncodedVideoPacketSource('avc');
  output.addVideoTrack(source);
  await output.start();
  const packets = Math.ceil(bytes / packetBytes);
  for (let i = 0; i < packets; i++) {
    const data = crypto.randomBytes(packetBytes);
    data.writeUInt32BE(packetBytes - 4, 0);
    await source.add(
      new EncodedPacket(data, i === 0 ? 'key' : 'delta', i / 25, 0.04),
      i === 0
        ? {
            decoderConfig: {
              codec: 'avc1.42001f',
              codedWidth: 1920,
              codedHeight: 1080,
              description: new Uint8Array([1, 0x42, 0, 0x1f, 0xff, 0xe0, 0]),
            },
          }
        : undefined,
    );
  }
  await output.finalize();
  return Buffer.from((output.target as BufferTarget).buffer!);
}

async function api(
  origin: string,
  method: string,
  pathname: string,
  init: { token?: string; json?: unknown; body?: Buffer; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { host: `localhost:${MARQUEE_PORT}`, ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = crypto.randomBytes(12).toString('base64url');
  const res = await fetch(`${origin}${pathname}`, {
    method,
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body && new Uint8Array(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Declare → PUT → commit → poll, as a client would. */
async function uploadMedia(origin: string, token: string, bytes: Buffer): Promise<string> {
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  const session = await api(origin, 'POST', '/api/v1/media/uploads', {
    token,
    json: { filename: 'bench.mp4', content_type: 'video/mp4', bytes: bytes.length, sha256 },
  });
  const url = new URL(session.upload_url);
  const put = await fetch(`${origin}${url.pathname}${url.search}`, {
    method: 'PUT',
    headers: { host: url.host, ...session.headers },
    body: new Uint8Array(bytes),
  });
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  await api(origin, 'POST', `/api/v1/media/uploads/${session.id}/commit`, {
    token,
    json: { content_type: 'video/mp4', bytes: bytes.length, sha256 },
  });
  for (let i = 0; i < 600; i++) {
    const op = await api(origin, 'GET', `/api/v1/operations/${session.operation.id}`, { token });
    if (op.state === 'succeeded') return op.result.media_id as string;
    if (op.state === 'failed') throw new Error(`verification failed: ${JSON.stringify(op.error)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('verification did not finish');
}

// nginx connects to Marquee from ACCEL_PROXY_ADDRESS, Marquee's only trusted proxy (the bench's own
// requests come from 127.0.0.1); ACCEL_PREFIX is the internal location of docs/operations.md.
/** The floor's offload location: the operations block over nginx's own copy of the object. */
const FLOOR_ACCEL_PREFIX = '/_floor_blobs/';

async function startNginx(
  root: string,
  file: Buffer,
  marqueeBlobs: string,
  marqueeSocket: string,
  barePort: number,
): Promise<{ stop(): Promise<void> }> {
  const www = path.join(root, 'www');
  fs.mkdirSync(www, { recursive: true });
  fs.writeFileSync(path.join(www, 'object.mp4'), file);
  // nginx started as root runs its worker as nobody, which must read the files.
  for (const p of [root, www]) fs.chmodSync(p, 0o755);
  fs.chmodSync(path.join(www, 'object.mp4'), 0o644);
  // Each upstream proxied the same way; the socket's is the upstream block of docs/operations.md.
  const proxyTo = (upstream: string, extra = '') => `proxy_pass http://${upstream};${extra}
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_http_version 1.1;
      proxy_set_header Connection "";`;
  const config = loopbackNginxConfig(
    root,
    `  types { video/mp4 mp4; }
  upstream marquee_tcp {
    server 127.0.0.1:${MARQUEE_PORT};
    keepalive 32;
    keepalive_timeout 4s;
  }
${operationsSocketUpstream(marqueeSocket)}  upstream bare {
    server 127.0.0.1:${barePort};
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${NGINX_PORT};
    location / { root ${www}; }
    location /offload/ {
      ${proxyTo('bare')}
    }
${operationsAccelLocation(www).replace(ACCEL_PREFIX, FLOOR_ACCEL_PREFIX)}
    location /api/ {
      ${proxyTo('marquee_tcp', `\n      proxy_bind ${ACCEL_PROXY_ADDRESS};`)}
    }
${operationsAccelLocation(marqueeBlobs)}
  }
  server {
    listen 127.0.0.1:${NGINX_SOCKET_PORT};
    location / {
      ${proxyTo('marquee')}
    }
${operationsAccelLocation(marqueeBlobs)}
  }`,
  );
  return startNginxAt(root, config, NGINX_PORT);
}

interface RangedLoad {
  requestsPerSecond: number;
  megabytesPerSecond: number;
  p99Ms: number;
  non2xx: number;
  /** CPU time (user + system) the Marquee process spent per request, in µs; NaN when not measured. */
  serverMicrosPerRequest: number;
  /** CPU time nginx's worker spent per request, in µs (whatever the target: it may be idle). */
  nginxMicrosPerRequest: number;
}

/** nginx's worker process (the bench runs one): the child of the master named in its pid file. */
function nginxWorkerPid(prefix: string): number | undefined {
  try {
    const master = fs.readFileSync(path.join(prefix, 'nginx.pid'), 'utf8').trim();
    const children = fs.readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(' ');
    return children[0] ? Number(children[0]) : undefined;
  } catch {
    return undefined;
  }
}

let NGINX_WORKER: number | undefined;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    // The fields after the command name (which may hold spaces) start at the state, field 3.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks of 1/100 s
  } catch {
    return Number.NaN;
  }
}

/**
 * Closed-loop load: `connections` keep-alive clients, each asking for `rangeBytes` at a random
 * offset, draining the body and asking again. The clients are rangeClient's (D-390): Node's own
 * HTTP client, kept as BENCH_CLIENT=http, costs a Buffer and a stream event per chunk and held
 * nginx to about 8,000 64 KiB ranges a second on this machine, where nginx can send 20,000; the
 * ratios it gave were the client's, not the servers'. (autocannon's JS parser was slower still.)
 */
async function rangedLoad(
  url: string,
  size: number,
  rangeBytes: number,
  headers: Record<string, string>,
  seconds = 5,
  connections = 8,
  serverPid?: number,
): Promise<RangedLoad> {
  const tally: LoadTally = { latencies: [], bytes: 0, non2xx: 0 };
  const job: RangeJob = { target: new URL(url), headers, size, rangeBytes, tally, deadline: 0 };
  const started = performance.now();
  job.deadline = started + seconds * 1000;
  const cpuBefore = cpuSeconds(serverPid);
  const nginxBefore = cpuSeconds(NGINX_WORKER);
  if (process.env.BENCH_CLIENT === 'http') await httpRangeClients(job, connections);
  else await Promise.all(Array.from({ length: connections }, () => rangeClient(job)));
  const elapsed = (performance.now() - started) / 1000;
  const serverCpu = cpuSeconds(serverPid) - cpuBefore;
  const nginxCpu = cpuSeconds(NGINX_WORKER) - nginxBefore;
  const { latencies } = tally;
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / elapsed,
    megabytesPerSecond: tally.bytes / elapsed / 1e6,
    p99Ms: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    non2xx: tally.non2xx,
    serverMicrosPerRequest: (serverCpu / latencies.length) * 1e6,
    nginxMicrosPerRequest: (nginxCpu / latencies.length) * 1e6,
  };
}

/** BENCH_CLIENT=http: the same job with Node's own HTTP client (what the bench used before D-390). */
async function httpRangeClients(
  { target, headers, size, rangeBytes, deadline, tally }: RangeJob,
  connections: number,
): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const start = Math.floor(Math.random() * (size - rangeBytes));
      const began = performance.now();
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          agent,
          headers: { ...headers, range: `bytes=${start}-${start + rangeBytes - 1}` },
        },
        (res) => {
          const counted = res.statusCode === 206 && Number(res.headers['content-length']) === rangeBytes;
          if (!counted) tally.non2xx++;
          let received = 0;
          res.on('data', (chunk: Buffer) => (received += chunk.length));
          res.on('end', () => {
            if (counted && received === rangeBytes) {
              tally.bytes += received;
              tally.latencies.push(performance.now() - began);
            }
            resolve();
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < deadline) await once();
      }),
    );
  } finally {
    agent.destroy();
  }
}

/** The player's URL of the media in its manifest, with its paired cookies. */
async function playerMediaUrl(
  origin: string,
  token: string,
  mediaId: string,
): Promise<{ path: string; cookie: string }> {
  const cookie = await pairedPlayer(origin, {
    token,
    placement: {
      id: 'clip',
      content: { type: 'video', selector: { by: 'id', media_id: mediaId } },
      rect: { x: 0, y: 0, width: 1920, height: 1080 },
      layer: 0,
      content_fit: 'contain',
    },
  });
  const manifest = await fetch(`${origin}/runtime/v1/manifest`, { headers: { cookie } });
  const text = await manifest.text();
  const found = /\/content\/v1\/manifests\/[^"/]+\/media\/med_[A-Za-z0-9_-]+/.exec(text);
  if (!found) throw new Error(`the manifest names no media URL: ${manifest.status} ${text.slice(0, 300)}`);
  return { path: found[0], cookie };
}

export async function mediaRangedExport(): Promise<void> {
  MARQUEE_PORT = await freePort();
  NGINX_PORT = await freePort();
  NGINX_SOCKET_PORT = await freePort();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-bench-nginx-'));
  // nginx's worker (nobody, when started as root) must reach the socket in this directory.
  fs.chmodSync(root, 0o755);
  const marqueeSocket = path.join(root, 'marquee.sock');
  const marquee = await startMarquee(
    MARQUEE_PORT,
    {
      MARQUEE_ACCEL_REDIRECT: ACCEL_PREFIX,
      MARQUEE_TRUSTED_PROXIES: ACCEL_PROXY_ADDRESS,
      MARQUEE_PROXY_SOCKET: marqueeSocket,
      MARQUEE_PROXY_SOCKET_MODE: '666',
    },
    { script: 'bench/marquee-server.ts' },
  );
  let nginx: { stop(): Promise<void> } | undefined;
  let bare: { stop(): Promise<void> } | undefined;
  try {
    const object = await mp4Of(OBJECT_BYTES);
    const enrolled = await api(marquee.origin, 'POST', '/api/v1/enrollments', {
      json: { client_id: `cli_${'m'.repeat(43)}`, email: 'bench@example.com' },
    });
    const token = enrolled.token as string;
    // Enough credits that the meter never refuses, whatever the date (the floor is 0 from 2027).
    const db = new SQLite(path.join(marquee.dataDir, 'marquee.db'));
    db.pragma('busy_timeout = 5000');
    db.prepare('UPDATE tenants SET credit_millis = ? WHERE id = ?').run(1e12, enrolled.project.id);
    db.close();
    const mediaId = await uploadMedia(marquee.origin, token, object);
    const player = await playerMediaUrl(marquee.origin, token, mediaId);
    // Started as root, nginx reads files as its worker user (nobody): let it through the temp dirs.
    const blobs = path.join(marquee.dataDir, 'blobs');
    for (const dir of [marquee.dataDir, blobs, path.join(blobs, 'media')]) fs.chmodSync(dir, 0o755);
    const barePort = await freePort();
    nginx = await startNginx(root, object, blobs, marqueeSocket, barePort);
    NGINX_WORKER = nginxWorkerPid(root);
    const bareNode = await startChild(
      'bench/bare-node-range.ts',
      { PORT: String(barePort), FILE: path.join(root, 'www', 'object.mp4'), OFFLOAD_PREFIX: FLOOR_ACCEL_PREFIX },
      'listening',
    );
    bare = bareNode;

    const exportPath = `/api/v1/media/${mediaId}/content`;
    const bearer = { host: `localhost:${MARQUEE_PORT}`, authorization: `Bearer ${token}` };
    const pid = marquee.process.pid;
    const targets: { server: string; url: string; headers: Record<string, string>; pid?: number }[] = [
      { server: 'nginx', url: `http://127.0.0.1:${NGINX_PORT}/object.mp4`, headers: {} },
      {
        server: 'bare Node http (floor)',
        url: `http://127.0.0.1:${barePort}/object.mp4`,
        headers: {},
        pid: bareNode.process.pid,
      },
      {
        server: 'bare Node offload via nginx (offload floor)',
        url: `http://127.0.0.1:${NGINX_PORT}/offload/object.mp4`,
        headers: {},
        pid: bareNode.process.pid,
      },
      { server: 'Marquee export', url: `${marquee.origin}${exportPath}`, headers: bearer, pid },
      {
        server: 'Marquee /content/v1 (player)',
        url: `${marquee.origin}${player.path}`,
        headers: { host: `localhost:${MARQUEE_PORT}`, cookie: player.cookie },
        pid,
      },
      {
        server: 'export via nginx (X-Accel-Redirect)',
        url: `http://127.0.0.1:${NGINX_PORT}${exportPath}`,
        headers: bearer,
        pid,
      },
      {
        server: 'export via nginx over a Unix socket (X-Accel-Redirect)',
        url: `http://127.0.0.1:${NGINX_SOCKET_PORT}${exportPath}`,
        headers: bearer,
        pid,
      },
      {
        server: '/content/v1 via nginx over a Unix socket (X-Accel-Redirect)',
        url: `http://127.0.0.1:${NGINX_SOCKET_PORT}${player.path}`,
        headers: { host: `localhost:${MARQUEE_PORT}`, cookie: player.cookie },
        pid,
      },
    ];
    // BENCH_TARGETS=export,content measures nginx and the targets whose names contain one of the words.
    const wanted = process.env.BENCH_TARGETS?.split(',');
    if (wanted)
      targets.splice(1, targets.length, ...targets.slice(1).filter((t) => wanted.some((w) => t.server.includes(w))));
    // A window holds only a few dozen 8 MiB ranges, and its MB/s varies by ±30% on a shared machine:
    // larger ranges get more rounds.
    const roundsFor = (rangeBytes: number) => Number(process.env.BENCH_ROUNDS ?? (rangeBytes > 1024 * 1024 ? 5 : 3));
    const seconds = Number(process.env.BENCH_SECONDS ?? 1.5);
    const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
    const rows: Record<string, string | number>[] = [];
    // BENCH_RANGES=64,1024 (KiB) measures some sizes only.
    const sizes = (process.env.BENCH_RANGES ?? '64,1024,8192').split(',').map((k) => Number(k) * 1024);
    const [nginxTarget, ...measured] = targets as [(typeof targets)[0], ...typeof targets];
    for (const rangeBytes of sizes) {
      for (const t of [nginxTarget, ...measured]) await rangedLoad(t.url, object.length, rangeBytes, t.headers, 1); // warm-up
      const load = (t: (typeof targets)[0]) =>
        rangedLoad(t.url, object.length, rangeBytes, t.headers, seconds, connections, t.pid);
      const nginxRuns: RangedLoad[] = [];
      const results = measured.map(() => [] as RangedLoad[]);
      const ratios = measured.map(() => [] as number[]);
      // nginx runs before and after every target, and the target's ratio is to the mean of the two:
      // the machine's load drifts within seconds, and a drift between the two cancels out.
      for (let round = 0; round < roundsFor(rangeBytes); round++) {
        let before = await load(nginxTarget);
        nginxRuns.push(before);
        for (const [i, t] of measured.entries()) {
          const result = await load(t);
          const after = await load(nginxTarget);
          nginxRuns.push(after);
          results[i]!.push(result);
          ratios[i]!.push(result.megabytesPerSecond / ((before.megabytesPerSecond + after.megabytesPerSecond) / 2));
          before = after;
        }
      }
      const label = `${rangeBytes / 1024} KiB`;
      const row = (name: string, runs: RangedLoad[], ratio: number[], pid: number | undefined, nginxUsed: boolean) => ({
        server: `${name} (${label})`,
        'req/s': Math.round(median(runs.map((r) => r.requestsPerSecond))),
        'MB/s': Math.round(median(runs.map((r) => r.megabytesPerSecond))),
        p99_ms: median(runs.map((r) => r.p99Ms)),
        ratio: `${median(ratio).toFixed(2)}x`,
        range: `${Math.min(...ratio).toFixed(2)}-${Math.max(...ratio).toFixed(2)}`,
        non206: runs.reduce((n, r) => n + r.non2xx, 0),
        server_cpu_us: pid ? Math.round(median(runs.map((r) => r.serverMicrosPerRequest))) : '',
        nginx_cpu_us: nginxUsed ? Math.round(median(runs.map((r) => r.nginxMicrosPerRequest))) : '',
      });
      rows.push(row(nginxTarget.server, nginxRuns, [1], undefined, true));
      for (const [i, t] of measured.entries())
        rows.push(
          row(
            t.server,
            results[i]!,
            ratios[i]!,
            t.pid,
            t.url.includes(`:${NGINX_PORT}/`) || t.url.includes(`:${NGINX_SOCKET_PORT}/`),
          ),
        );
    }
    console.log(
      `object: ${(object.length / 1e6).toFixed(1)} MB; ${connections} connections; ${roundsFor(0)} rounds (${roundsFor(8 << 20)} above 1 MiB) of ${seconds} s per target, nginx measured before and after each; ratio = median over the rounds of MB/s ÷ the mean of nginx's MB/s just before and after (range: lowest-highest); non206 = answers that were not a 206 of the range asked (neither their bytes nor their time count); server_cpu_us = CPU time of the server process per request (Marquee's, or the bare Node floor's) and nginx_cpu_us that of nginx's worker, for the targets nginx serves (medians of the rounds; less sensitive to the machine's load than MB/s); load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    table(rows);
  } finally {
    await nginx?.stop().catch(() => {});
    await bare?.stop().catch(() => {});
    await marquee.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
