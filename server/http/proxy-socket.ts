// The Unix socket a reverse proxy on the same machine reaches Marquee through (MARQUEE_PROXY_SOCKET,
// D-389). Its connections join the HTTP server as if accepted on the TCP port, marked as the
// trusted proxy's: the socket file's permissions decide who may connect, so no address list is
// needed. Over loopback TCP each request and answer crosses the kernel's TCP stack on both ends;
// a Unix socket costs both processes less, and offloaded media ranges are little else.
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import type { Logger } from '../logger';
import { markProxySocket } from './trusted-proxies';

/**
 * Listens on `socketPath` with permissions `mode`, handing each connection to `server`. A socket
 * file left by a process that is gone is replaced; a live one, or another kind of file, is an error.
 */
export async function listenForProxy(
  server: http.Server,
  socketPath: string,
  mode: number,
  logger: Logger,
): Promise<net.Server> {
  await clearStaleSocket(socketPath);
  const proxy = net.createServer((socket) => {
    markProxySocket(socket);
    server.emit('connection', socket);
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    // The file is made with these permissions (binding is synchronous), not widened for a moment.
    const umask = process.umask(~mode & 0o777);
    try {
      proxy.listen(socketPath, () => {
        proxy.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  fs.chmodSync(socketPath, mode);
  proxy.on('error', (err) => logger.error({ err }, 'proxy socket: accepting a connection failed'));
  return proxy;
}

/** Stops accepting on the proxy socket and removes its file (connections already open stay with the HTTP server). */
export function closeProxySocket(proxy: net.Server): Promise<void> {
  return new Promise((resolve) => proxy.close(() => resolve()));
}

async function clearStaleSocket(socketPath: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (!stat.isSocket())
    throw new Error(`MARQUEE_PROXY_SOCKET: ${socketPath} exists and is not a socket; remove it or choose another path`);
  if (await answers(socketPath))
    throw new Error(
      `MARQUEE_PROXY_SOCKET: ${socketPath} is in use by another process (another Marquee on this machine?)`,
    );
  fs.unlinkSync(socketPath);
}

/** Whether a process accepts connections on this socket file. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
