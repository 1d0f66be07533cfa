// The Unix socket a reverse proxy on the same machine reaches Marquee through (MARQUEE_PROXY_SOCKET,
// D-389). Its connections join the HTTP server as if accepted on the TCP port, marked as the
// trusted proxy's: the socket file's permissions decide who may connect, so no address list is
// needed, and no TCP port other local users could reach. (It is no faster than loopback TCP:
// D-390 measured the same CPU per offloaded range over both.)
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import type { Logger } from '../logger';
import { markProxySocket } from './trusted-proxies';

/**
 * Listens on `socketPath` with permissions `mode`, handing each connection to `server`. A socket
 * file left by a process that is gone is replaced; a live one, or another kind of file, is an
 * error. The directory is what protects the socket (D-389): keep it writable by Marquee alone.
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
    proxy.listen(socketPath, () => {
      proxy.off('error', reject);
      resolve();
    });
  });
  try {
    // Made under the process umask (022 by default: nobody else may connect), then given its mode,
    // unless something other than our socket took the path meanwhile (chmod follows symbolic links).
    if (!fs.lstatSync(socketPath).isSocket())
      throw new Error(`MARQUEE_PROXY_SOCKET: ${socketPath} was replaced while Marquee bound it`);
    fs.chmodSync(socketPath, mode);
  } catch (error) {
    await closeProxySocket(proxy);
    throw error;
  }
  if ((mode & 0o002) !== 0)
    logger.warn(
      { mode: mode.toString(8) },
      'proxy socket: every local user may connect to it and act as the trusted proxy (MARQUEE_PROXY_SOCKET_MODE)',
    );
  proxy.on('error', (err) => logger.error({ err }, 'proxy socket: accepting a connection failed'));
  return proxy;
}

/**
 * Stops accepting on the proxy socket and removes its file; resolves once the connections it
 * accepted have closed as well (the HTTP server's drain closes them).
 */
export function closeProxySocket(proxy: net.Server): Promise<void> {
  return new Promise((resolve) => proxy.close(() => resolve()));
}

/**
 * Removes a socket file nobody accepts connections on (a Marquee that was killed). Two processes
 * started on one path at the same moment could both find it stale: one path is one instance's.
 */
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
  const refusal = await connectionRefusal(socketPath);
  if (refusal === undefined)
    throw new Error(
      `MARQUEE_PROXY_SOCKET: ${socketPath} is in use by another process (another Marquee on this machine?)`,
    );
  // Only a refused connection says nobody listens: a full backlog (EAGAIN) or a socket we may not
  // open (EACCES) belongs to a live process.
  if (refusal !== 'ECONNREFUSED' && refusal !== 'ENOENT')
    throw new Error(
      `MARQUEE_PROXY_SOCKET: ${socketPath} may be in use by another process (connecting to it: ${refusal})`,
    );
  fs.rmSync(socketPath, { force: true });
}

/** Connects to the socket file: undefined when a process accepts, otherwise the error's code. */
function connectionRefusal(socketPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(undefined);
    });
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'unknown'));
  });
}
