// A loopback nginx for tests, benches and the replica test (Debian's binary, a temporary prefix, one
// worker in the foreground): the fixed part of its configuration, the offload location exactly as
// docs/operations.md gives it, and a start that waits until the port accepts connections.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

export const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';
export const hasNginx = fs.existsSync(NGINX);

/**
 * A whole nginx.conf whose logs, pid and temp files stay under `prefix`, with `http` holding `body`
 * (upstreams and servers). Started as root, nginx runs its worker as nobody.
 */
export function loopbackNginxConfig(prefix: string, body: string, workerConnections = 1024): string {
  return `worker_processes 1;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections ${workerConnections}; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
${body}
}
`;
}

/** The internal offload location of docs/operations.md ("Media through nginx"), for this blob directory. */
export function operationsAccelLocation(blobs: string): string {
  const operations = fs.readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const location = /# accel-location-begin\n([\s\S]*?)# accel-location-end/.exec(operations);
  if (!location) throw new Error('docs/operations.md has no accel location block');
  return location[1]!.replace('/var/lib/marquee/blobs/', `${blobs}/`);
}

/** Writes `config` under `prefix`, starts nginx on it and resolves once `port` accepts connections. */
export async function startNginx(prefix: string, config: string, port: number): Promise<{ stop(): Promise<void> }> {
  fs.mkdirSync(prefix, { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(conf, config);
  const errorLog = path.join(prefix, 'error.log');
  const child = spawn(NGINX, ['-p', prefix, '-e', errorLog, '-c', conf], { stdio: 'ignore' });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) {
      const log = fs.existsSync(errorLog) ? fs.readFileSync(errorLog, 'utf8') : '';
      throw new Error(`nginx exited with ${child.exitCode}: ${log}`);
    }
    if (await canConnect(port)) return { stop };
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`nginx did not listen on ${port}`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** The offload prefix and the address nginx connects from (the only trusted proxy) in offload tests. */
export const ACCEL_PREFIX = '/_marquee_blobs/';
export const ACCEL_PROXY_ADDRESS = '127.0.0.2';

/** The upstream block of docs/operations.md (nginx reaching Marquee over its proxy socket), on this socket. */
export function operationsSocketUpstream(socketPath: string): string {
  const operations = fs.readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const block = /# proxy-upstream-begin\n([\s\S]*?)# proxy-upstream-end/.exec(operations);
  if (!block) throw new Error('docs/operations.md has no proxy upstream block');
  return block[1]!.replace('/run/marquee/proxy.sock', socketPath);
}

/**
 * The server block of docs/operations.md ("Media through nginx") on loopback: nginx on `nginxPort`
 * proxies to Marquee, on its port from ACCEL_PROXY_ADDRESS or over its proxy socket with the
 * documented upstream block, and serves `blobs` from the internal location. Started as root, nginx
 * reads files and connects as its worker user (nobody): the data dir and the blob directories are
 * opened to it.
 */
export function accelProxyConfig(
  prefix: string,
  nginxPort: number,
  marquee: number | { socketPath: string },
  dataDir: string,
): string {
  const blobs = path.join(dataDir, 'blobs');
  for (const dir of [dataDir, blobs, ...fs.readdirSync(blobs).map((d) => path.join(blobs, d))])
    if (fs.statSync(dir).isDirectory()) fs.chmodSync(dir, 0o755);
  const [upstream, pass] =
    typeof marquee === 'number'
      ? ['', `proxy_pass http://127.0.0.1:${marquee};\n      proxy_bind ${ACCEL_PROXY_ADDRESS};`]
      : [operationsSocketUpstream(marquee.socketPath), 'proxy_pass http://marquee;'];
  return loopbackNginxConfig(
    prefix,
    `${upstream}  server {
    listen 127.0.0.1:${nginxPort};
    location / {
      ${pass}
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
${operationsAccelLocation(blobs)}
  }`,
    64,
  );
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A plain GET on a loopback port with exactly these headers, its whole body read. */
export function rawGet(port: number, pathname: string, headers: Record<string, string>): Promise<RawAnswer> {
  return rawRequest({ port }, 'GET', pathname, headers);
}

/** A request to a TCP port on 127.0.0.1 or to a Unix socket, with the answer's raw headers and bytes. */
export function rawRequest(
  to: { port: number } | { socketPath: string },
  method: string,
  pathname: string,
  headers: Record<string, string>,
  body?: string,
  agent?: http.Agent,
): Promise<RawAnswer> {
  const where = 'port' in to ? { host: '127.0.0.1', port: to.port } : { socketPath: to.socketPath };
  return new Promise((resolve, reject) => {
    const req = http.request({ ...where, method, path: pathname, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
