// `npm run test:replicas`: two `server/main.ts` processes on one throwaway PostgreSQL cluster and one
// bucket (a local S3-protocol server; `-- --blobs directory` shares one blob directory instead),
// behind a loopback nginx (round robin), as docs/operations.md deploys them. Checks what replicas
// must hold: a stream on A sees a commit made on B; an idempotent retry landing on the other
// replica replays; a rate budget is not doubled; a fleet action pinned on A and cut off there is
// finished by its retry on B; killing a replica mid-upload loses nothing committed.
// Needs PostgreSQL's server binaries and /usr/sbin/nginx; everything listens on 127.0.0.1 only.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { packApplication } from '../../sdk/pack/pack';
import { freePort } from './harness';
import { loopbackNginxConfig, startNginx as startLoopbackNginx } from './nginx';
import { S3RVER_CREDENTIALS, startS3Server } from './s3-server';

const repo = path.resolve(import.meta.dirname, '../..');
const CLUSTER = path.join(repo, 'server/testing/postgres-cluster.sh');
/** Enrollments one client address may make an hour, installation-wide (both replicas together). */
const ENROLL_LIMIT = 8;
const FLEET_SCREENS = 200;

interface Replica {
  name: 'A' | 'B';
  port: number;
  dataDir: string;
  child?: ChildProcess;
  log: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
let host = ''; // localhost:<nginx port>, the origin every plane is served under
let nginxPort = 0;
/** Where the replicas keep blobs: one bucket (MARQUEE_BLOB_URL), or one directory both mount. */
const blobMode: 'bucket' | 'directory' = process.argv.includes('directory') ? 'directory' : 'bucket';
let blobEnvironment: Record<string, string> = {};

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-replicas-'));
  cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));
  const databaseUrl = await startPostgres();
  const [portA, portB] = [await freePort(), await freePort()];
  nginxPort = await freePort();
  host = `localhost:${nginxPort}`;
  const blobs = path.join(work, 'blobs');
  fs.mkdirSync(blobs);
  if (blobMode === 'bucket') {
    const s3 = await startS3Server();
    cleanups.push(() => s3.stop());
    blobEnvironment = {
      MARQUEE_BLOB_URL: s3.blobUrl('marquee'),
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    };
  }
  const replicas: Replica[] = (['A', 'B'] as const).map((name, i) => {
    const dataDir = path.join(work, `data-${name}`);
    fs.mkdirSync(dataDir);
    // Each replica its own data dir (worker id, mail outbox); the blobs are one shared directory.
    if (blobMode === 'directory') fs.symlinkSync(blobs, path.join(dataDir, 'blobs'));
    return { name, port: [portA, portB][i]!, dataDir, log: path.join(work, `replica-${name}.log`) };
  });
  console.log(`replica test: blobs in one ${blobMode}`);
  const [a, b] = replicas as [Replica, Replica];
  // One replica migrates first; then the other starts on the migrated schema.
  await startReplica(a, databaseUrl);
  await startReplica(b, databaseUrl);
  await startNginx(work, [a, b]);

  await check('a stream on A sees a commit made on B', () => streamSeesOtherReplica(a, b));
  await check('an idempotent retry landing on the other replica replays', () => retryReplays());
  await check('rate budgets are not doubled by two replicas', () => budgetNotDoubled());
  await check('a fleet action pinned on A, cut off there, is finished by its retry on B', () =>
    fleetRetryFinishes(a, b),
  );
  await check('killing a replica mid-upload loses nothing committed', () => killMidUpload(a, b));
  console.log('replica test: all checks passed');
}

async function check(name: string, run: () => Promise<void>): Promise<void> {
  const started = Date.now();
  await run();
  console.log(`ok - ${name} (${Date.now() - started} ms)`);
}

// ---- the checks -------------------------------------------------------------------------------

async function streamSeesOtherReplica(a: Replica, b: Replica): Promise<void> {
  const { token } = await enroll(nginxPort);
  const stream = openStream(a.port, '/api/v1/events/stream', token);
  try {
    await stream.waitFor((frames) => frames.some((f) => f.type === 'account.enrolled'));
    const project = await request(b.port, 'GET', '/api/v1/project', { token });
    const renamed = await request(b.port, 'PATCH', '/api/v1/project', {
      token,
      headers: { 'if-match': String(project.headers.etag) },
      json: { name: 'Renamed on B' },
    });
    assert.equal(renamed.status, 200, renamed.text);
    await stream.waitFor((frames) => frames.some((f) => f.type === 'project.updated'));
  } finally {
    stream.close();
  }
}

let newEnrollments = 0;

async function retryReplays(): Promise<void> {
  // nginx's round robin sends consecutive requests to alternate replicas.
  const key = randomKey();
  const body = { client_id: clientId(), email: `replay-${randomKey()}@example.com` };
  const first = await request(nginxPort, 'POST', '/api/v1/enrollments', { json: body, key });
  const second = await request(nginxPort, 'POST', '/api/v1/enrollments', { json: body, key });
  newEnrollments += 1;
  assert.equal(first.status, 201, first.text);
  assert.equal(second.status, 201, second.text);
  assert.notEqual(first.headers['x-upstream'], second.headers['x-upstream'], 'both landed on one replica');
  assert.equal(second.json().project.id, first.json().project.id);
  assert.equal(second.json().token, first.json().token);
}

async function budgetNotDoubled(): Promise<void> {
  const answers = [];
  for (let i = 0; i < 2 * ENROLL_LIMIT; i++) {
    answers.push(
      await request(nginxPort, 'POST', '/api/v1/enrollments', {
        json: { client_id: clientId(), email: `budget-${i}-${randomKey()}@example.com` },
        key: randomKey(),
      }),
    );
  }
  const accepted = answers.filter((r) => r.status === 201).length;
  const upstreams = new Set(answers.map((r) => r.headers['x-upstream']));
  assert.equal(upstreams.size, 2, 'the requests did not reach both replicas');
  assert.ok(
    answers.every((r) => r.status === 201 || r.status === 429),
    'an answer other than 201 or 429',
  );
  // Two replicas each counting alone would accept ENROLL_LIMIT each.
  assert.ok(accepted + newEnrollments <= ENROLL_LIMIT, `accepted ${accepted} + ${newEnrollments} > ${ENROLL_LIMIT}`);
  assert.ok(accepted >= ENROLL_LIMIT - newEnrollments - 1, `only ${accepted} accepted`);
}

async function fleetRetryFinishes(a: Replica, b: Replica): Promise<void> {
  const { token } = await enrollDirect(b.port);
  const db = new pg.Client({ connectionString: databaseUrlOf });
  await db.connect();
  try {
    // One screen paired through the API; the rest are copies of its row (pairing claims are
    // rate-limited per minute, and a fan-out must span several transactions to be cut in the middle).
    const first = await pendingScreen(b.port, token);
    const copies = await db.query(
      `INSERT INTO screens
       SELECT (jsonb_populate_record(NULL::screens, to_jsonb(s) || jsonb_build_object('id', s.id || '_' || g, 'public_id', s.public_id || '_' || g))).*
         FROM screens s, generate_series(2, $2::int) g
        WHERE s.id = $1
       RETURNING id`,
      [first, FLEET_SCREENS],
    );
    const screenIds = [first, ...copies.rows.map((r: { id: string }) => r.id)];
    const key = randomKey();
    const action = { selector: { ids: screenIds }, action: { type: 'add_tags', tags: ['replicas'] } };
    const recorded = async () =>
      Number(
        (await db.query('SELECT count(*) AS n FROM fleet_action_results WHERE idempotency_key = $1', [key])).rows[0].n,
      );
    const onA = request(a.port, 'POST', '/api/v1/screens/actions', { token, json: action, key }).catch(() => null);
    // Cut A off as soon as part of the fan-out is recorded: a crash in the middle.
    let cutAt = 0;
    let answeredOnA: Answer | null | undefined;
    void onA.then((answer) => {
      answeredOnA = answer;
    });
    for (let tries = 0; tries < 4000 && cutAt === 0 && answeredOnA === undefined; tries++) {
      const n = await recorded();
      if (n > 0) cutAt = n;
      else await sleep(2);
    }
    a.child!.kill('SIGKILL');
    await onA;
    assert.ok(
      cutAt > 0 && cutAt < FLEET_SCREENS,
      `A was cut after ${cutAt} of ${FLEET_SCREENS} screens (A answered ${answeredOnA?.status} ${answeredOnA?.text.slice(0, 300)})`,
    );
    const retry = await request(b.port, 'POST', '/api/v1/screens/actions', { token, json: action, key });
    assert.equal(retry.status, 200, retry.text);
    const result = retry.json();
    assert.equal(result.results.length, FLEET_SCREENS);
    assert.deepEqual(
      result.results.map((r: { screen_id: string }) => r.screen_id),
      screenIds,
    );
    assert.equal(await recorded(), FLEET_SCREENS);
    const tagged = await db.query('SELECT count(*) AS n FROM screen_tags WHERE tag = $1 AND screen_id = ANY($2)', [
      'replicas',
      screenIds,
    ]);
    assert.equal(Number(tagged.rows[0].n), FLEET_SCREENS, 'every screen tagged once');
    console.log(`   (A was killed after ${cutAt} of ${FLEET_SCREENS} screens were recorded)`);
  } finally {
    await db.end();
  }
  await startReplica(a, databaseUrlOf);
}

async function killMidUpload(a: Replica, b: Replica): Promise<void> {
  const { token } = await enrollDirect(b.port);
  // Committed before the crash, through B: a media item (its bytes in the shared blobs) and an
  // application release.
  const small = await pngOf(64, 48);
  const kept = await uploadAll(b.port, token, small);
  const app = await packedApplication(64 * 1024);
  const published = await request(b.port, 'POST', '/api/v1/applications', {
    token,
    key: randomKey(),
    headers: app.headers,
    body: app.archive,
  });
  assert.equal(published.status, 202, published.text);
  const keptApp = (await waitForOperation(token, published.json().operation_id)).application_id as string;

  // An application archive always streams through a replica (a media PUT does only when the blobs
  // are a directory the service receives into): A dies half-way through its body.
  const large = await packedApplication(8 * 1024 * 1024);
  assert.equal(
    await cutOff(
      a,
      'POST',
      '/api/v1/applications',
      { ...large.headers, authorization: `Bearer ${token}`, 'idempotency-key': randomKey() },
      large.archive,
    ),
    -1,
    'the cut application upload was answered',
  );
  await startReplica(a, databaseUrlOf);
  if (blobMode === 'directory') {
    const bigPng = await pngOf(2400, 2400);
    const declared = await declare(b.port, token, bigPng);
    const target = new URL(declared.upload_url);
    assert.equal(
      await cutOff(a, declared.method, target.pathname + target.search, declared.headers, bigPng),
      -1,
      'the cut media PUT was answered',
    );
    // The cut PUT is simply done again on the surviving replica.
    const redo = await request(b.port, declared.method, target.pathname + target.search, {
      headers: declared.headers,
      body: bigPng,
    });
    assert.equal(redo.status, 200, redo.text);
    await commitAndWait(b.port, token, declared, bigPng);
    await startReplica(a, databaseUrlOf);
  }

  // What was committed is all there, through the balancer, byte for byte.
  const exported = await request(nginxPort, 'GET', `/api/v1/media/${kept}/content`, { token });
  assert.equal(exported.status, 200, exported.text);
  assert.ok(exported.body.equals(small), 'committed media changed');
  const application = await request(nginxPort, 'GET', `/api/v1/applications/${keptApp}`, { token });
  assert.equal(application.status, 200, application.text);
  assert.equal(application.json().state, 'ready', application.text);
  assert.equal(application.json().release_id, published.json().release_id, application.text);
  // The cut upload is simply done again, through the balancer.
  const again = await request(nginxPort, 'POST', '/api/v1/applications', {
    token,
    key: randomKey(),
    headers: large.headers,
    body: large.archive,
  });
  assert.equal(again.status, 202, again.text);
  await waitForOperation(token, again.json().operation_id);
}

/** Streams `body` to `replica` and SIGKILLs it half-way; resolves -1 when the request got no answer. */
function cutOff(
  replica: Replica,
  method: string,
  pathname: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<number> {
  return new Promise<number>((resolve) => {
    const req = http.request({
      host: '127.0.0.1',
      port: replica.port,
      method,
      path: pathname,
      headers: { ...headers, host, 'content-length': String(body.length) },
    });
    req.on('error', () => resolve(-1));
    req.on('response', (res) => resolve(res.statusCode ?? 0));
    let sent = 0;
    const step = 256 * 1024;
    const pump = () => {
      if (sent >= body.length / 2) {
        replica.child!.kill('SIGKILL');
        return;
      }
      req.write(body.subarray(sent, sent + step), () => setTimeout(pump, 5));
      sent += step;
    };
    pump();
  });
}

/** A built application of an index page and `bytes` of incompressible data. */
async function packedApplication(bytes: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-replica-app-'));
  try {
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>replicas</title><p>replicas</p>');
    fs.writeFileSync(path.join(dir, 'data.bin'), crypto.randomBytes(bytes));
    return await packApplication(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- media ----------------------------------------------------------------------------------

interface Declaration {
  id: string;
  upload_url: string;
  method: string;
  headers: Record<string, string>;
  operation: { id: string };
}

async function pngOf(width: number, height: number): Promise<Buffer> {
  const raw = crypto.randomBytes(width * height * 3);
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

async function declare(port: number, token: string, bytes: Buffer): Promise<Declaration> {
  const res = await request(port, 'POST', '/api/v1/media/uploads', {
    token,
    key: randomKey(),
    json: { filename: 'upload.png', content_type: 'image/png', bytes: bytes.length, sha256: sha256(bytes) },
  });
  assert.equal(res.status, 201, res.text);
  return res.json();
}

async function commitAndWait(port: number, token: string, declared: Declaration, bytes: Buffer): Promise<string> {
  const committed = await request(port, 'POST', `/api/v1/media/uploads/${declared.id}/commit`, {
    token,
    key: randomKey(),
    json: { content_type: 'image/png', bytes: bytes.length, sha256: sha256(bytes) },
  });
  assert.equal(committed.status, 202, committed.text);
  for (let i = 0; i < 600; i++) {
    const op = (await request(nginxPort, 'GET', `/api/v1/operations/${declared.operation.id}`, { token })).json();
    if (op.state === 'succeeded') return op.result.media_id;
    assert.ok(op.state !== 'failed' && op.state !== 'cancelled', JSON.stringify(op));
    await sleep(50);
  }
  throw new Error('the media operation did not finish');
}

async function uploadAll(port: number, token: string, bytes: Buffer): Promise<string> {
  const declared = await declare(port, token, bytes);
  const target = new URL(declared.upload_url);
  // The signed PUT goes where it names: the bucket, or (blobs in a directory) the service.
  const put =
    target.host === host
      ? await request(port, declared.method, target.pathname + target.search, {
          headers: declared.headers,
          body: bytes,
        })
      : await fetch(target, { method: declared.method, headers: declared.headers, body: new Uint8Array(bytes) }).then(
          async (res) => ({
            status: res.status,
            text: await res.text(),
          }),
        );
  assert.equal(put.status, 200, put.text);
  return commitAndWait(port, token, declared, bytes);
}

async function waitForOperation(token: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 600; i++) {
    const op = (await request(nginxPort, 'GET', `/api/v1/operations/${id}`, { token })).json();
    if (op.state === 'succeeded') return op.result;
    assert.ok(op.state !== 'failed' && op.state !== 'cancelled', JSON.stringify(op));
    await sleep(50);
  }
  throw new Error(`operation ${id} did not finish`);
}

// ---- accounts and screens ---------------------------------------------------------------------

async function enroll(port: number): Promise<{ token: string }> {
  const res = await request(port, 'POST', '/api/v1/enrollments', {
    json: { client_id: clientId(), email: `owner-${randomKey()}@example.com` },
    key: randomKey(),
  });
  newEnrollments += 1;
  assert.equal(res.status, 201, res.text);
  return { token: res.json().token };
}

/**
 * A project for the later checks, once the balancer's address spent its enrollment budget: straight
 * to a replica, as another client address (the replicas trust loopback as their proxy).
 */
async function enrollDirect(port: number): Promise<{ token: string }> {
  const res = await request(port, 'POST', '/api/v1/enrollments', {
    json: { client_id: clientId(), email: `owner-${randomKey()}@example.com` },
    key: randomKey(),
    headers: { 'x-forwarded-for': `10.77.${crypto.randomInt(250)}.${crypto.randomInt(250)}` },
  });
  assert.equal(res.status, 201, res.text);
  return { token: res.json().token };
}

async function pendingScreen(port: number, token: string): Promise<string> {
  const started = await request(port, 'POST', '/runtime/v1/pairing-sessions', {});
  assert.equal(started.status, 201, started.text);
  const claim = await request(port, 'POST', '/api/v1/screens/pair', {
    token,
    key: randomKey(),
    json: { code: started.json().code },
  });
  assert.equal(claim.status, 201, claim.text);
  return claim.json().screen.id;
}

// ---- processes --------------------------------------------------------------------------------

let databaseUrlOf = '';

async function startPostgres(): Promise<string> {
  const port = String(await freePort());
  const env = execFileSync(CLUSTER, ['start', port], { encoding: 'utf8' });
  const admin = /MARQUEE_TEST_DATABASE_URL=(\S+)/.exec(env)![1]!;
  const dir = /MARQUEE_TEST_PG_DIR=(\S+)/.exec(env)![1]!;
  cleanups.push(() => void execFileSync(CLUSTER, ['stop', dir]));
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE marquee TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
  await client.end();
  const url = new URL(admin);
  url.pathname = '/marquee';
  databaseUrlOf = url.toString();
  return databaseUrlOf;
}

async function startReplica(replica: Replica, databaseUrl: string): Promise<void> {
  const origin = `http://localhost:${nginxPort}`;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'server/main.ts')], {
    cwd: repo,
    env: {
      ...process.env,
      PORT: String(replica.port),
      MARQUEE_BIND: '127.0.0.1',
      MARQUEE_DATA_DIR: replica.dataDir,
      MARQUEE_DATABASE_URL: databaseUrl,
      MARQUEE_SECRET: 'replica-test-secret-0123456789-0123456789',
      MARQUEE_CONTROL_ORIGIN: origin,
      MARQUEE_PLAY_ORIGIN: origin,
      MARQUEE_RELEASE_ORIGIN: `http://{label}.release.localhost:${nginxPort}`,
      MARQUEE_ENROLLMENTS_PER_IP_PER_HOUR: String(ENROLL_LIMIT),
      MARQUEE_TRUSTED_PROXIES: '127.0.0.1',
      MARQUEE_LOG_LEVEL: 'warn',
      ...blobEnvironment,
    },
    stdio: ['ignore', fs.openSync(replica.log, 'a'), fs.openSync(replica.log, 'a')],
  });
  replica.child = child;
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  let last = '';
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null)
      throw new Error(`replica ${replica.name} exited: ${fs.readFileSync(replica.log, 'utf8')}`);
    const ready = await request(replica.port, 'GET', '/.ready', {}).catch((error) => ({
      status: 0,
      text: String(error),
    }));
    if (ready.status === 200) return;
    last = `${ready.status} ${ready.text}`;
    await sleep(100);
  }
  throw new Error(`replica ${replica.name} did not become ready: ${last}\n${fs.readFileSync(replica.log, 'utf8')}`);
}

async function startNginx(work: string, replicas: Replica[]): Promise<void> {
  const prefix = path.join(work, 'nginx');
  const nginx = await startLoopbackNginx(prefix, nginxConfig(prefix, replicas), nginxPort);
  cleanups.push(() => nginx.stop());
}

/** The deployment's nginx configuration (docs/operations.md), on loopback with a temporary prefix. */
function nginxConfig(prefix: string, replicas: Replica[]): string {
  return loopbackNginxConfig(
    prefix,
    `  upstream marquee {
${replicas.map((r) => `    server 127.0.0.1:${r.port} max_fails=1 fail_timeout=2s;`).join('\n')}
    keepalive 16;
    keepalive_timeout 4s;
  }
  server {
    listen 127.0.0.1:${nginxPort};
    client_max_body_size 0;
    location / {
      proxy_pass http://marquee;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      add_header X-Upstream $upstream_addr always;
    }
  }`,
    256,
  );
}

// ---- HTTP -------------------------------------------------------------------------------------

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json(): any;
}

function request(
  port: number,
  method: string,
  pathname: string,
  options: { token?: string; json?: unknown; body?: Buffer; key?: string; headers?: Record<string, string> },
): Promise<Answer> {
  const headers: Record<string, string> = { host, ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  let body = options.body;
  if (options.json !== undefined) {
    body = Buffer.from(JSON.stringify(options.json));
    headers['content-type'] = 'application/json';
  }
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const data = Buffer.concat(chunks);
        const text = data.toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: data, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function openStream(port: number, pathname: string, token: string) {
  const frames: { type: string }[] = [];
  let waiters: (() => void)[] = [];
  let buffer = '';
  const req = http.get({
    host: '127.0.0.1',
    port,
    path: pathname,
    headers: { host, authorization: `Bearer ${token}`, accept: 'text/event-stream' },
  });
  req.on('response', (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        if (data) frames.push(JSON.parse(data));
      }
      for (const w of waiters) w();
    });
  });
  req.on('error', () => {});
  return {
    waitFor(predicate: (f: { type: string }[]) => boolean, timeoutMs = 10_000): Promise<void> {
      if (predicate(frames)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`stream: timed out; saw ${frames.map((f) => f.type).join(', ')}`)),
          timeoutMs,
        );
        const check = () => {
          if (!predicate(frames)) return;
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== check);
          resolve();
        };
        waiters.push(check);
      });
    },
    close: () => req.destroy(),
  };
}

// ---- small helpers ----------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const randomKey = () => crypto.randomBytes(16).toString('base64url');
const clientId = () => `cli_${crypto.randomBytes(32).toString('base64url')}`;
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // best effort
    }
  }
}

main().then(
  async () => {
    await cleanUp();
    process.exit(0);
  },
  async (error) => {
    console.error('replica test FAILED:', error);
    await cleanUp();
    process.exit(1);
  },
);
