// MARQUEE_PROXY_SOCKET (D-389): a Unix socket whose connections are the trusted proxy's, beside the
// TCP port; and behind Debian's nginx with the upstream docs/operations.md gives.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer } from '../app';
import { TestClock } from '../clock';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../logger';
import { uploadReady, video } from '../media/media.fixtures';
import { capturedLogs } from '../testing/captured-logs';
import { clientId, freePort, randomKey, TestServer } from '../testing/harness';
import { ACCEL_PREFIX, accelProxyConfig, hasNginx, rawGet, rawRequest, startNginx } from '../testing/nginx';
import { closeProxySocket, listenForProxy } from './proxy-socket';
import { tempDirs } from '../testing/temp-dirs';

const silent = createLogger('silent');
const tempDir = tempDirs('sock');

/** A request over the Unix socket at `socketPath`, on `agent`'s connections when given. */
const overSocket = (
  socketPath: string,
  method: string,
  pathname: string,
  headers: Record<string, string>,
  body?: string,
  agent?: http.Agent,
) => rawRequest({ socketPath }, method, pathname, headers, body, agent);

function listening(socketPath: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer((c) => c.end()).listen(socketPath, () => resolve(s));
    s.once('error', reject);
  });
}

describe('the proxy socket beside the TCP port', () => {
  let server: TestServer;
  let socketPath: string;
  let token: string;
  let media: { id: string };
  let bytes: Buffer;

  beforeAll(async () => {
    socketPath = path.join(tempDir(), 'proxy.sock');
    server = await TestServer.start({
      clock: new TestClock('2026-11-21T12:00:00Z'),
      config: {
        proxySocket: socketPath,
        proxySocketMode: 0o600,
        accelRedirect: ACCEL_PREFIX,
        maxConnectionsPerIp: 1,
        // One enrollment per client address: the test's own, over TCP, uses 127.0.0.1's.
        enrollmentsPerIpPerHour: 1,
      },
    });
    ({ token } = await server.enroll());
    bytes = await video('mp4', { seconds: 1 });
    media = await uploadReady(server, token, bytes, 'video/mp4');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is made with the configured permissions, and serves every plane as the TCP port does', async () => {
    const stat = fs.lstatSync(socketPath);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    const ready = await overSocket(socketPath, 'GET', '/.ready', { host: server.host });
    expect(ready.status).toBe(200);
    const screens = await overSocket(socketPath, 'GET', '/api/v1/screens', {
      host: server.host,
      authorization: `Bearer ${token}`,
    });
    expect(screens.status).toBe(200);
    expect(JSON.parse(screens.body.toString()).items).toEqual([]);
  });

  it('counts as the trusted proxy: X-Forwarded-For names the client of every per-IP budget', async () => {
    const enroll = (forwardedFor: string) =>
      overSocket(
        socketPath,
        'POST',
        '/api/v1/enrollments',
        {
          host: server.host,
          'content-type': 'application/json',
          'idempotency-key': randomKey(),
          'x-forwarded-for': forwardedFor,
        },
        JSON.stringify({ client_id: clientId(), email: `o-${randomKey()}@example.com` }),
      );
    expect((await enroll('198.51.100.1')).status).toBe(201);
    const second = await enroll('198.51.100.1');
    expect(second.status).toBe(429);
    expect(JSON.parse(second.body.toString()).code).toBe('rate_limited');
    // Another client behind the same proxy has a budget of its own.
    expect((await enroll('198.51.100.2')).status).toBe(201);
    // The TCP peer is no proxy (MARQUEE_TRUSTED_PROXIES is empty): its header names nobody.
    const direct = await server.request('POST', '/api/v1/enrollments', {
      json: { client_id: clientId(), email: `o-${randomKey()}@example.com` },
      idempotencyKey: randomKey(),
      headers: { 'x-forwarded-for': '198.51.100.3' },
    });
    expect(direct.status).toBe(429);
  });

  it('gets the X-Accel-Redirect offload; a client on the TCP port gets the bytes', async () => {
    const pathname = `/api/v1/media/${media.id}/content`;
    const headers = { host: server.host, authorization: `Bearer ${token}`, range: 'bytes=0-99' };
    const proxied = await overSocket(socketPath, 'GET', pathname, headers);
    expect(proxied.status).toBe(200);
    expect(proxied.headers['x-accel-redirect']).toMatch(new RegExp(`^${ACCEL_PREFIX}.+`));
    expect(proxied.body.length).toBe(0);
    const direct = await rawGet(server.port, pathname, headers);
    expect(direct.status).toBe(206);
    expect(direct.headers['x-accel-redirect']).toBeUndefined();
    expect(direct.body.equals(bytes.subarray(0, 100))).toBe(true);
  });

  it('is not held to the per-address connection cap, which still holds on the TCP port', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 3 });
    try {
      const answers = await Promise.all(
        [1, 2, 3].map(() => overSocket(socketPath, 'GET', '/.health', { host: server.host }, undefined, agent)),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      const open = Object.values(agent.freeSockets).flat().length + Object.values(agent.sockets).flat().length;
      expect(open).toBe(3);
    } finally {
      agent.destroy();
    }
    const tcp = new http.Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const answers = await Promise.all(
        [1, 2].map(
          () =>
            new Promise<number>((resolve, reject) =>
              http
                .get({ host: '127.0.0.1', port: server.port, path: '/.health', agent: tcp }, (res) => {
                  res.resume();
                  resolve(res.statusCode!);
                })
                .on('error', reject),
            ),
        ),
      );
      // (the earlier tests' keep-alive connections may hold the one place already)
      expect(answers).toContain(429);
    } finally {
      tcp.destroy();
    }
  });
});

describe('starting and stopping on the proxy socket', () => {
  const open: net.Server[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await new Promise((r) => s.close(r));
  });

  it('replaces a socket file nobody listens on', async () => {
    const dir = tempDir();
    const socketPath = path.join(dir, 'proxy.sock');
    // A listener whose file was moved away leaves it behind when it closes: a stale socket file.
    const gone = await listening(path.join(dir, 'old.sock'));
    fs.renameSync(path.join(dir, 'old.sock'), socketPath);
    await new Promise((r) => gone.close(r));
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true);

    const http1 = http.createServer((_req, res) => res.end('here'));
    const proxy = await listenForProxy(http1, socketPath, 0o660, silent);
    open.push(proxy);
    const answer = await overSocket(socketPath, 'GET', '/', { host: 'x' }, undefined, new http.Agent());
    expect(answer.body.toString()).toBe('here');
    expect(fs.lstatSync(socketPath).mode & 0o777).toBe(0o660);
    await closeProxySocket(open.pop()!, socketPath);
    expect(fs.existsSync(socketPath)).toBe(false);
  });

  it('is given its mode before it is at its path, whatever the umask, and leaves nothing else in the directory', async () => {
    const dir = tempDir();
    const socketPath = path.join(dir, 'proxy.sock');
    const chmods: { target: string; parentMode: number; atPath: boolean }[] = [];
    const realChmod = fs.chmodSync;
    const spy = vi.spyOn(fs, 'chmodSync').mockImplementation((target, mode) => {
      const t = String(target);
      chmods.push({
        target: t,
        parentMode: fs.statSync(path.dirname(t)).mode & 0o777,
        atPath: fs.existsSync(socketPath),
      });
      realChmod(target, mode);
    });
    const umask = process.umask(0);
    try {
      open.push(await listenForProxy(http.createServer(), socketPath, 0o600, silent));
    } finally {
      process.umask(umask);
      spy.mockRestore();
    }
    // Given its mode in a directory only this process may enter, before anything was at the path.
    expect(chmods).toHaveLength(1);
    expect(chmods[0]!.target).not.toBe(socketPath);
    expect(chmods[0]!.parentMode).toBe(0o700);
    expect(chmods[0]!.atPath).toBe(false);
    expect(fs.lstatSync(socketPath).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['proxy.sock']);
  });

  it('names a missing directory as such', async () => {
    const missing = path.join(tempDir(), 'missing', 'proxy.sock');
    await expect(listenForProxy(http.createServer(), missing, 0o660, silent)).rejects.toThrow(
      /directory .*missing does not exist/,
    );
  });

  it('warns when every local user may connect', async () => {
    const { lines, logger } = capturedLogs();
    const dir = tempDir();
    const private660 = await listenForProxy(http.createServer(), path.join(dir, 'a.sock'), 0o660, logger);
    open.push(private660);
    expect(lines.join('')).not.toContain('every local user');
    const open666 = await listenForProxy(http.createServer(), path.join(dir, 'b.sock'), 0o666, logger);
    open.push(open666);
    expect(fs.lstatSync(path.join(dir, 'b.sock')).mode & 0o777).toBe(0o666);
    expect(lines.join('')).toContain('every local user may connect');
  });

  it('refuses a socket another process listens on, and a file that is no socket', async () => {
    const dir = tempDir();
    const live = path.join(dir, 'live.sock');
    open.push(await listening(live));
    const http1 = http.createServer();
    await expect(listenForProxy(http1, live, 0o660, silent)).rejects.toThrow(/in use by another process/);
    expect(fs.lstatSync(live).isSocket()).toBe(true); // left alone

    const file = path.join(dir, 'notes.txt');
    fs.writeFileSync(file, 'keep me');
    await expect(listenForProxy(http1, file, 0o660, silent)).rejects.toThrow(/not a socket/);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');
  });

  it('a server refused its socket stops listening on its port; a stopped one closes the socket and its connections', async () => {
    const dir = tempDir();
    const live = path.join(dir, 'live.sock');
    open.push(await listening(live));
    const port = await freePort();
    const refused = await createServer({
      config: loadConfig({}, [], { port, bind: '127.0.0.1', dataDir: path.join(dir, 'data'), proxySocket: live }),
      logDestination: new Writable({ write: (_c, _e, done) => done() }) as never,
    });
    await expect(refused.listen()).rejects.toThrow(/in use/);
    // Nothing of it keeps running: its store is closed, and the TCP port was let go.
    await expect(refused.services.store.db.selectFrom('tenants').select('id').execute()).rejects.toThrow();
    await new Promise<void>((resolve, reject) => {
      const probe = net.createServer().listen(port, '127.0.0.1', () => probe.close(() => resolve()));
      probe.once('error', reject);
    });

    const socketPath = path.join(dir, 'proxy.sock');
    const server = await TestServer.start({ config: { proxySocket: socketPath } });
    const agent = new http.Agent({ keepAlive: true });
    expect((await overSocket(socketPath, 'GET', '/.health', { host: server.host }, undefined, agent)).status).toBe(200);
    const kept = Object.values(agent.freeSockets).flat()[0]!;
    const closed = new Promise((r) => kept.once('close', r));
    await server.stop();
    await closed;
    agent.destroy();
    expect(fs.existsSync(socketPath)).toBe(false);
  });

  it('takes an absolute path and octal permissions, and refuses anything else', () => {
    const config = loadConfig(
      { MARQUEE_PROXY_SOCKET: '/run/marquee/proxy.sock', MARQUEE_PROXY_SOCKET_MODE: '666' },
      [],
    );
    expect(config.proxySocket).toBe('/run/marquee/proxy.sock');
    expect(config.proxySocketMode).toBe(0o666);
    expect(loadConfig({}, []).proxySocket).toBeUndefined();
    expect(loadConfig({}, []).proxySocketMode).toBe(0o660);
    expect(() => loadConfig({ MARQUEE_PROXY_SOCKET: 'run/proxy.sock' }, [])).toThrow(ConfigError);
    expect(() => loadConfig({ MARQUEE_PROXY_SOCKET: `/${'x'.repeat(120)}` }, [])).toThrow(/100 bytes/);
    expect(() => loadConfig({ MARQUEE_PROXY_SOCKET_MODE: '0x1ff' }, [])).toThrow(/octal/);
    expect(() => loadConfig({ MARQUEE_PROXY_SOCKET_MODE: '888' }, [])).toThrow(/octal/);
  });
});

describe.skipIf(!hasNginx)('nginx reaching Marquee over the proxy socket', () => {
  let server: TestServer;
  let nginx: { stop(): Promise<void> } | undefined;
  let nginxPort = 0;
  let token = '';
  let media: { id: string };
  let bytes: Buffer;

  beforeAll(async () => {
    const dir = tempDir();
    // Started as root, nginx's worker is nobody: it must reach the socket and read the blobs.
    fs.chmodSync(dir, 0o755);
    const socketPath = path.join(dir, 'proxy.sock');
    server = await TestServer.start({
      clock: new TestClock('2026-11-21T12:00:00Z'),
      config: { proxySocket: socketPath, proxySocketMode: 0o666, accelRedirect: ACCEL_PREFIX },
    });
    ({ token } = await server.enroll());
    bytes = await video('mp4', { seconds: 1 });
    media = await uploadReady(server, token, bytes, 'video/mp4');
    nginxPort = await freePort();
    const prefix = path.join(dir, 'nginx');
    nginx = await startNginx(prefix, accelProxyConfig(prefix, nginxPort, { socketPath }, server.dataDir), nginxPort);
  });
  afterAll(async () => {
    await nginx?.stop();
    await server?.stop();
  });

  it('nginx sends the range Marquee authorized over the socket', async () => {
    const res = await rawGet(nginxPort, `/api/v1/media/${media.id}/content`, {
      host: server.host,
      authorization: `Bearer ${token}`,
      range: 'bytes=10-209',
    });
    expect(res.status).toBe(206);
    expect(res.body.equals(bytes.subarray(10, 210))).toBe(true);
    // nginx sent the file (Last-Modified is its own), under Marquee's headers.
    expect(res.headers['last-modified']).toBeDefined();
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(res.headers['x-accel-redirect']).toBeUndefined();
  });

  it('answers Marquee’s own problems through nginx', async () => {
    const res = await rawGet(nginxPort, `/api/v1/media/${media.id}/content`, { host: server.host });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toContain('application/problem+json');
  });
});
