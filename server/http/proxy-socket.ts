// The Unix socket a reverse proxy on the same machine reaches Marquee through (MARQUEE_PROXY_SOCKET,
// D-389). Its connections join the HTTP server as if accepted on the TCP port, marked as the
// trusted proxy's: the socket file's permissions decide who may connect, so no address list is
// needed, and no trusted TCP address other local users could connect from. (It is no faster than
// loopback TCP: D-390 measured the same CPU per offloaded range over both.)
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ConfigError } from '../config';
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
  const directory = path.dirname(socketPath);
  if (!fs.statSync(directory, { throwIfNoEntry: false })?.isDirectory())
    throw new ConfigError(`MARQUEE_PROXY_SOCKET: the directory ${directory} does not exist`);
  await clearStaleSocket(socketPath);
  const proxy = net.createServer((socket) => {
    markProxySocket(socket);
    server.emit('connection', socket);
  });
  // Bound in a directory of its own that only this process may enter, given its mode there, then
  // renamed onto the path: nobody can connect before the mode is set (whatever the umask), and no
  // one can swap the file the mode is given to.
  const staging = fs.mkdtempSync(path.join(directory, '.mq-'));
  const staged = path.join(staging, 's');
  try {
    await new Promise<void>((resolve, reject) => {
      proxy.once('error', reject);
      proxy.listen(staged, () => {
        proxy.off('error', reject);
        resolve();
      });
    });
    fs.chmodSync(staged, mode);
    fs.renameSync(staged, socketPath);
  } catch (error) {
    if (proxy.listening) await new Promise((resolve) => proxy.close(resolve));
    throw error;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
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
 * Stops accepting on the proxy socket and removes its file at `socketPath` (where listenForProxy
 * moved it: the server's own address is the staging path it was bound at); resolves once the
 * connections it accepted have closed as well (stop() closes them with the TCP port's).
 */
export function closeProxySocket(proxy: net.Server, socketPath: string): Promise<void> {
  const closed = new Promise<void>((resolve) => proxy.close(() => resolve()));
  fs.rmSync(socketPath, { force: true });
  return closed;
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
    throw new ConfigError(
      `MARQUEE_PROXY_SOCKET: ${socketPath} exists and is not a socket; remove it or choose another path`,
    );
  const refusal = await connectionRefusal(socketPath);
  if (refusal === undefined)
    throw new ConfigError(
      `MARQUEE_PROXY_SOCKET: ${socketPath} is in use by another process (another Marquee on this machine?)`,
    );
  // Only a refused connection says nobody listens: a full backlog (EAGAIN) or a socket we may not
  // open (EACCES) belongs to a live process.
  if (refusal !== 'ECONNREFUSED' && refusal !== 'ENOENT')
    throw new ConfigError(
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
